// The JSON Schema of a scenario file, format v1 (docs/scenarios.md is its user-facing copy): the
// core part every lab shares (name, description, protocol, time limits, time compression, fault
// layers with their triggers) joined with the part the scenario's lab adds (for the ledger lab:
// events, publisher, consumer, expect). `scenarioSchemaFor` joins them; the file's types are
// derived from the same objects (json-schema-to-ts), so schema and types cannot drift.
//
// Keys are snake_case. Every object sets `additionalProperties: false`, so a typo such as
// `timeout_msec` is an error instead of a silently ignored setting. Every property has a
// `description`; the docs and error messages are written from the same words. Keep changes
// additive, so every v1 file stays valid.

import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { FaultPointSpec } from './fault-points.js';
import { NAME_PATTERN } from './schema-problems.js';

export const TOXIC_TYPES = ['latency', 'bandwidth', 'slow_close', 'timeout', 'slicer', 'limit_data', 'reset_peer'] as const;
export const SIGNALS = ['SIGKILL', 'SIGTERM', 'SIGSTOP'] as const;

export const CORE_DEFAULTS = { timeoutMs: 2000, deadlineMs: 60_000 } as const;

export const CORE_LIMITS = {
  nameMaxLength: 64,
  timeoutMs: { min: 50, max: 600_000 },
  deadlineMs: { min: 100, max: 3_600_000 },
  seed: { min: 0, max: 0xffff_ffff },
  /** Linux's floor for a TCP buffer, and its usual ceiling for the send side. */
  socketBufferBytes: { min: 4096, max: 4_194_304 },
} as const;

const networkSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'A Toxiproxy toxic on the proxy in front of the consumer under test, or `down: true` (proxy disabled: open connections closed, new ones refused).',
  properties: {
    toxic: { type: 'string', enum: TOXIC_TYPES, description: 'Toxiproxy toxic type.' },
    stream: {
      type: 'string',
      enum: ['upstream', 'downstream'],
      description: 'upstream = consumer to publisher, downstream = publisher to consumer; default downstream.',
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
} as const satisfies JSONSchema;

const processSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['signal'],
  description: 'A signal to the running consumer process (its whole process tree). SIGSTOP needs an end (SIGCONT then); SIGKILL and SIGTERM take no end.',
  properties: { signal: { type: 'string', enum: SIGNALS, description: 'Which signal.' } },
} as const satisfies JSONSchema;

/** Real packet loss in the kernel (docs/sandbox.md): sealed runs only; elsewhere the run is skipped. */
export const LOSS_PERCENT = { min: 1, max: 99 } as const;

const lossSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['percent'],
  description:
    "Real packet loss: nftables in the sealed run's network namespace drops this share of the packets to and from the consumer's proxy port, both ways (the control's path stays clean). Needs a sealed run: elsewhere the run is SKIPPED, never run without its loss.",
  properties: {
    percent: {
      type: 'integer',
      minimum: LOSS_PERCENT.min,
      maximum: LOSS_PERCENT.max,
      description: 'Each packet is dropped with this probability, in percent (`numgen random mod 100 < percent`).',
    },
  },
} as const satisfies JSONSchema;

export type NetworkFile = FromSchema<typeof networkSchema>;
export type ProcessFile = FromSchema<typeof processSchema>;
export type LossFile = FromSchema<typeof lossSchema>;

/** A trigger as written: exactly one key, a lab's point (`before_event: 7`) or a core one. */
export type TriggerFile = Record<string, number | boolean | RandomEventsFile | undefined>;
export interface RandomEventsFile {
  count: number;
  seed: number;
  min: number;
  max: number;
}

export interface FaultFile {
  name: string;
  network?: NetworkFile;
  process?: ProcessFile;
  loss?: LossFile;
  start: TriggerFile;
  end?: TriggerFile;
}

/** What every scenario file has, whatever its lab. */
export interface CoreFile {
  name: string;
  description: string;
  protocol?: string;
  timeout_ms?: number;
  deadline_ms?: number;
  time_scale?: number;
  socket_buffer_bytes?: number;
  faults?: FaultFile[];
  chaos?: ChaosOriginFile;
}

/** Where a `chaoslab chaos` repro came from: the consumer (or push server) it failed with, and the seed and path that draw it again. */
export interface ChaosOriginFile {
  consumer?: string;
  server?: string;
  seed: number;
  path: string;
}

/** When a fault starts or ends: one of the lab's points, a process event, or a time. */
function triggerSchema(role: 'start' | 'end', points: Record<string, FaultPointSpec>) {
  const labPoints = Object.entries(points).filter(([, p]) => role === 'start' || p.canEnd);
  const pointSchemas = Object.fromEntries(
    labPoints.map(([key, p]) => [key, { type: 'integer', minimum: p.value === 'seq' ? 0 : 1, description: p.description }]),
  );
  const random = Object.entries(points).find(([, p]) => p.random);
  const core =
    role === 'start'
      ? {
          incarnation: { type: 'integer', minimum: 1, description: 'Just before consumer process n starts.' },
          at_ms: { type: 'integer', minimum: 0, description: 'Milliseconds after the first consumer start (nominal, scaled by time_scale).' },
          ...(random
            ? {
                random_events: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['count', 'seed', 'min', 'max'],
                  description: `Seeded random points: \`count\` distinct positions in min..max (mulberry32), one fault at each \`${random[0]}\` point.`,
                  properties: {
                    count: { type: 'integer', minimum: 1, maximum: 1000, description: 'How many points.' },
                    seed: { type: 'integer', minimum: 0, maximum: CORE_LIMITS.seed.max, description: 'Seed of the draw.' },
                    min: { type: 'integer', minimum: 0, description: 'Smallest position drawn.' },
                    max: { type: 'integer', minimum: 0, description: 'Largest position drawn.' },
                  },
                },
              }
            : {}),
        }
      : {
          after_ms: { type: 'integer', minimum: 0, description: 'Milliseconds after the fault started (nominal, scaled by time_scale).' },
          incarnation_exit: {
            type: 'boolean',
            const: true,
            description:
              'When the consumer process running at the start exits — or, when none was running, the next one to start (toxics belong to the proxy: without this they also hit the restarted consumer).',
          },
        };
  const keys = [...labPoints.map(([k]) => k), ...Object.keys(core)];
  return {
    type: 'object',
    additionalProperties: false,
    description: `When the fault ${role}s: exactly one of ${keys.join(', ')}.`,
    minProperties: 1,
    maxProperties: 1,
    properties: { ...pointSchemas, ...core },
  };
}

function faultSchema(points: Record<string, FaultPointSpec>) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'start'],
    description:
      'One network fault (a Toxiproxy toxic, or the proxy disabled), one process fault (a signal to the consumer) or packet loss (nftables, sealed runs), with its start and end.',
    properties: {
      name: { type: 'string', pattern: NAME_PATTERN, maxLength: CORE_LIMITS.nameMaxLength, description: 'Label in the journal and the reports; unique.' },
      network: networkSchema,
      process: processSchema,
      loss: lossSchema,
      start: triggerSchema('start', points),
      end: triggerSchema('end', points),
    },
    oneOf: [{ required: ['network'] }, { required: ['process'] }, { required: ['loss'] }],
  };
}

/** What a lab adds to the schema. */
export interface LabSchemaPart {
  /** Top-level properties the lab adds (e.g. events, publisher, consumer, expect). */
  properties: Record<string, object>;
  required: readonly string[];
}

/** The whole schema of a scenario file of one lab. `$id` names the format version. */
export function scenarioSchemaFor(lab: { name: string; schema: LabSchemaPart; faultPoints: Record<string, FaultPointSpec> }, labNames: readonly string[]) {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `https://chaoslab.invalid/schema/scenario-v1-${lab.name}.json`,
    title: `chaoslab scenario (format v1), ${lab.name} lab`,
    type: 'object',
    additionalProperties: false,
    required: ['name', 'description', ...lab.schema.required],
    properties: {
      name: {
        type: 'string',
        pattern: NAME_PATTERN,
        maxLength: CORE_LIMITS.nameMaxLength,
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
        enum: labNames,
        description: `The lab whose protocol the scenario speaks; default "${labNames[0]}".`,
      },
      timeout_ms: {
        type: 'integer',
        minimum: CORE_LIMITS.timeoutMs.min,
        maximum: CORE_LIMITS.timeoutMs.max,
        description: `CHAOSLAB_TIMEOUT_MS given to every consumer process: the bound on each single network await; default ${CORE_DEFAULTS.timeoutMs}.`,
      },
      deadline_ms: {
        type: 'integer',
        minimum: CORE_LIMITS.deadlineMs.min,
        maximum: CORE_LIMITS.deadlineMs.max,
        description: `Hard deadline for one consumer process; the harness kills it after that; default ${CORE_DEFAULTS.deadlineMs}.`,
      },
      time_scale: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 1,
        description:
          'Time compression: every nominal duration in faults and restarts is multiplied by this (0.01 makes a "30 s" cut last 300 ms); stated in the report. Default 1.',
      },
      socket_buffer_bytes: {
        type: 'integer',
        minimum: CORE_LIMITS.socketBufferBytes.min,
        maximum: CORE_LIMITS.socketBufferBytes.max,
        description:
          "Every TCP buffer of the run, send and receive, fixed at this many bytes (net.ipv4.tcp_rmem and tcp_wmem of the sealed run's own network namespace), so that the kernel cannot hide a slow reader behind megabytes of buffering on loopback. Needs a sealed run: elsewhere the run is SKIPPED. Default: the kernel's own sizes.",
      },
      ...lab.schema.properties,
      chaos: {
        type: 'object',
        additionalProperties: false,
        required: ['seed', 'path'],
        description:
          'Written by `chaoslab chaos` into a repro: where the schedule came from. `chaoslab run` uses `consumer` unless --consumer is given, and `server` unless --server is given.',
        properties: {
          consumer: { type: 'string', minLength: 1, description: 'The consumer command the schedule failed with (run from where `chaoslab chaos` ran).' },
          server: {
            type: 'string',
            minLength: 1,
            description: 'The push server command the schedule failed with (`chaoslab chaos --server`; run from where it ran).',
          },
          seed: { type: 'integer', minimum: CORE_LIMITS.seed.min, maximum: CORE_LIMITS.seed.max, description: "The chaos run's seed." },
          path: { type: 'string', pattern: '^[0-9]+(:[0-9]+)*$', description: "fast-check's path to the shrunk schedule (run:shrink steps)." },
        },
      },
      faults: { type: 'array', items: faultSchema(lab.faultPoints), description: 'Network and process faults with their start and end.' },
    },
  };
}
