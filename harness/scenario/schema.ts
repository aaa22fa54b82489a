// The JSON Schema of a scenario file, format v1 (docs/scenarios.md is its user-facing copy).
//
// This is the one place that says what a scenario file may contain. `load.ts` parses the YAML,
// validates it against this schema with ajv, maps ajv's JSON pointers back to YAML lines, and
// then runs the checks a schema cannot express (fault seqs inside the script, retention_start
// below the event count, transcript incarnations in range, generate.min <= generate.max).
//
// Keys are snake_case. Every object sets `additionalProperties: false`, so a typo such as
// `timeout_msec` is an error instead of a silently ignored setting. Every property has a
// `description`; the docs and error messages are written from the same words.
//
// Extending the format later (keep it additive, so every v1 file stays valid):
// - Fault layers get one new optional top-level key, `faults`, an object with one optional
//   sub-object per layer, each with its own `additionalProperties: false`:
//     faults:
//       network:   toxics on the Toxiproxy listener (latency, reset_peer, timeout, ...)
//       process:   external kills of the consumer process (signal, at which seq/time)
//       publisher: publisher misbehaviour (duplicate, reorder, malformed line, early close)
//   Add the sub-schema as a named constant below and one entry in `scenarioSchema.properties`.
//   In-process fault hooks (CHAOSLAB_FAULT) stay where they are: `consumer.incarnations[].fault`.
// - A second protocol adds its name to `PROTOCOLS`; if its event script differs, make `events`
//   depend on `protocol` with `if`/`then` (the ledger branch is `ledgerEventsSchema`).

import { MAX_DELTA, MIN_DELTA } from '../../protocol/ledger/wire.js';

export const MISBEHAVIOUR_ACTIONS = ['duplicate', 'skip', 'replace', 'insert', 'silence', 'close'] as const;
export const TOXIC_TYPES = ['latency', 'bandwidth', 'slow_close', 'timeout', 'slicer', 'limit_data', 'reset_peer'] as const;

/** Protocols a scenario can name; the first one is the default. */
export const PROTOCOLS = ['ledger'] as const;

/** `<action>@<point>:<seq>`, comma-separated, no spaces — the contract's CHAOSLAB_FAULT grammar. */
export const FAULT_ACTIONS = ['exit', 'raise', 'stop'] as const;
export const FAULT_POINTS = ['apply', 'ack'] as const;
const FAULT_ITEM = `(${FAULT_ACTIONS.join('|')})@(${FAULT_POINTS.join('|')}):(0|[1-9][0-9]*)`;
export const FAULT_PLAN_PATTERN = `^${FAULT_ITEM}(,${FAULT_ITEM})*$`;

/** Scenario names: also used as file names (`scenarios/<name>.yaml`) and in run ids. */
export const NAME_PATTERN = '^[a-z0-9][a-z0-9-]*$';

export const DEFAULTS = {
  protocol: 'ledger',
  timeoutMs: 2000,
  deadlineMs: 60_000,
  generateMin: MIN_DELTA,
  generateMax: MAX_DELTA,
  window: 16,
  retentionStart: 0,
  redeliverUnacked: false,
  ackDeadlineMs: 5000,
} as const;

export const LIMITS = {
  nameMaxLength: 64,
  timeoutMs: { min: 50, max: 600_000 },
  deadlineMs: { min: 100, max: 3_600_000 },
  events: { min: 1, max: 100_000 },
  delta: { min: MIN_DELTA, max: MAX_DELTA },
  seed: { min: 0, max: 0xffff_ffff },
  window: { min: 1, max: 1024 },
  ackDeadlineMs: { min: 1, max: 600_000 },
  incarnations: { min: 1, max: 100 },
} as const;

const delta = {
  type: 'integer',
  minimum: LIMITS.delta.min,
  maximum: LIMITS.delta.max,
  description: `One event's delta, ${LIMITS.delta.min}..${LIMITS.delta.max} (the wire grammar's range).`,
} as const;

const generateSchema = {
  type: 'object',
  description: 'A seeded pseudo-random script (mulberry32, see harness/scenario/generate.ts): the same seed gives the same deltas on every machine.',
  additionalProperties: false,
  required: ['count', 'seed'],
  properties: {
    count: {
      type: 'integer',
      minimum: LIMITS.events.min,
      maximum: LIMITS.events.max,
      description: `Number of events, ${LIMITS.events.min}..${LIMITS.events.max}; seqs are 0..count-1.`,
    },
    seed: {
      type: 'integer',
      minimum: LIMITS.seed.min,
      maximum: LIMITS.seed.max,
      description: 'Generator seed, an unsigned 32-bit integer (0..4294967295).',
    },
    min: { ...delta, description: `Smallest delta generated (inclusive); default ${DEFAULTS.generateMin}; must be <= max.` },
    max: { ...delta, description: `Largest delta generated (inclusive); default ${DEFAULTS.generateMax}; must be >= min.` },
  },
} as const;

export const ledgerEventsSchema = {
  type: 'object',
  description: 'The event script the publisher serves: exactly one of `deltas` or `generate`.',
  additionalProperties: false,
  properties: {
    deltas: {
      type: 'array',
      minItems: LIMITS.events.min,
      maxItems: LIMITS.events.max,
      items: delta,
      description: `Explicit deltas; the event at index i has seq i. ${LIMITS.events.min}..${LIMITS.events.max} items.`,
    },
    generate: generateSchema,
  },
  oneOf: [{ required: ['deltas'] }, { required: ['generate'] }],
} as const;

const publisherSchema = {
  type: 'object',
  description: "How the publisher behaves on the consumer-under-test's stream.",
  additionalProperties: false,
  properties: {
    window: {
      type: 'integer',
      minimum: LIMITS.window.min,
      maximum: LIMITS.window.max,
      description: `Most unacknowledged events in flight at once; default ${DEFAULTS.window}.`,
    },
    retention_start: {
      type: 'integer',
      minimum: 0,
      description:
        'First seq still in the retention log; a RESUME cursor older than retention_start - 1 is answered with RESYNC. Default 0; must be below the number of events.',
    },
    redeliver_unacked: {
      type: 'boolean',
      description: 'On RESUME, first resend events sent earlier but never acknowledged (even those at or before the cursor), then new ones. Default false.',
    },
    ack_deadline_ms: {
      type: 'integer',
      minimum: LIMITS.ackDeadlineMs.min,
      maximum: LIMITS.ackDeadlineMs.max,
      description: `How long the publisher waits for an ACK it is owed, when it can send nothing more (window full, or everything sent), before closing anyway; default ${DEFAULTS.ackDeadlineMs}.`,
    },
    forget_acked: {
      type: 'boolean',
      description:
        'Forget acknowledged events, as real brokers do: retention moves past every acknowledged prefix, so an ACK that was a broken promise becomes a lost event. Default false.',
    },
    retention_moves: {
      type: 'array',
      description: 'Retention moves forward while the consumer is away: when connection number `connection` opens, the log starts at `to`.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['connection', 'to'],
        properties: {
          connection: { type: 'integer', minimum: 1, description: 'Which connection of the stream (1-based) finds the moved log.' },
          to: { type: 'integer', minimum: 1, description: 'The new first seq of the log; must be below the number of events.' },
        },
      },
    },
    misbehave: {
      type: 'array',
      description: 'Deliberate misbehaviour, each anchored to the moment EVENT <seq> would be sent on one connection.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['action', 'seq'],
        properties: {
          action: {
            type: 'string',
            enum: MISBEHAVIOUR_ACTIONS,
            description:
              'duplicate (send EVENT seq twice), skip (never send it: a gap), replace (send `bytes` instead), insert (send `bytes` just before it), silence (send nothing more, keep the connection open), close (send `bytes`, if any, instead, then close).',
          },
          seq: { type: 'integer', minimum: 0, description: 'The EVENT the misbehaviour is anchored to; must be in the script.' },
          bytes: {
            type: 'string',
            description:
              'Literal bytes for replace / insert / close, written as a YAML string (use double quotes for escapes such as "\\r\\n", "\\t" or "\\xe9"); only characters U+0000..U+00FF (sent as single bytes).',
          },
          repeat: {
            type: 'integer',
            minimum: 1,
            maximum: 1_000_000,
            description: '`bytes` sent this many times in a row (e.g. 10 KiB without an LF); default 1.',
          },
          connection: { type: 'integer', minimum: 1, description: 'Which connection of the stream (1-based); default 1.' },
        },
      },
    },
  },
} as const;

const incarnationSchema = {
  type: 'object',
  description: 'One consumer process. `{}` is a process without faults.',
  additionalProperties: false,
  properties: {
    fault: {
      type: 'string',
      pattern: FAULT_PLAN_PATTERN,
      description:
        'CHAOSLAB_FAULT for this process: <action>@<point>:<seq>[,...], action exit|raise|stop, point apply|ack, no spaces; each seq must be in the script.',
    },
    expect_exit: {
      type: 'string',
      enum: ['zero', 'nonzero', 'any'],
      description:
        'Required exit status: zero, nonzero or any. Default: nonzero when the fault plan has an exit or raise action, else zero for the last incarnation, else any.',
    },
  },
} as const;

const consumerSchema = {
  type: 'object',
  description: 'The consumer under test: which processes the harness starts, one after another.',
  additionalProperties: false,
  properties: {
    restart: {
      type: 'object',
      description: 'After the listed incarnations, keep starting plain processes (the harness is the only thing that reconnects).',
      additionalProperties: false,
      required: ['until', 'max'],
      properties: {
        until: { type: 'string', enum: ['complete'], description: 'complete: until the publisher holds an ACK for every event of the log.' },
        max: {
          type: 'integer',
          minimum: 1,
          maximum: LIMITS.incarnations.max,
          description: `Most incarnations in total, listed ones included (1..${LIMITS.incarnations.max}).`,
        },
        delay_ms: {
          type: 'integer',
          minimum: 0,
          maximum: 60_000,
          description: 'Pause between an exit and the next start (nominal: multiplied by time_scale); default 0.',
        },
      },
    },
    incarnations: {
      type: 'array',
      minItems: LIMITS.incarnations.min,
      maxItems: LIMITS.incarnations.max,
      items: incarnationSchema,
      description: 'Consumer processes run one after another on the same database (each one is a restart); default [{}].',
    },
  },
} as const;

const transcriptEntrySchema = {
  type: 'object',
  description: "What the publisher must see on one incarnation's connection.",
  additionalProperties: false,
  required: ['incarnation', 'resume'],
  properties: {
    incarnation: {
      type: 'integer',
      minimum: 1,
      description: '1-based index into consumer.incarnations; each at most once.',
    },
    resume: {
      type: 'integer',
      minimum: -1,
      description: 'The RESUME cursor that incarnation must send (-1 = nothing processed yet).',
    },
    closed_by: {
      type: 'string',
      enum: ['consumer', 'publisher'],
      description: "Who must close that incarnation's first connection: `consumer` for a consumer that must hang up at once (malformed line, gap, conflict).",
    },
    acks: {
      type: 'array',
      maxItems: LIMITS.events.max,
      items: { type: 'integer', minimum: 0, description: 'A seq the consumer acknowledged.' },
      description: 'Exactly these ACKs, in this order. Optional: left out, the ACKs are not compared (useful for long scripts).',
    },
  },
} as const;

const expectSchema = {
  type: 'object',
  description: "What must be observed, besides the checker's invariants (database equals the control consumer, exit statuses).",
  additionalProperties: false,
  properties: {
    transcript: {
      type: 'array',
      items: transcriptEntrySchema,
      description: 'Per-incarnation wire expectations, in incarnation order; incarnations not listed are not compared.',
    },
    final_last: {
      type: 'integer',
      minimum: -1,
      description:
        "The consumer's expected final cursor when the scenario ends before the script does (e.g. a RESYNC it must not paper over): the expected state is then the script's prefix 0..final_last. Default: the script's last seq.",
    },
  },
} as const;

const seqRef = { type: 'integer', minimum: 0, description: 'A seq of the script.' } as const;

/** When a fault starts or ends: a transcript point, a process event, or a time. */
const triggerSchema = (role: 'start' | 'end') =>
  ({
    type: 'object',
    additionalProperties: false,
    description:
      role === 'start'
        ? 'When the fault starts: exactly one of before_event, on_ack, on_resume (transcript points: the publisher holds the stream until the fault is in place), incarnation (before that consumer process starts), at_ms (since the first consumer start, scaled), random_events (one fault per seeded random before_event point).'
        : 'When the fault ends: exactly one of after_ms (since it started, scaled), incarnation_exit (when the consumer process it hit exits), before_event, on_ack.',
    minProperties: 1,
    maxProperties: 1,
    properties: {
      before_event: { ...seqRef, description: 'Before EVENT <seq> is first sent.' },
      on_ack: { ...seqRef, description: 'When ACK <seq> first arrives.' },
      ...(role === 'start'
        ? {
            on_resume: { type: 'integer', minimum: 1, description: 'When the n-th RESUME arrives on the stream (1-based).' },
            incarnation: { type: 'integer', minimum: 1, description: 'Just before consumer incarnation n starts.' },
            at_ms: { type: 'integer', minimum: 0, description: 'Milliseconds after the first consumer start (nominal, scaled by time_scale).' },
            random_events: {
              type: 'object',
              additionalProperties: false,
              required: ['count', 'seed', 'min', 'max'],
              description: 'Seeded random transcript points: `count` distinct seqs in min..max (mulberry32), one fault before each EVENT.',
              properties: {
                count: { type: 'integer', minimum: 1, maximum: 1000, description: 'How many points.' },
                seed: { type: 'integer', minimum: 0, maximum: LIMITS.seed.max, description: 'Seed of the draw.' },
                min: { ...seqRef, description: 'Smallest seq drawn.' },
                max: { ...seqRef, description: 'Largest seq drawn.' },
              },
            },
          }
        : {
            after_ms: { type: 'integer', minimum: 0, description: 'Milliseconds after the fault started (nominal, scaled by time_scale).' },
            incarnation_exit: {
              type: 'boolean',
              const: true,
              description:
                'When the consumer process running at the start exits (toxics belong to the proxy: without this they also hit the restarted consumer).',
            },
          }),
    },
  }) as const;

const faultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'start'],
  description: 'One network fault (a Toxiproxy toxic, or the proxy disabled) or one process fault (a signal to the consumer), with its start and end.',
  properties: {
    name: { type: 'string', pattern: NAME_PATTERN, maxLength: LIMITS.nameMaxLength, description: 'Label in the journal and the reports; unique.' },
    network: {
      type: 'object',
      additionalProperties: false,
      description:
        'A Toxiproxy toxic on the proxy in front of the consumer under test, or `down: true` (proxy disabled: open connections closed, new ones refused).',
      properties: {
        toxic: { type: 'string', enum: TOXIC_TYPES, description: 'Toxiproxy toxic type.' },
        stream: {
          type: 'string',
          enum: ['upstream', 'downstream'],
          description: 'upstream = consumer to publisher (ACKs), downstream = publisher to consumer (EVENTs); default downstream.',
        },
        attributes: {
          type: 'object',
          additionalProperties: { type: 'integer', minimum: 0 },
          description:
            "The toxic's attributes, e.g. {latency: 500, jitter: 50}, {rate: 2} (KB/s), {bytes: 28}, {timeout: 0}, {average_size: 1, size_variation: 0, delay: 0}.",
        },
        down: { type: 'boolean', const: true, description: 'Disable the proxy instead of adding a toxic.' },
      },
      oneOf: [{ required: ['toxic'] }, { required: ['down'] }],
    },
    process: {
      type: 'object',
      additionalProperties: false,
      required: ['signal'],
      description: 'A signal to the running consumer process (its whole process tree). SIGSTOP needs an end (SIGCONT then); SIGKILL and SIGTERM take no end.',
      properties: {
        signal: { type: 'string', enum: ['SIGKILL', 'SIGTERM', 'SIGSTOP'], description: 'Which signal.' },
      },
    },
    start: triggerSchema('start'),
    end: triggerSchema('end'),
  },
  oneOf: [{ required: ['network'] }, { required: ['process'] }],
} as const;

/** The whole file. `$id` names the format version. */
export const scenarioSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://chaoslab.invalid/schema/scenario-v1.json',
  title: 'chaoslab scenario (format v1)',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'description', 'events'],
  properties: {
    name: {
      type: 'string',
      pattern: NAME_PATTERN,
      maxLength: LIMITS.nameMaxLength,
      description: 'Scenario name: lowercase letters, digits and dashes, starting with a letter or digit; must equal the file name without `.yaml`.',
    },
    description: {
      type: 'string',
      minLength: 1,
      pattern: '\\S',
      description: 'What the scenario proves, in one or more plain sentences (shown in `chaoslab list` and in reports).',
    },
    protocol: {
      type: 'string',
      enum: PROTOCOLS,
      description: `Wire protocol of the lab; default "${DEFAULTS.protocol}" (the only one so far).`,
    },
    timeout_ms: {
      type: 'integer',
      minimum: LIMITS.timeoutMs.min,
      maximum: LIMITS.timeoutMs.max,
      description: `CHAOSLAB_TIMEOUT_MS given to every consumer process: the bound on each single network await; default ${DEFAULTS.timeoutMs}.`,
    },
    deadline_ms: {
      type: 'integer',
      minimum: LIMITS.deadlineMs.min,
      maximum: LIMITS.deadlineMs.max,
      description: `Hard deadline for one consumer process; the harness kills it after that; default ${DEFAULTS.deadlineMs}.`,
    },
    time_scale: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 1,
      description:
        'Time compression: every nominal duration in faults and restarts is multiplied by this (0.01 makes a "30 s" cut last 300 ms); stated in the report. Default 1.',
    },
    events: ledgerEventsSchema,
    publisher: publisherSchema,
    faults: { type: 'array', items: faultSchema, description: 'Network and process faults with their start and end.' },
    consumer: consumerSchema,
    expect: expectSchema,
  },
} as const;

/** The file's shape after schema validation (snake_case, defaults not yet filled). */
export interface ScenarioFile {
  name: string;
  description: string;
  protocol?: (typeof PROTOCOLS)[number];
  timeout_ms?: number;
  deadline_ms?: number;
  events: { deltas?: number[]; generate?: { count: number; seed: number; min?: number; max?: number } };
  time_scale?: number;
  publisher?: {
    window?: number;
    retention_start?: number;
    redeliver_unacked?: boolean;
    ack_deadline_ms?: number;
    forget_acked?: boolean;
    retention_moves?: { connection: number; to: number }[];
    misbehave?: { action: (typeof MISBEHAVIOUR_ACTIONS)[number]; seq: number; bytes?: string; repeat?: number; connection?: number }[];
  };
  consumer?: {
    incarnations?: { fault?: string; expect_exit?: 'zero' | 'nonzero' | 'any' }[];
    restart?: { until: 'complete'; max: number; delay_ms?: number };
  };
  faults?: FaultFile[];
  expect?: {
    transcript?: { incarnation: number; resume: number; acks?: number[]; closed_by?: 'consumer' | 'publisher' }[];
    final_last?: number;
  };
}

export interface TriggerFile {
  before_event?: number;
  on_ack?: number;
  on_resume?: number;
  incarnation?: number;
  at_ms?: number;
  random_events?: { count: number; seed: number; min: number; max: number };
  after_ms?: number;
  incarnation_exit?: true;
}

export interface FaultFile {
  name: string;
  network?: { toxic?: (typeof TOXIC_TYPES)[number]; stream?: 'upstream' | 'downstream'; attributes?: Record<string, number>; down?: true };
  process?: { signal: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP' };
  start: TriggerFile;
  end?: TriggerFile;
}
