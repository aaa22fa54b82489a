// The feed lab's part of the run plan: every default filled, accounts and anchors resolved
// against the simulated chain, virtual durations turned into real ones.

import type { BadEnvironment } from '../../../judge/environment-duty.js';
import type { ClientPlan } from '../server/clients/schema.js';
import type { FeedMisbehaviour } from '../../../../publisher/feed/server/misbehaviour.js';

export interface ChainPlan {
  seed: number;
  chainId: number;
  accounts: number;
  confirmations: number;
  /** Virtual milliseconds between blocks. */
  blockIntervalMs: number;
  logsPerBlock: { min: number; max: number };
  approvalShare: number;
  /** Amounts have at most this many bits; unset: the whole uint256 range. */
  amountBits?: number;
  /** Blocks mined before the listeners open (1..initialBlocks). */
  initialBlocks: number;
  /** The script's last block: it mines initialBlocks+1 .. lastBlock (reorganisations may add more on their way). */
  lastBlock: number;
  retentionMs?: number;
  /** In the order they happen (by after_block, then file order). */
  reorgs: { afterBlock: number; depth: number; length: number; deep: boolean }[];
}

export interface FeedPlan {
  chain: ChainPlan;
  /** The followed accounts (CHAOSLAB_TOPICS), and their indexes into the chain's accounts. */
  topics: string[];
  topicIndexes: number[];
  server: {
    queueLimit: number;
    pingMs: number;
    idleMs: number;
    /** Anchored to cursors of the simulated chain. */
    misbehaviour: FeedMisbehaviour[];
    /** Each rule's anchor in the file's words, for the reports ("event 14", "block 30"). */
    anchors: string[];
  };
  consumer: {
    clientId: string;
    pingMs: number;
    idleMs: number;
    backoffBaseMs: number;
    backoffCapMs: number;
    applyDelayMs: number;
    processes: { fault?: string }[];
    restart: { max: number; delayMs: number };
    /** A bad environment (`consumer.env`, `consumer.unset`): the scenario grades the duty to exit 64 before connecting. */
    badEnvironment?: BadEnvironment;
  };
  time: {
    /** Virtual milliseconds the script runs. */
    durationMs: number;
    /** Real milliseconds between two blocks: block interval x time_scale. */
    blockPeriodMs: number;
    /** Real milliseconds of the whole script, confirmation blocks included. */
    scriptMs: number;
    convergeMs: number;
    startMs: number;
    /** Worst real round trip the scenario's latency toxics add (both directions, jitter included). */
    latencyMs: number;
  };
  /** quietPing: wait for a ping in a quiet moment after convergence, and its pong. */
  expect: { processes?: number; quietPing: boolean };
  /** A restart storm instead of the chain script (storm/run.ts). */
  storm?: StormPlan;
  /** The push server is the program under test (server/run.ts): the reference consumer is its probe. */
  serverUnderTest?: ServerUnderTestPlan;
}

export interface ServerUnderTestPlan {
  /** Its CHAOSLAB_FAULT, if any. */
  fault?: string;
  /** Script blocks committed while it is stopped by its own `stop@` hook. */
  blocksWhileStopped: number;
  pollMs: number;
  /** Clients the harness drives itself (server/clients/); none unless listed. */
  clients: ClientPlan[];
  /** Null-cursor subscribers of the harness's own, one every `everyMs` from the script's start (server/clients/crowds/subscribers.ts). */
  subscribers?: { count: number; everyMs: number };
  /** The server's RSS may grow at most this much above its first sample. */
  maxRssGrowthBytes?: number;
  /** Fan-out: light clients of the harness's own, through one shared proxy (server/clients/crowds/crowd.ts). */
  crowd?: number;
  /** The probe's and the crowd's p99 delivery lag may be at most this (real ms). */
  maxLagP99Ms?: number;
  /** Several instances, probes or steps (harness/labs/feed/server/scene/scene.ts); absent: one server, one probe. */
  scene?: ScenePlan;
}

export interface ScenePlan {
  instances: number;
  probes: { instance: number; store: 'empty' | 'other-chain' }[];
  steps: SceneStep[];
}

export type SceneAction =
  | { kind: 'kill' | 'sigterm' | 'start' | 'stop' | 'cont'; instance: number }
  | { kind: 'away' | 'back'; probe: number }
  | { kind: 'repoint'; probe: number; to: number };

export interface SceneStep {
  beforeBlock: number;
  action: SceneAction;
}

export interface StormPlan {
  processes: number;
  rounds: number;
  roundMs: number;
  /** The hard end of a round, for each process. */
  roundMaxMs: number;
  minAtCap: number;
  maxAttempts: number;
}
