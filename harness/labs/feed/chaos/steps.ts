// The feed lab's chaos schedules as data (./chaos.ts draws them, ./place.ts places them):
// the steps a schedule may hold, and the schedule kinds. Positions are plain numbers, taken
// modulo the script where they are placed, so any schedule a shrink reaches stays valid.

import { MALFORMED_FORMS } from '../scenario/schema.js';

export type HookAction = 'exit' | 'raise' | 'stop';
export type HookPoint = 'apply' | 'commit' | 'revoke' | 'snapshot';

export type Step =
  | { layer: 'cut'; at: number; blocks: number }
  | { layer: 'latency'; at: number; up: boolean; latency: number; jitter: number; ms: number }
  | { layer: 'slicer'; at: number; up: boolean; size: number; ms: number }
  | { layer: 'bandwidth'; at: number; rate: number; ms: number }
  | { layer: 'byte-limit'; at: number; up: boolean; bytes: number; ms: number }
  | { layer: 'reset'; at: number; up: boolean; ms: number }
  | { layer: 'half-open'; at: number; ms: number }
  | { layer: 'kill'; at: number }
  | { layer: 'pause'; at: number; ms: number }
  | { layer: 'hook'; action: HookAction; point: HookPoint; at: number }
  | { layer: 'resend'; at: number; count: number; connection: number }
  | { layer: 'malformed'; at: number; form: number; connection: number }
  | { layer: 'number-amount'; at: number; connection: number }
  | { layer: 'unknown-op'; at: number }
  | { layer: 'stall'; at: number; forever: boolean; ms: number; connection: number }
  | { layer: 'reorg'; at: number; depth: number; extra: number; away: boolean; awayAt: number; awayFor: number }
  | { layer: 'deep-reorg'; at: number; depth: number; extra: number }
  | { layer: 'stale-cursor'; at: number; retention: number; extra: number; quiet: boolean }
  | { layer: 'loss'; percent: number };

export type StreamSchedule = {
  steps: Step[];
  kind: 'stream';
  /** The chain's seed. */
  seed: number;
  /** Blocks the script mines after the initial ones (more when a stale-cursor cut needs them). */
  blocks: number;
  /** Index into TOPIC_SETS. */
  topics: number;
  /** Amounts over the whole uint256 range (else at most 48 bits, as in feed-happy-path). */
  bigAmounts: boolean;
  /** The server's ping_ms (real) in the usual link settings. */
  serverPing: number;
  /** expect.quiet_ping: after convergence the idle server pings, and the pong is required. */
  quietPing: boolean;
  /** A slow reader (sealed runs only): apply delay, a small queue limit, 4 KiB socket buffers. */
  slow: boolean;
};

export type FeedSchedule = StreamSchedule | { kind: 'bad-environment'; which: number } | { kind: 'storm'; seed: number };

/** The chain every stream schedule starts from, and the backoff every one gives its consumers (real ms). */
export const CHAIN = { initialBlocks: 10, confirmations: 3, blockIntervalMs: 2500 } as const;
export const BACKOFF = { baseMs: 100, capMs: 500 } as const;
/**
 * The slow reader: dense blocks on every account (a block every 100 ms of real time), an apply
 * delay, a small queue limit, 4 KiB socket buffers, and one second in which it reads nothing
 * (SIGSTOP). Its read-ahead (256 frames in the references) would otherwise take seconds of
 * backlog to fill before TCP pushes back and the server's queue overflows.
 */
export const SLOW = { timeScale: 0.04, logs: { min: 10, max: 14 }, applyDelayMs: 5, queueLimit: 20, stopMs: 1000 } as const;

/** The followed accounts (indexes) a stream schedule may draw: the catalogue's first. */
export const TOPIC_SETS: readonly (readonly number[])[] = [[0, 2, 3], [1, 4], [0], [2, 3, 5], [0, 1, 2, 3, 4, 5]];

export const MALFORMED = MALFORMED_FORMS;

/** Bad environments: variables set to values the contract calls invalid (null: left out). */
export const BAD_ENVIRONMENT: readonly { env: Record<string, string | null> }[] = [
  { env: { CHAOSLAB_PORT: 'not-a-port' } },
  { env: { CHAOSLAB_PORT: '0' } },
  { env: { CHAOSLAB_PORT: '65536' } },
  { env: { CHAOSLAB_PORT: null } },
  { env: { CHAOSLAB_TOPICS: '0x00000000000000000000000000000000000000A1' } },
  { env: { CHAOSLAB_TOPICS: '' } },
  { env: { CHAOSLAB_TOPICS: '0x00000000000000000000000000000000000000a1,0x00000000000000000000000000000000000000a1' } },
  { env: { CHAOSLAB_PING_MS: '0' } },
  { env: { CHAOSLAB_PING_MS: '1.5' } },
  { env: { CHAOSLAB_IDLE_MS: '2147483648' } },
  { env: { CHAOSLAB_IDLE_MS: '-1' } },
  { env: { CHAOSLAB_BACKOFF_BASE_MS: '500', CHAOSLAB_BACKOFF_CAP_MS: '200' } },
  { env: { CHAOSLAB_APPLY_DELAY_MS: '' } },
  { env: { CHAOSLAB_APPLY_DELAY_MS: '1e3' } },
  { env: { CHAOSLAB_FAULT: '' } },
  { env: { CHAOSLAB_FAULT: 'exit@apply:0' } },
  { env: { CHAOSLAB_FAULT: 'exit@apply:1,' } },
  { env: { CHAOSLAB_HOST: '' } },
  { env: { CHAOSLAB_DB: null } },
  { env: { CHAOSLAB_CLIENT_ID: null } },
];

/** The storm of test/fixtures/scenarios/feed-restart-storm-small.yaml: the backoff judged over 4 processes. */
export const STORM = { processes: 4, rounds: 2, roundMs: 8000, minAtCap: 4, baseMs: 250, capMs: 2000 } as const;

/** The connection a misbehaviour rule fires on: exactly that one, or the first from `from` on that is about to send its event. */
export type RuleConnection = number | { from: number };

/** A step placed on the script (./place.ts places them): positions resolved to blocks, events and connections. */
export type Placed =
  | { layer: 'cut'; from: number; to: number }
  | { layer: 'latency'; from: number; up: boolean; latency: number; jitter: number; ms: number }
  | { layer: 'slicer'; from: number; up: boolean; size: number; ms: number }
  | { layer: 'bandwidth'; from: number; rate: number; ms: number }
  | { layer: 'byte-limit'; from: number; up: boolean; bytes: number; ms: number }
  | { layer: 'reset'; from: number; up: boolean; ms: number }
  | { layer: 'half-open'; from: number; ms: number }
  | { layer: 'kill'; at: number }
  | { layer: 'pause'; from: number; ms: number }
  | { layer: 'hook'; item: string; madeStop: boolean }
  | { layer: 'resend'; event: number; cursor: string; count: number; connection: RuleConnection }
  | { layer: 'malformed'; event: number; cursor: string; form: (typeof MALFORMED)[number]; connection: RuleConnection }
  | { layer: 'number-amount'; event: number; cursor: string; connection: RuleConnection }
  | { layer: 'unknown-op'; event: number; cursor: string }
  | { layer: 'stall'; event: number; cursor: string; ms?: number; connection: RuleConnection }
  | { layer: 'reorg'; after: number; depth: number; length: number; away?: { from: number; to: number } }
  | { layer: 'deep-reorg'; after: number; depth: number; length: number }
  | { layer: 'stale-cursor'; retentionBlocks: number; from: number; to: number; quiet?: number }
  /** From the consumer's start, or (beside reorganisations) from before block `from`, until the run ends. */
  | { layer: 'loss'; percent: number; from?: number }
  | { layer: 'slow-reader'; from: number; ms: number };
