// The ledger lab's part of a scenario file (JSON Schema): the event script, how the publisher
// behaves, which consumer processes run, what must be observed. Joined with the core part by
// harness/scenario/schema.ts; the file's TypeScript type is derived from these objects.

import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { MAX_DELTA, MIN_DELTA } from '../../../../protocol/ledger/wire.js';

export const MISBEHAVIOUR_ACTIONS = ['duplicate', 'skip', 'replace', 'insert', 'silence', 'close'] as const;

/** `<action>@<point>:<seq>`, comma-separated, no spaces — the contract's CHAOSLAB_FAULT grammar. */
export const FAULT_ACTIONS = ['exit', 'raise', 'stop'] as const;
export const FAULT_POINTS = ['apply', 'ack'] as const;
const FAULT_ITEM = `(${FAULT_ACTIONS.join('|')})@(${FAULT_POINTS.join('|')}):(0|[1-9][0-9]*)`;
export const FAULT_PLAN_PATTERN = `^${FAULT_ITEM}(,${FAULT_ITEM})*$`;

export const DEFAULTS = {
  generateMin: MIN_DELTA,
  generateMax: MAX_DELTA,
  window: 16,
  retentionStart: 0,
  redeliverUnacked: false,
  ackDeadlineMs: 5000,
} as const;

export const LIMITS = {
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
} as const satisfies JSONSchema;

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
} as const satisfies JSONSchema;

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
} as const satisfies JSONSchema;

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
              'duplicate (send EVENT seq twice), skip (never send it: a gap), replace (send `bytes` instead), insert (send `bytes` just before it), silence (send `bytes`, if any, instead, then nothing more, keeping the connection open), close (send `bytes`, if any, instead, then close).',
          },
          seq: { type: 'integer', minimum: 0, description: 'The EVENT the misbehaviour is anchored to; must be in the script.' },
          bytes: {
            type: 'string',
            description:
              'Literal bytes for replace / insert / silence / close, written as a YAML string (use double quotes for escapes such as "\\r\\n", "\\t" or "\\xe9"); only characters U+0000..U+00FF (sent as single bytes).',
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
} as const satisfies JSONSchema;

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
} as const satisfies JSONSchema;

/** The variables the contract gives a consumer (consumer/ledger/CONTRACT.md, section 1). */
export const REQUIRED_ENV_VARS = ['CHAOSLAB_HOST', 'CHAOSLAB_PORT', 'CHAOSLAB_DB', 'CHAOSLAB_TIMEOUT_MS'] as const;

const envSchema = {
  type: 'object',
  description:
    'A bad environment: these CHAOSLAB_* variables replace the values the harness would give (e.g. CHAOSLAB_PORT: "not-a-port"). Each value must be one the contract calls invalid. The scenario then grades the contract\'s duty: exit 64 at once, before connecting, without writing the store.',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    CHAOSLAB_HOST: { type: 'string', description: 'An invalid host: the empty string.' },
    CHAOSLAB_PORT: { type: 'string', description: 'An invalid port: not an integer in 1..65535 ("not-a-port", "0", "65536", "").' },
    CHAOSLAB_DB: { type: 'string', description: 'An invalid path: the empty string.' },
    CHAOSLAB_TIMEOUT_MS: { type: 'string', description: 'An invalid timeout: not a positive integer ("0", "-5", "3s", "").' },
    CHAOSLAB_FAULT: { type: 'string', description: 'An invalid fault plan: empty, or an item that does not parse ("bogus", "exit@ack").' },
  },
} as const satisfies JSONSchema;

const unsetSchema = {
  type: 'array',
  description:
    'A bad environment: these CHAOSLAB_* variables are left out (CHAOSLAB_FAULT is optional, so it cannot be one). The scenario then grades the duty to exit 64 at once, before connecting, without writing the store.',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: REQUIRED_ENV_VARS },
} as const satisfies JSONSchema;

const consumerSchema = {
  type: 'object',
  description: 'The consumer under test: which processes the harness starts, one after another.',
  additionalProperties: false,
  properties: {
    env: envSchema,
    unset: unsetSchema,
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
} as const satisfies JSONSchema;

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
} as const satisfies JSONSchema;

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
      oneOf: [
        { type: 'integer', minimum: -1 },
        { type: 'string', const: 'resync' },
      ],
      description:
        "The consumer's expected final cursor when the scenario ends before the script does (e.g. a RESYNC it must not paper over): the expected state is then the script's prefix 0..final_last. `resync`: the cursor the publisher's first RESYNC answered, wherever that was (no RESYNC: the whole script); for schedules whose retention moves make the point unknown in advance. Default: the script's last seq.",
    },
  },
} as const satisfies JSONSchema;

/** The ledger lab's top-level keys. */
export const ledgerProperties = { events: ledgerEventsSchema, publisher: publisherSchema, consumer: consumerSchema, expect: expectSchema } as const;

const ledgerFileSchema = { type: 'object', additionalProperties: true, required: ['events'], properties: ledgerProperties } as const satisfies JSONSchema;

/** A validated file's ledger keys (snake_case, defaults not yet filled). */
export type LedgerFile = FromSchema<typeof ledgerFileSchema>;
