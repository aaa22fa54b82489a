// The feed lab's part of a scenario file (JSON Schema): the simulated chain and its script, the
// push server, the consumer processes, how long the script runs and how long the stores may
// take to catch up. Joined with the core part by harness/scenario/schema.ts; the file's
// TypeScript type is derived from these objects, so schema and types cannot drift.
//
// Time: the chain's block interval, reorganisations and every nominal duration of the core
// (`faults[].start.at_ms`, `end.after_ms`) are virtual time; the core's `time_scale` turns them
// into real time (0.1: a 2.5 s block takes 250 ms). Heartbeats, idle timeouts, backoff, apply
// delays and the convergence wait are real milliseconds: they live on the real wire, next to
// the real latency Toxiproxy adds, and are never scaled.

import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { clientSchema } from '../server/clients/schema.js';

/** `<action>@<point>:<n>`, comma-separated, no spaces, n >= 1: the contract's CHAOSLAB_FAULT grammar (section 7). */
export const FAULT_ACTIONS = ['exit', 'raise', 'stop'] as const;
export const FAULT_POINTS = ['apply', 'commit', 'revoke', 'snapshot'] as const;
const FAULT_ITEM = `(${FAULT_ACTIONS.join('|')})@(${FAULT_POINTS.join('|')}):([1-9][0-9]*)`;
export const FAULT_PLAN_PATTERN = `^${FAULT_ITEM}(,${FAULT_ITEM})*$`;

export const MISBEHAVIOUR_ACTIONS = ['resend', 'malformed', 'number-amount', 'unknown-op', 'stall'] as const;
export const MALFORMED_FORMS = [
  'trailing-comma',
  'truncated',
  'unpadded-cursor',
  'other-chain',
  'missing-block-hash',
  'oversized',
  'noncanonical-amount',
] as const;

export const DEFAULTS = {
  chainId: 1,
  accounts: 6,
  confirmations: 3,
  blockIntervalMs: 12_000,
  logsPerBlock: { min: 0, max: 4 },
  approvalShare: 0.1,
  initialBlocks: 8,
  queueLimit: 1000,
  serverPingMs: 1000,
  serverIdleMs: 5000,
  clientId: 'c1',
  consumerPingMs: 2000,
  consumerIdleMs: 4000,
  backoffBaseMs: 100,
  backoffCapMs: 2000,
  applyDelayMs: 0,
  restartMax: 10,
  restartDelayMs: 0,
  convergeMs: 20_000,
  startMs: 20_000,
  resendCount: 3,
} as const;

export const LIMITS = {
  seed: { min: 0, max: 0xffff_ffff },
  chainId: { min: 0, max: 1_000_000_000 },
  accounts: { min: 2, max: 64 },
  confirmations: { min: 0, max: 64 },
  blockIntervalMs: { min: 1, max: 3_600_000 },
  logsPerBlock: { min: 0, max: 50 },
  initialBlocks: { min: 0, max: 10_000 },
  blocks: { min: 1, max: 10_000 },
  /** Real milliseconds on the wire (the contract's range for times is 1..2^31-1; these are sane bounds). */
  wireMs: { min: 1, max: 600_000 },
  queueLimit: { min: 1, max: 1_000_000 },
  processes: { min: 1, max: 100 },
  convergeMs: { min: 100, max: 600_000 },
} as const;

const integer = (min: number, max: number, description: string) => ({ type: 'integer', minimum: min, maximum: max, description }) as const;

const reorgSchema = {
  type: 'object',
  description: 'One scripted reorganisation: half a block interval after block `after_block` is mined, the last `depth` blocks are abandoned for a new branch.',
  additionalProperties: false,
  required: ['after_block', 'depth'],
  properties: {
    after_block: {
      type: 'integer',
      minimum: 1,
      description:
        'The block after which it happens; must be a block the script mines (above initial_blocks, at most the last block) and not skipped by an earlier reorg.',
    },
    depth: { type: 'integer', minimum: 1, maximum: 10_000, description: 'How many blocks at the head are abandoned; at most `confirmations` unless `deep`.' },
    length: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      description: 'Blocks on the new branch, at least `depth` (the head never moves back); default `depth`.',
    },
    deep: {
      type: 'boolean',
      description: 'A deep reorganisation: may reach at or below the safe height, i.e. into what snapshots were taken from. Default false.',
    },
  },
} as const satisfies JSONSchema;

const chainSchema = {
  type: 'object',
  description: 'The simulated chain (publisher/feed/chain/chain.ts): fully determined by its seed and this script.',
  additionalProperties: false,
  required: ['seed'],
  properties: {
    seed: integer(
      LIMITS.seed.min,
      LIMITS.seed.max,
      'Seed of the chain: accounts, genesis balances, every log and hash. The same seed gives the same chain on every machine.',
    ),
    chain_id: integer(LIMITS.chainId.min, LIMITS.chainId.max, `Chain id, the first part of every cursor; default ${DEFAULTS.chainId}.`),
    accounts: integer(
      LIMITS.accounts.min,
      LIMITS.accounts.max,
      `Accounts on the chain; default ${DEFAULTS.accounts}. Account 0 holds almost all of the 2^256-1 supply.`,
    ),
    confirmations: integer(
      LIMITS.confirmations.min,
      LIMITS.confirmations.max,
      `Blocks at or below head - confirmations are safe: snapshots are taken there, and only a deep reorganisation reaches them. Default ${DEFAULTS.confirmations}.`,
    ),
    block_interval_ms: integer(
      LIMITS.blockIntervalMs.min,
      LIMITS.blockIntervalMs.max,
      `Virtual milliseconds between two blocks (real time: multiplied by time_scale); default ${DEFAULTS.blockIntervalMs}.`,
    ),
    logs_per_block: {
      type: 'object',
      description: `Logs per block, drawn uniformly from min..max; default ${DEFAULTS.logsPerBlock.min}..${DEFAULTS.logsPerBlock.max}.`,
      additionalProperties: false,
      required: ['min', 'max'],
      properties: {
        min: integer(LIMITS.logsPerBlock.min, LIMITS.logsPerBlock.max, 'Fewest logs in a block; must be <= max.'),
        max: integer(LIMITS.logsPerBlock.min, LIMITS.logsPerBlock.max, 'Most logs in a block.'),
      },
    },
    approval_share: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: `Share of logs that are Approvals (they go into the activity list and change no balance); default ${DEFAULTS.approvalShare}.`,
    },
    amount_bits: integer(
      1,
      256,
      'Amounts of Transfers and Approvals have at most this many bits; default 256 (the whole uint256 range, far above 2^53 and 2^64). A limit changes the amounts drawn and, through the balances, who can send.',
    ),
    initial_blocks: integer(
      LIMITS.initialBlocks.min,
      LIMITS.initialBlocks.max,
      `Blocks mined before the listeners open: the history the first snapshots and replays see. Default ${DEFAULTS.initialBlocks}.`,
    ),
    retention_ms: {
      type: 'integer',
      minimum: 1,
      description:
        'The outbox deletes confirmed rows older than this much virtual time behind the head (a consumer behind them gets `reset stale-cursor`). Default: keep everything.',
    },
    reorgs: { type: 'array', maxItems: 100, items: reorgSchema, description: 'Scripted reorganisations, deep ones included; each happens once.' },
  },
} as const satisfies JSONSchema;

const timeSchema = {
  type: 'object',
  description:
    "How long the script runs and how long the stores may take to catch up. The script's virtual time is scaled into real time by the core's `time_scale`; every feed scenario's description says what its virtual time stands for.",
  additionalProperties: false,
  required: ['duration_ms'],
  properties: {
    duration_ms: {
      type: 'integer',
      minimum: 1,
      maximum: 100_000_000,
      description:
        'Virtual milliseconds the script runs once both consumers have subscribed: it mines duration_ms / block_interval_ms blocks after the initial ones (then `confirmations` empty blocks, so that its last block is safe).',
    },
    converge_ms: integer(
      LIMITS.convergeMs.min,
      LIMITS.convergeMs.max,
      `Real milliseconds both stores get, after the script's end, to reach the expected state; then both consumers get SIGTERM. Default ${DEFAULTS.convergeMs}.`,
    ),
    start_ms: integer(
      LIMITS.convergeMs.min,
      LIMITS.convergeMs.max,
      `Real milliseconds the script waits for the first subscribe of both consumers (in a server run: for the probe's snapshot) before it starts anyway; default ${DEFAULTS.startMs}.`,
    ),
  },
} as const satisfies JSONSchema;

const misbehaviourSchema = {
  type: 'object',
  description:
    'Deliberate server misbehaviour on one connection of the stream of the consumer under test, anchored to the event about to be sent (publisher/feed/server/misbehaviour.ts). Anchor with exactly one of `event` or `block`.',
  additionalProperties: false,
  required: ['action'],
  properties: {
    action: {
      type: 'string',
      enum: MISBEHAVIOUR_ACTIONS,
      description:
        'resend (at-least-once: first resend the `count` events before it), malformed (an invalid frame instead of it), number-amount (its amount as a JSON number instead of it; Transfers only), unknown-op (a frame of an unknown op before it), stall (nothing more is sent, for `ms` or for good).',
    },
    event: {
      type: 'integer',
      minimum: 1,
      description:
        'Anchor: the n-th event for the followed accounts the script produces after the initial blocks (1-based, in the order blocks are mined, abandoned branches included).',
    },
    block: {
      type: 'integer',
      minimum: 0,
      description: 'Anchor: the first event for the followed accounts produced in block `block` or later (after the initial blocks).',
    },
    connection: {
      type: 'integer',
      minimum: 1,
      description: 'Which connection of the stream (1-based, counting every connection the consumer opened); default 1.',
    },
    from_connection: {
      type: 'integer',
      minimum: 1,
      description:
        'Instead of `connection`: the first connection numbered this or more that is about to send the event (for a stream whose reconnects cannot be counted in advance).',
    },
    count: { type: 'integer', minimum: 1, maximum: 1000, description: `resend: how many earlier events are sent again; default ${DEFAULTS.resendCount}.` },
    form: { type: 'string', enum: MALFORMED_FORMS, description: 'malformed: how the frame is broken; default trailing-comma.' },
    ms: {
      type: 'integer',
      minimum: 1,
      maximum: LIMITS.wireMs.max,
      description: 'stall: real milliseconds of silence (not scaled); default: silent for good, connection kept open.',
    },
  },
  oneOf: [{ required: ['event'] }, { required: ['block'] }],
} as const satisfies JSONSchema;

/** The server contract's CHAOSLAB_FAULT grammar: `<exit|stop>@<snapshot|event|revoke>:<n>`, comma-separated. */
export const SERVER_FAULT_ITEM = '(exit|stop)@(snapshot|event|revoke):([1-9][0-9]*)';
export const SERVER_FAULT_PATTERN = `^${SERVER_FAULT_ITEM}(,${SERVER_FAULT_ITEM})*$`;

export const SERVER_UNDER_TEST_DEFAULTS = { blocksWhileStopped: 3, pollMs: 50, subscribeEveryMs: 50 } as const;
/** The most clients a crowd may hold (each is a socket of the harness and two of Toxiproxy's). */
export const CROWD_MAX = 2000;

/** A server scene's limits: server instances, probes, steps. */
export const SCENE_LIMITS = { instances: 4, probes: 8, steps: 40 } as const;

const sceneProbeSchema = {
  type: 'object',
  description: 'One probe: the reference consumer, through a line relay and a proxy of its own, subscribing to one server instance.',
  additionalProperties: false,
  properties: {
    instance: integer(1, SCENE_LIMITS.instances, 'The server instance its proxy leads to at the start; default 1.'),
    store: {
      type: 'string',
      enum: ['empty', 'other-chain'],
      description:
        '`empty` (the default): a new store, so its first subscribe carries a null cursor. `other-chain`: a store holding a cursor and block hash of another chain, so its first subscribe must be answered with `reset stale-cursor`.',
    },
  },
} as const satisfies JSONSchema;

const sceneStepSchema = {
  type: 'object',
  description:
    "One step of the scene, taken just before block `before_block` is mined; exactly one action: `kill` (SIGKILL an instance), `sigterm` (SIGTERM it: `reset shutdown` to every probe, exit 0 within 2 s), `start` (start a stopped instance again on its port and the same outbox), `stop`/`cont` (SIGSTOP an instance, SIGCONT it), `away`/`back` (a probe's proxy down/up), `repoint` with `to` (a probe's next connections go to another instance).",
  additionalProperties: false,
  required: ['before_block'],
  properties: {
    before_block: integer(1, 100_000, 'The step is taken just before this block of the script is mined.'),
    kill: integer(1, SCENE_LIMITS.instances, 'SIGKILL this server instance.'),
    sigterm: integer(1, SCENE_LIMITS.instances, 'SIGTERM this server instance.'),
    start: integer(1, SCENE_LIMITS.instances, 'Start this (killed or terminated) server instance again.'),
    stop: integer(1, SCENE_LIMITS.instances, 'SIGSTOP this server instance: it hangs, its connections open, until `cont`.'),
    cont: integer(1, SCENE_LIMITS.instances, 'SIGCONT this (stopped) server instance.'),
    away: integer(1, SCENE_LIMITS.probes, "This probe's proxy goes down: its connection is cut and it cannot reconnect."),
    back: integer(1, SCENE_LIMITS.probes, "This probe's proxy comes back."),
    repoint: integer(1, SCENE_LIMITS.probes, "This probe's next connections go to instance `to` (its relay leads them to that instance's proxy)."),
    to: integer(1, SCENE_LIMITS.instances, 'With `repoint`: the instance.'),
  },
} as const satisfies JSONSchema;

const underTestSchema = {
  type: 'object',
  description:
    "The push server is the program under test (`--server CMD`, default the reference server run as a process): it is started on the outbox the harness's indexer writes, under the server contract's environment, and the project's reference consumer is its probe, through a proxy of its own. `queue_limit`, `ping_ms` and `idle_ms` above are its CHAOSLAB_QUEUE_LIMIT, CHAOSLAB_PING_MS and CHAOSLAB_IDLE_MS; `consumer` gives the probe's topics and timings.",
  additionalProperties: false,
  properties: {
    fault: {
      type: 'string',
      pattern: SERVER_FAULT_PATTERN,
      description:
        'CHAOSLAB_FAULT of the server: <action>@<point>:<n>[,...], action exit|stop, point snapshot|event|revoke, n >= 1 (server contract section 6). Only `stop@` is run so far: while the server is stopped by its hook the harness commits `blocks_while_stopped` blocks, then sends SIGCONT.',
    },
    blocks_while_stopped: integer(
      1,
      100,
      `Script blocks the harness commits to the outbox while the server is stopped by its own \`stop@\` hook (each must hold events for the followed accounts); default ${SERVER_UNDER_TEST_DEFAULTS.blocksWhileStopped}.`,
    ),
    poll_ms: integer(
      LIMITS.wireMs.min,
      LIMITS.wireMs.max,
      `CHAOSLAB_POLL_MS, real ms: how often the server looks for outbox commits at least; default ${SERVER_UNDER_TEST_DEFAULTS.pollMs}.`,
    ),
    clients: {
      type: 'array',
      maxItems: 16,
      items: clientSchema,
      description:
        'Clients the harness drives itself besides the probe, each through its own proxy (slow, never reading, garbage, a 2 MiB line, half-open, pinging): server contract sections 4 and 5. Default none.',
    },
    subscribers: {
      type: 'object',
      description:
        "The statistical snapshot race (server contract section 3): `count` lightweight clients of the harness's own (raw TCP, all through one proxy, journaled on the wire as stream `client:sub-<n>`) subscribe with cursor null to the probe's topics, one every `every_ms` from the start of the script, and read as frames come, answering pings, until the run is over. Each must get a snapshot, then every later event of its accounts, in cursor order, none missing; a row committed after its subscribe that it never got is the race lost. Default none.",
      additionalProperties: false,
      required: ['count'],
      properties: {
        count: integer(1, 200, 'How many subscribers.'),
        every_ms: integer(
          1,
          60_000,
          `Real ms between one subscriber's subscribe and the next; default ${SERVER_UNDER_TEST_DEFAULTS.subscribeEveryMs}. The last must subscribe before the script is over.`,
        ),
      },
    },
    max_rss_growth_mib: integer(
      1,
      65_536,
      "The server's memory bound: the RSS of its process tree (sampled from /proc every 100 ms once it listens) may grow at most this many MiB above its first sample. Default: no bound (the samples are still reported).",
    ),
    crowd: integer(
      1,
      CROWD_MAX,
      "Fan-out: this many more clients, light ones in the harness's own process through one proxy they share (server/clients/crowds/crowd.ts). Each subscribes with cursor null, reads as frames come, answers pings and pings every idle_ms/3; each must get its snapshot and every event after it, in order, with no gap, no reset and no close. Their delivery lag is reported with the probe's. Default none.",
    ),
    max_lag_p99_ms: integer(
      1,
      600_000,
      "The bound on delivery lag (real ms from the harness's commit of a block to an event frame's arrival): the p99 of the probe's and of the crowd's may be at most this. Default: no bound (the lag is still reported).",
    ),
    instances: integer(1, SCENE_LIMITS.instances, 'Server processes started on the one outbox, each on its own port (instances 1..n); default 1.'),
    probes: {
      type: 'array',
      minItems: 1,
      maxItems: SCENE_LIMITS.probes,
      items: sceneProbeSchema,
      description: 'The probes (1..n, in this order); default one probe on instance 1 with an empty store.',
    },
    steps: {
      type: 'array',
      maxItems: SCENE_LIMITS.steps,
      items: sceneStepSchema,
      description: 'What the harness does to the servers and probes as the script runs, in block order.',
    },
  },
} as const satisfies JSONSchema;

const serverSchema = {
  type: 'object',
  description:
    'The push server (publisher/feed): both streams share these settings; misbehaviour hits the stream of the consumer under test only. With `under_test`, the server is the program under test instead, run as a process of its own.',
  additionalProperties: false,
  properties: {
    under_test: underTestSchema,
    queue_limit: integer(
      LIMITS.queueLimit.min,
      LIMITS.queueLimit.max,
      `Frames a connection may have waiting; one more while the consumer is not reading means \`reset slow-consumer\`. Default ${DEFAULTS.queueLimit}. The control's stream has no such limit: it is the yardstick, never reset as a slow reader.`,
    ),
    ping_ms: integer(LIMITS.wireMs.min, LIMITS.wireMs.max, `Real ms: the server pings after this long without sending; default ${DEFAULTS.serverPingMs}.`),
    idle_ms: integer(
      LIMITS.wireMs.min,
      LIMITS.wireMs.max,
      `Real ms: the server closes a connection after this long without receiving a byte; default ${DEFAULTS.serverIdleMs}. Must leave room for the consumer's ping_ms and the link's upstream latency.`,
    ),
    misbehave: { type: 'array', maxItems: 100, items: misbehaviourSchema, description: 'Deliberate misbehaviour, each fired once.' },
  },
} as const satisfies JSONSchema;

const processSchema = {
  type: 'object',
  description: 'One consumer process. `{}` is a process without fault hooks.',
  additionalProperties: false,
  properties: {
    fault: {
      type: 'string',
      pattern: FAULT_PLAN_PATTERN,
      description:
        'CHAOSLAB_FAULT for this process: <action>@<point>:<n>[,...], action exit|raise|stop, point apply|commit|revoke|snapshot, n >= 1, no spaces (contract section 7).',
    },
  },
} as const satisfies JSONSchema;

/** The variables chaoslab always sets for a feed consumer (consumer/feed/CONTRACT.md, section 1). */
export const REQUIRED_ENV_VARS = [
  'CHAOSLAB_HOST',
  'CHAOSLAB_PORT',
  'CHAOSLAB_DB',
  'CHAOSLAB_CLIENT_ID',
  'CHAOSLAB_TOPICS',
  'CHAOSLAB_PING_MS',
  'CHAOSLAB_IDLE_MS',
  'CHAOSLAB_BACKOFF_BASE_MS',
  'CHAOSLAB_BACKOFF_CAP_MS',
] as const;

const envValue = (description: string) => ({ type: 'string', maxLength: 1000, description }) as const;

const envSchema = {
  type: 'object',
  description:
    'A bad environment: these CHAOSLAB_* variables replace the values the harness would give (e.g. CHAOSLAB_PORT: "not-a-port"). Each value must be one the contract calls invalid (or, for the backoff pair, make CAP < BASE). The scenario then grades the contract\'s duty: exit 64 at once, before connecting, without creating the store.',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    CHAOSLAB_HOST: envValue('An invalid host: the empty string.'),
    CHAOSLAB_PORT: envValue('An invalid port: not an integer in 1..65535 ("not-a-port", "0", "65536", "").'),
    CHAOSLAB_DB: envValue('An invalid path: the empty string.'),
    CHAOSLAB_CLIENT_ID: envValue('An invalid client id: the empty string.'),
    CHAOSLAB_TOPICS: envValue('Invalid topics: not comma-separated lowercase accounts, or one listed twice ("0xABC", "").'),
    CHAOSLAB_PING_MS: envValue('An invalid time: not an integer 1..2147483647 ("0", "1.5", "").'),
    CHAOSLAB_IDLE_MS: envValue('An invalid time: not an integer 1..2147483647 ("0", "-1", "").'),
    CHAOSLAB_BACKOFF_BASE_MS: envValue('An invalid time, or one above CHAOSLAB_BACKOFF_CAP_MS.'),
    CHAOSLAB_BACKOFF_CAP_MS: envValue('An invalid time, or one below CHAOSLAB_BACKOFF_BASE_MS.'),
    CHAOSLAB_APPLY_DELAY_MS: envValue('An invalid delay: set but not an integer 0..2147483647 ("", "-1").'),
    CHAOSLAB_FAULT: envValue('An invalid fault plan: empty, or an item that does not parse ("bogus", "exit@apply:0").'),
  },
} as const satisfies JSONSchema;

const unsetSchema = {
  type: 'array',
  description:
    'A bad environment: these required CHAOSLAB_* variables are left out. The scenario then grades the duty to exit 64 at once, before connecting, without creating the store.',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: REQUIRED_ENV_VARS },
} as const satisfies JSONSchema;

const consumerSchema = {
  type: 'object',
  description:
    'The consumer processes and the environment the contract gives them. The control consumer follows the same topics with the same heartbeats and backoff, without faults or apply delay.',
  additionalProperties: false,
  required: ['topics'],
  properties: {
    topics: {
      type: 'array',
      minItems: 1,
      maxItems: 64,
      uniqueItems: true,
      items: { type: 'integer', minimum: 0, maximum: LIMITS.accounts.max - 1, description: 'An account of the chain, by index (0-based).' },
      description: "The accounts both consumers follow (CHAOSLAB_TOPICS, in this order), as indexes into the chain's accounts; each below `chain.accounts`.",
    },
    client_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9._-]+$',
      description: `CHAOSLAB_CLIENT_ID of the consumer under test (the control gets "<client_id>-control"); default "${DEFAULTS.clientId}".`,
    },
    ping_ms: integer(
      LIMITS.wireMs.min,
      LIMITS.wireMs.max,
      `CHAOSLAB_PING_MS, real ms; default ${DEFAULTS.consumerPingMs}, above the server's ping_ms: the server's pong counts as sending, so a consumer that pings more often than the server would keep the server's own pings (which the checker wants answered) from ever being sent.`,
    ),
    idle_ms: integer(
      LIMITS.wireMs.min,
      LIMITS.wireMs.max,
      `CHAOSLAB_IDLE_MS, real ms; default ${DEFAULTS.consumerIdleMs}. Must leave room for the server's ping_ms and the link's downstream latency.`,
    ),
    backoff_base_ms: integer(LIMITS.wireMs.min, LIMITS.wireMs.max, `CHAOSLAB_BACKOFF_BASE_MS, real ms; default ${DEFAULTS.backoffBaseMs}.`),
    backoff_cap_ms: integer(
      LIMITS.wireMs.min,
      LIMITS.wireMs.max,
      `CHAOSLAB_BACKOFF_CAP_MS, real ms, at least backoff_base_ms; default ${DEFAULTS.backoffCapMs}.`,
    ),
    apply_delay_ms: integer(
      0,
      LIMITS.wireMs.max,
      "CHAOSLAB_APPLY_DELAY_MS of the consumer under test, real ms: a slow reader that waits this long inside each new event's transaction. Default 0 (not set).",
    ),
    processes: {
      type: 'array',
      minItems: LIMITS.processes.min,
      maxItems: LIMITS.processes.max,
      items: processSchema,
      description:
        'Consumer processes, one after another on the same database: the harness starts the next one only after the previous one exited unexpectedly (a crash hook). Processes beyond this list run without faults. Default [{}].',
    },
    env: envSchema,
    unset: unsetSchema,
    restart: {
      type: 'object',
      description: 'Restarts after an unexpected exit.',
      additionalProperties: false,
      properties: {
        max: integer(
          LIMITS.processes.min,
          LIMITS.processes.max,
          `Most consumer processes in all, listed ones included; default ${DEFAULTS.restartMax} (at least as many as are listed).`,
        ),
        delay_ms: integer(0, 60_000, 'Real ms between an unexpected exit and the next start; default 0.'),
      },
    },
  },
} as const satisfies JSONSchema;

const expectSchema = {
  type: 'object',
  description:
    "What must be observed besides the checker's invariants (both stores equal the chain's end, subscribes carry the durable cursor, pings are answered, clean exits).",
  additionalProperties: false,
  properties: {
    processes: {
      type: 'integer',
      minimum: 1,
      maximum: LIMITS.processes.max,
      description: 'Exactly this many consumer processes run (each restart is one more). Default: not compared.',
    },
    quiet_ping: {
      type: 'boolean',
      description:
        'After convergence, keep the feed idle until the server pings, and require the pong (the heartbeat duty, tested where nothing else pings). Costs up to ping_ms + idle_ms of real time. Default false.',
    },
  },
} as const satisfies JSONSchema;

export const STORM_DEFAULTS = { processes: 20, rounds: 2, roundMs: 12_000, minAtCap: 4, maxAttempts: 60 } as const;

const stormSchema = {
  type: 'object',
  description:
    'A restart storm instead of the chain script (issue 12): K processes of the command under test, each on its own store and its own port; the server stops with `reset shutdown`, then accepts and closes at once while it timestamps every attempt, serves one event between the rounds, and the checker judges the reconnect backoff (contract section 6). The chain only supplies the topics and the frames served; `faults` are not allowed.',
  additionalProperties: false,
  properties: {
    processes: integer(1, LIMITS.processes.max, `K, the consumer processes run side by side; default ${STORM_DEFAULTS.processes}.`),
    rounds: integer(2, 5, `Restarts, one event served between two; default ${STORM_DEFAULTS.rounds}.`),
    round_ms: integer(
      1000,
      120_000,
      `Real ms a restart lasts at least for each process; it lasts until the process has also made min_at_cap attempts at the cap (at most twice this long). Default ${STORM_DEFAULTS.roundMs}.`,
    ),
    min_at_cap: integer(1, 50, `Attempts at the cap each process must make in every round; default ${STORM_DEFAULTS.minAtCap}.`),
    max_attempts: integer(10, 1000, `A round ends for a process after this many attempts, whatever they looked like; default ${STORM_DEFAULTS.maxAttempts}.`),
  },
} as const satisfies JSONSchema;

/** The feed lab's top-level keys. */
export const feedProperties = {
  chain: chainSchema,
  time: timeSchema,
  server: serverSchema,
  consumer: consumerSchema,
  expect: expectSchema,
  storm: stormSchema,
} as const;

const feedFileSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['chain', 'time', 'consumer'],
  properties: feedProperties,
} as const satisfies JSONSchema;

/** A validated file's feed keys (snake_case, defaults not yet filled). */
export type FeedFile = FromSchema<typeof feedFileSchema>;
