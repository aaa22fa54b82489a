// Loading scenario files: YAML -> JSON Schema validation -> semantic checks -> a `Scenario`
// with every default filled. A bad file never half-loads: every problem found is collected
// into one ScenarioError, each with file:line:col and the dotted field path, e.g.
//   scenarios/x.yaml:12:5: consumer.incarnations[0].fault: must look like <action>@<point>:<seq> (got "exit@ack")

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node, type Pair } from 'yaml';
import { generateDeltas, mulberry32, uniformInt } from './generate.js';
import {
  DEFAULTS,
  FAULT_ACTIONS,
  FAULT_PLAN_PATTERN,
  FAULT_POINTS,
  NAME_PATTERN,
  scenarioSchema,
  type FaultFile,
  type ScenarioFile,
  type TriggerFile,
} from './schema.js';
import type { Misbehaviour } from '../../publisher/ledger/misbehaviour.js';

export type ExpectExit = 'zero' | 'nonzero' | 'any';

export interface Scenario {
  /** Absolute path of the file. */
  file: string;
  /** The file's text, for reports. */
  source: string;
  name: string;
  description: string;
  protocol: 'ledger';
  timeoutMs: number;
  deadlineMs: number;
  /** The resolved script; `events[i].seq === i`. */
  events: { seq: number; delta: number }[];
  eventSource: { kind: 'explicit' } | { kind: 'generated'; count: number; seed: number; min: number; max: number };
  /** Time compression: nominal durations were multiplied by this; the plan's `ms` are already scaled. */
  timeScale: number;
  publisher: {
    window: number;
    retentionStart: number;
    redeliverUnacked: boolean;
    ackDeadlineMs: number;
    forgetAcked: boolean;
    retentionMoves: { connection: number; to: number }[];
    misbehaviour: Misbehaviour[];
  };
  consumer: {
    incarnations: { fault?: string; expectExit: ExpectExit }[];
    restart?: { until: 'complete'; max: number; delayMs: number };
  };
  faults: FaultPlan[];
  /** `acks` absent = the ACKs of that incarnation are not compared (only its RESUME is). */
  expect: {
    transcript?: { incarnation: number; resume: number; acks?: number[]; closedBy?: 'consumer' | 'publisher' }[];
    finalLast?: number;
  };
}

export type Trigger =
  | { kind: 'before-event'; seq: number }
  | { kind: 'on-ack'; seq: number }
  | { kind: 'on-resume'; n: number }
  | { kind: 'incarnation'; n: number }
  | { kind: 'at'; ms: number }
  | { kind: 'after'; ms: number }
  | { kind: 'incarnation-exit' };

export type FaultEffect =
  | { kind: 'toxic'; toxic: NonNullable<FaultFile['network']>['toxic'] & string; stream: 'upstream' | 'downstream'; attributes: Record<string, number> }
  | { kind: 'proxy-down' }
  | { kind: 'signal'; signal: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP' };

export interface FaultPlan {
  name: string;
  effect: FaultEffect;
  start: Trigger;
  end?: Trigger;
}

export interface ScenarioProblem {
  /** The file as shown to the user: relative to the working directory when inside it. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  /** Dotted path such as `consumer.incarnations[0].fault`; '' for the file as a whole. */
  field: string;
  message: string;
}

export class ScenarioError extends Error {
  readonly problems: ScenarioProblem[];

  constructor(problems: ScenarioProblem[], message?: string) {
    super(message ?? problems.map(formatProblem).join('\n'));
    this.name = 'ScenarioError';
    this.problems = problems;
  }
}

/** `resolveScenario` found neither a file nor a scenario of that name. */
export class UnknownScenarioError extends ScenarioError {
  constructor(
    readonly requested: string,
    readonly available: string[],
    scenariosDir: string,
  ) {
    const hint = closest(requested, available);
    super(
      [],
      `unknown scenario "${requested}": no such file, and no ${path.join(displayPath(scenariosDir), `${requested}.yaml`)}` +
        (hint ? ` (did you mean "${hint}"?)` : '') +
        `; available: ${available.length > 0 ? available.join(', ') : '(none)'}`,
    );
    this.name = 'UnknownScenarioError';
  }
}

export function formatProblem(p: ScenarioProblem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.field ? `${p.field}: ` : ''}${p.message}`;
}

// ---------------------------------------------------------------------------------------------
// Fault plans

export interface FaultStep {
  action: (typeof FAULT_ACTIONS)[number];
  point: (typeof FAULT_POINTS)[number];
  seq: number;
}

const FAULT_PLAN_RE = new RegExp(FAULT_PLAN_PATTERN);
const FAULT_SHAPE = '<action>@<point>:<seq>';

/**
 * Parses a CHAOSLAB_FAULT plan exactly as the contract defines it (comma-separated
 * `<action>@<point>:<seq>`, no spaces, no empty items, seq without leading zeros).
 * Returns the steps, or the reason the plan is not valid.
 */
export function parseFaultPlan(plan: string): { ok: true; steps: FaultStep[] } | { ok: false; reason: string } {
  if (FAULT_PLAN_RE.test(plan)) {
    const steps = plan.split(',').map((item) => {
      const [head, seq] = item.split(':') as [string, string];
      const [action, point] = head.split('@') as [FaultStep['action'], FaultStep['point']];
      return { action, point, seq: Number(seq) };
    });
    return { ok: true, steps };
  }
  return { ok: false, reason: faultPlanReason(plan) };
}

function faultPlanReason(plan: string): string {
  if (plan === '') return 'the plan is empty';
  if (/\s/.test(plan)) return 'no spaces allowed';
  const items = plan.split(',');
  for (const [i, item] of items.entries()) {
    const where = items.length > 1 ? `item ${i + 1} "${item}": ` : '';
    if (item === '') return `${where}empty item (stray comma)`;
    const m = /^([^@:]*)@([^@:]*):([^@:]*)$/.exec(item);
    if (!m) {
      if (!item.includes('@')) return `${where}missing "@<point>"`;
      if (!item.includes(':')) return `${where}missing ":<seq>"`;
      return `${where}not ${FAULT_SHAPE}`;
    }
    const [, action, point, seq] = m as unknown as [string, string, string, string];
    if (!(FAULT_ACTIONS as readonly string[]).includes(action)) return `${where}action must be ${FAULT_ACTIONS.join('|')} (got "${action}")`;
    if (!(FAULT_POINTS as readonly string[]).includes(point)) return `${where}point must be ${FAULT_POINTS.join('|')} (got "${point}")`;
    if (!/^(0|[1-9][0-9]*)$/.test(seq)) return `${where}seq must be 0 or a number without sign or leading zeros (got "${seq}")`;
  }
  return `not ${FAULT_SHAPE}[,...]`;
}

// ---------------------------------------------------------------------------------------------
// Schema validation

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false });
const validate = ajv.compile<ScenarioFile>(scenarioSchema);

type Segment = string | number;

function fieldOf(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}

function pointerSegments(pointer: string, data: unknown): Segment[] {
  if (pointer === '') return [];
  const segments: Segment[] = [];
  let value: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value)) {
      const index = Number(key);
      segments.push(index);
      value = value[index];
    } else {
      segments.push(key);
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
  }
  return segments;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

const TYPE_WORDS: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
};

interface RawProblem {
  segments: Segment[];
  /** Where to point: the key of the last segment, or its value. */
  at: 'key' | 'value';
  message: string;
  /** The field named in the message when it is not `segments` (a missing key). */
  field?: Segment[];
}

function schemaProblems(errors: ErrorObject[], data: unknown): RawProblem[] {
  // Errors from inside a failed oneOf branch only explain why that branch did not match;
  // the oneOf error itself says it better.
  const oneOfPaths = errors.filter((e) => e.keyword === 'oneOf').map((e) => `${e.schemaPath}/`);
  // A value of the wrong type makes every other complaint about it noise.
  const wrongType = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  const out: RawProblem[] = [];
  for (const e of errors) {
    if (oneOfPaths.some((p) => e.schemaPath.startsWith(p))) continue;
    if (e.keyword !== 'type' && wrongType.has(e.instancePath)) continue;
    const segments = pointerSegments(e.instancePath, data);
    const schema = e.parentSchema as Record<string, unknown> | undefined;
    const got = describeValue(e.data);
    switch (e.keyword) {
      case 'additionalProperties': {
        const key = (e.params as { additionalProperty: string }).additionalProperty;
        const allowed = Object.keys((schema?.properties as object | undefined) ?? {});
        const hint = closest(key, allowed);
        out.push({
          segments: [...segments, key],
          at: 'key',
          message: `unknown key${hint ? ` (did you mean "${hint}"?)` : ''}; allowed here: ${allowed.join(', ')}`,
        });
        break;
      }
      case 'required': {
        const missing = (e.params as { missingProperty: string }).missingProperty;
        out.push({ segments, at: 'key', field: [...segments, missing], message: 'is required' });
        break;
      }
      case 'type': {
        const want = String((e.params as { type: string }).type);
        out.push({ segments, at: 'value', message: `must be ${TYPE_WORDS[want] ?? want} (got ${got})` });
        break;
      }
      case 'minimum':
      case 'maximum': {
        const min = schema?.minimum as number | undefined;
        const max = schema?.maximum as number | undefined;
        const range = min !== undefined && max !== undefined ? `between ${min} and ${max}` : min !== undefined ? `>= ${min}` : `<= ${max}`;
        out.push({ segments, at: 'value', message: `must be ${range} (got ${got})` });
        break;
      }
      case 'minItems':
      case 'maxItems': {
        const min = schema?.minItems as number | undefined;
        const max = schema?.maxItems as number | undefined;
        const n = Array.isArray(e.data) ? e.data.length : 0;
        const range = min !== undefined && max !== undefined ? `${min}..${max}` : min !== undefined ? `at least ${min}` : `at most ${max}`;
        out.push({ segments, at: 'value', message: `must have ${range} items (got ${n})` });
        break;
      }
      case 'minLength':
        out.push({ segments, at: 'value', message: 'must not be empty' });
        break;
      case 'maxLength':
        out.push({ segments, at: 'value', message: `must be at most ${String(schema?.maxLength)} characters (got ${String(e.data).length})` });
        break;
      case 'enum': {
        const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v));
        out.push({ segments, at: 'value', message: `must be one of ${allowed.join(', ')} (got ${got})` });
        break;
      }
      case 'pattern':
        out.push({ segments, at: 'value', message: patternMessage(String((e.params as { pattern: string }).pattern), String(e.data)) });
        break;
      case 'oneOf': {
        const branches = ((schema?.oneOf as { required?: string[] }[] | undefined) ?? []).flatMap((b) => b.required ?? []);
        const present = branches.filter((k) => e.data !== null && typeof e.data === 'object' && k in e.data);
        out.push({
          segments,
          at: 'key',
          message: `must have exactly one of ${branches.map((k) => `"${k}"`).join(' or ')} (got ${present.length === 0 ? 'neither' : present.map((k) => `"${k}"`).join(' and ')})`,
        });
        break;
      }
      default:
        out.push({ segments, at: 'value', message: e.message ?? `fails ${e.keyword}` });
    }
  }
  return out;
}

function patternMessage(pattern: string, value: string): string {
  if (pattern === FAULT_PLAN_PATTERN) {
    const result = parseFaultPlan(value);
    const reason = result.ok ? '' : `: ${result.reason}`;
    return `must look like ${FAULT_SHAPE} (got ${JSON.stringify(value)})${reason}`;
  }
  if (pattern === NAME_PATTERN) {
    return `must be lowercase letters, digits and dashes, starting with a letter or digit (got ${JSON.stringify(value)})`;
  }
  if (pattern === '\\S') return 'must not be blank';
  return `must match /${pattern}/ (got ${JSON.stringify(value)})`;
}

// ---------------------------------------------------------------------------------------------
// Semantic checks (what the schema cannot say)

function semanticProblems(file: ScenarioFile, filePath: string): RawProblem[] {
  const out: RawProblem[] = [];
  const gen = file.events.generate;
  if (gen) {
    const min = gen.min ?? DEFAULTS.generateMin;
    const max = gen.max ?? DEFAULTS.generateMax;
    if (min > max) {
      out.push({
        segments: ['events', 'generate', gen.min !== undefined ? 'min' : 'max'],
        at: 'value',
        message: `min must be <= max (got min ${min}, max ${max})`,
      });
    }
  }
  const count = file.events.deltas?.length ?? gen?.count ?? 0;
  const seqs = `the script has seqs 0..${count - 1}`;

  const baseName = path.basename(filePath).replace(/\.ya?ml$/, '');
  if (/\.ya?ml$/.test(filePath) && file.name !== baseName) {
    out.push({ segments: ['name'], at: 'value', message: `must equal the file name "${baseName}" (got "${file.name}")` });
  }

  const retention = file.publisher?.retention_start;
  if (retention !== undefined && retention >= count) {
    out.push({ segments: ['publisher', 'retention_start'], at: 'value', message: `must be below the number of events, ${count} (got ${retention})` });
  }

  const incarnations = file.consumer?.incarnations ?? [{}];
  for (const [i, inc] of incarnations.entries()) {
    if (inc.fault === undefined) continue;
    const plan = parseFaultPlan(inc.fault);
    if (!plan.ok) continue; // already reported by the schema's pattern
    for (const step of plan.steps) {
      if (step.seq >= count) {
        out.push({
          segments: ['consumer', 'incarnations', i, 'fault'],
          at: 'value',
          message: `seq ${step.seq} in "${step.action}@${step.point}:${step.seq}" is beyond the script (${seqs})`,
        });
      }
    }
  }

  const inScript = (seq: number, segments: Segment[]) => {
    if (seq >= count) out.push({ segments, at: 'value', message: `seq ${seq} is beyond the script (${seqs})` });
  };
  for (const [i, move] of (file.publisher?.retention_moves ?? []).entries()) inScript(move.to, ['publisher', 'retention_moves', i, 'to']);
  for (const [i, rule] of (file.publisher?.misbehave ?? []).entries()) {
    inScript(rule.seq, ['publisher', 'misbehave', i, 'seq']);
    if ((rule.action === 'replace' || rule.action === 'insert') && rule.bytes === undefined)
      out.push({ segments: ['publisher', 'misbehave', i], at: 'key', message: `${rule.action} needs \`bytes\`` });
    if (rule.bytes !== undefined && /[^\u0000-\u00ff]/.test(rule.bytes))
      out.push({
        segments: ['publisher', 'misbehave', i, 'bytes'],
        at: 'value',
        message: 'only characters U+0000..U+00FF can be sent as single bytes (write other bytes as "\\xNN")',
      });
  }
  const faultNames = new Set<string>();
  for (const [i, fault] of (file.faults ?? []).entries()) {
    if (faultNames.has(fault.name)) out.push({ segments: ['faults', i, 'name'], at: 'value', message: `fault name "${fault.name}" is used twice` });
    faultNames.add(fault.name);
    for (const role of ['start', 'end'] as const) {
      const trigger = fault[role];
      if (!trigger) continue;
      for (const key of ['before_event', 'on_ack'] as const) if (trigger[key] !== undefined) inScript(trigger[key]!, ['faults', i, role, key]);
      const r = trigger.random_events;
      if (r) {
        inScript(r.max, ['faults', i, role, 'random_events', 'max']);
        if (r.min > r.max || r.count > r.max - r.min + 1)
          out.push({
            segments: ['faults', i, role, 'random_events'],
            at: 'key',
            message: `needs min <= max and count <= max - min + 1 (got count ${r.count}, min ${r.min}, max ${r.max})`,
          });
      }
    }
    const signal = fault.process?.signal;
    if (signal === 'SIGSTOP' && !fault.end) out.push({ segments: ['faults', i], at: 'key', message: 'a SIGSTOP fault needs an `end` (when SIGCONT is sent)' });
    if ((signal === 'SIGKILL' || signal === 'SIGTERM') && fault.end)
      out.push({ segments: ['faults', i, 'end'], at: 'key', message: `${signal} is instantaneous: it takes no \`end\`` });
  }
  const finalLast = file.expect?.final_last;
  if (finalLast !== undefined && finalLast > count - 1)
    out.push({ segments: ['expect', 'final_last'], at: 'value', message: `must be between -1 and ${count - 1}: ${seqs} (got ${finalLast})` });

  const maxIncarnations = Math.max(incarnations.length, file.consumer?.restart?.max ?? 0);
  const seen = new Map<number, number>();
  for (const [i, entry] of (file.expect?.transcript ?? []).entries()) {
    const at = (key: string): Segment[] => ['expect', 'transcript', i, key];
    if (entry.incarnation > maxIncarnations) {
      out.push({
        segments: at('incarnation'),
        at: 'value',
        message: `must be between 1 and ${maxIncarnations}, the number of consumer incarnations (got ${entry.incarnation})`,
      });
    }
    const earlier = seen.get(entry.incarnation);
    if (earlier !== undefined) {
      out.push({
        segments: at('incarnation'),
        at: 'value',
        message: `incarnation ${entry.incarnation} already has an entry (expect.transcript[${earlier}])`,
      });
    } else {
      seen.set(entry.incarnation, i);
    }
    if (entry.resume > count - 1) {
      out.push({ segments: at('resume'), at: 'value', message: `must be between -1 and ${count - 1}: ${seqs} (got ${entry.resume})` });
    }
    for (const [j, ack] of (entry.acks ?? []).entries()) {
      if (ack >= count) {
        out.push({ segments: ['expect', 'transcript', i, 'acks', j], at: 'value', message: `ACK ${ack} names no event: ${seqs}` });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// YAML positions

interface Located {
  node: Node | null;
  keyNode: Node | null;
}

/** Follows `segments` through the YAML tree as far as it goes. */
function locate(doc: Document, segments: readonly Segment[]): Located {
  let node: unknown = doc.contents;
  let keyNode: Node | null = null;
  for (const s of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p: Pair) => isScalar(p.key) && String(p.key.value) === String(s));
      if (!pair) return { node: node as Node, keyNode: null };
      keyNode = isScalar(pair.key) ? pair.key : null;
      node = pair.value;
      if (!node) return { node: keyNode, keyNode };
    } else if (isSeq(node) && typeof s === 'number' && node.items[s]) {
      keyNode = null;
      node = node.items[s];
    } else {
      break;
    }
  }
  return { node: (node as Node | null) ?? null, keyNode };
}

function offsetOf(located: Located, at: 'key' | 'value'): number {
  const value = located.node?.range?.[0];
  const key = located.keyNode?.range?.[0];
  // An empty value (`events:` and nothing) has no useful position of its own: use the key.
  const emptyValue = isScalar(located.node) && located.node.value === null && located.node.source === '';
  if (at === 'key' || emptyValue) return key ?? value ?? 0;
  return value ?? key ?? 0;
}

function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.resolve(file);
}

// ---------------------------------------------------------------------------------------------
// Public API

/** Reads, validates and resolves one scenario file; throws ScenarioError listing every problem. */
export function loadScenario(file: string): Scenario {
  const absolute = path.resolve(file);
  const shown = displayPath(absolute);
  let source: string;
  try {
    source = readFileSync(absolute, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((error as Error).message);
    throw new ScenarioError([{ file: shown, line: 1, column: 1, field: '', message: `cannot read scenario file: ${reason}` }]);
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true });
  const problemAt = (offset: number, field: string, message: string): ScenarioProblem => {
    const { line, col } = lineCounter.linePos(offset);
    return { file: shown, line, column: col, field, message };
  };
  const finish = (raw: RawProblem[]): ScenarioProblem[] =>
    raw
      .map((p) => problemAt(offsetOf(locate(doc, p.segments), p.at), fieldOf(p.field ?? p.segments), p.message))
      .sort((a, b) => a.line - b.line || a.column - b.column);

  const yamlProblems = [...doc.errors, ...doc.warnings].map((e) => {
    const offset = e.pos[0];
    const field = e.code === 'DUPLICATE_KEY' ? fieldAtOffset(doc, offset) : '';
    const message = e.code === 'DUPLICATE_KEY' ? 'duplicate key (each key may appear only once)' : `YAML: ${e.message}`;
    return problemAt(offset, field, message);
  });
  if (yamlProblems.length > 0) throw new ScenarioError(yamlProblems);

  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    throw new ScenarioError([problemAt(0, '', 'the file is empty; a scenario needs at least name, description and events')]);
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new ScenarioError([problemAt(0, '', `YAML: ${(error as Error).message}`)]);
  }
  if (!validate(data)) throw new ScenarioError(finish(schemaProblems(validate.errors ?? [], data)));
  const semantic = semanticProblems(data, absolute);
  if (semantic.length > 0) throw new ScenarioError(finish(semantic));

  return resolve(data, absolute, source);
}

function resolve(file: ScenarioFile, absolute: string, source: string): Scenario {
  let deltas: number[];
  let eventSource: Scenario['eventSource'];
  if (file.events.generate) {
    const g = file.events.generate;
    const options = { count: g.count, seed: g.seed, min: g.min ?? DEFAULTS.generateMin, max: g.max ?? DEFAULTS.generateMax };
    deltas = generateDeltas(options);
    eventSource = { kind: 'generated', ...options };
  } else {
    deltas = file.events.deltas ?? [];
    eventSource = { kind: 'explicit' };
  }
  const incarnations = file.consumer?.incarnations ?? [{}];
  const transcript = file.expect?.transcript;
  const timeScale = file.time_scale ?? 1;
  const restart = file.consumer?.restart;
  return {
    file: absolute,
    source,
    name: file.name,
    description: file.description.trim(),
    protocol: file.protocol ?? DEFAULTS.protocol,
    timeoutMs: file.timeout_ms ?? DEFAULTS.timeoutMs,
    deadlineMs: file.deadline_ms ?? DEFAULTS.deadlineMs,
    events: deltas.map((delta, seq) => ({ seq, delta })),
    eventSource,
    timeScale,
    publisher: {
      window: file.publisher?.window ?? DEFAULTS.window,
      retentionStart: file.publisher?.retention_start ?? DEFAULTS.retentionStart,
      redeliverUnacked: file.publisher?.redeliver_unacked ?? DEFAULTS.redeliverUnacked,
      ackDeadlineMs: file.publisher?.ack_deadline_ms ?? DEFAULTS.ackDeadlineMs,
      forgetAcked: file.publisher?.forget_acked ?? false,
      retentionMoves: (file.publisher?.retention_moves ?? []).map((m) => ({ ...m })),
      misbehaviour: (file.publisher?.misbehave ?? []).map(({ repeat, bytes, ...m }) => ({
        ...m,
        ...(bytes !== undefined ? { bytes: bytes.repeat(repeat ?? 1) } : {}),
      })),
    },
    consumer: {
      incarnations: incarnations.map((inc, i) => ({
        ...(inc.fault !== undefined ? { fault: inc.fault } : {}),
        // With a restart policy the listed incarnations are never the last one by definition.
        expectExit: inc.expect_exit ?? defaultExpectExit(inc.fault, !restart && i === incarnations.length - 1),
      })),
      ...(restart ? { restart: { until: restart.until, max: restart.max, delayMs: Math.round((restart.delay_ms ?? 0) * timeScale) } } : {}),
    },
    faults: (file.faults ?? []).flatMap((f) => resolveFault(f, timeScale)),
    expect: {
      ...(transcript
        ? {
            transcript: transcript.map((t) => ({
              incarnation: t.incarnation,
              resume: t.resume,
              ...(t.acks !== undefined ? { acks: [...t.acks] } : {}),
              ...(t.closed_by !== undefined ? { closedBy: t.closed_by } : {}),
            })),
          }
        : {}),
      ...(file.expect?.final_last !== undefined ? { finalLast: file.expect.final_last } : {}),
    },
  };
}

/** One fault of the file as plan entries: `random_events` expands into one fault per drawn point. */
function resolveFault(fault: FaultFile, timeScale: number): FaultPlan[] {
  const effect: FaultEffect = fault.process
    ? { kind: 'signal', signal: fault.process.signal }
    : fault.network?.down
      ? { kind: 'proxy-down' }
      : { kind: 'toxic', toxic: fault.network!.toxic!, stream: fault.network!.stream ?? 'downstream', attributes: { ...fault.network!.attributes } };
  const end = fault.end ? { end: resolveTrigger(fault.end, timeScale) } : {};
  const r = fault.start.random_events;
  if (!r) return [{ name: fault.name, effect, start: resolveTrigger(fault.start, timeScale), ...end }];
  return drawDistinct(r).map((seq, i) => ({ name: `${fault.name}-${i + 1}`, effect, start: { kind: 'before-event', seq }, ...end }));
}

function resolveTrigger(t: TriggerFile, timeScale: number): Trigger {
  const scaled = (ms: number) => Math.round(ms * timeScale);
  if (t.before_event !== undefined) return { kind: 'before-event', seq: t.before_event };
  if (t.on_ack !== undefined) return { kind: 'on-ack', seq: t.on_ack };
  if (t.on_resume !== undefined) return { kind: 'on-resume', n: t.on_resume };
  if (t.incarnation !== undefined) return { kind: 'incarnation', n: t.incarnation };
  if (t.at_ms !== undefined) return { kind: 'at', ms: scaled(t.at_ms) };
  if (t.after_ms !== undefined) return { kind: 'after', ms: scaled(t.after_ms) };
  return { kind: 'incarnation-exit' };
}

/** `count` distinct seqs in min..max, ascending, drawn with the scenario generator's PRNG. */
function drawDistinct(r: { count: number; seed: number; min: number; max: number }): number[] {
  const next = mulberry32(r.seed);
  const picked = new Set<number>();
  while (picked.size < r.count) picked.add(uniformInt(next, r.min, r.max));
  return [...picked].sort((a, b) => a - b);
}

/**
 * Default `expect_exit`: a process whose plan contains `exit` or `raise` must end non-zero
 * (the contract: exit -> 86, raise -> non-zero); otherwise the last incarnation must exit 0
 * (it finishes the stream); any other incarnation may end either way.
 */
export function defaultExpectExit(fault: string | undefined, isLast: boolean): ExpectExit {
  const plan = fault === undefined ? undefined : parseFaultPlan(fault);
  if (plan?.ok && plan.steps.some((s) => s.action === 'exit' || s.action === 'raise')) return 'nonzero';
  return isLast ? 'zero' : 'any';
}

/** The dotted path of the key at `offset` (for duplicate-key errors). */
function fieldAtOffset(doc: Document, offset: number): string {
  const segments: Segment[] = [];
  let node: unknown = doc.contents;
  const inside = (n: unknown): boolean => {
    const r = (n as Node | null)?.range;
    return !!r && r[0] <= offset && offset < Math.max(r[1], r[0] + 1);
  };
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.find((p) => inside(p.key) || inside(p.value));
      if (!pair || !isPair(pair)) break;
      segments.push(isScalar(pair.key) ? String(pair.key.value) : '?');
      if (inside(pair.key)) break;
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => inside(item));
      if (index < 0) break;
      segments.push(index);
      node = node.items[index];
    } else {
      break;
    }
  }
  return fieldOf(segments);
}

/** Scenario names available in `dir`: the `*.yaml` file names without extension, sorted. */
export function scenarioNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/**
 * A scenario argument as typed by a user: an existing file path wins; otherwise a name is
 * looked up as `<scenariosDir>/<name>.yaml`. Returns an absolute path; throws
 * UnknownScenarioError (listing the available names) when neither exists.
 */
export function resolveScenario(nameOrPath: string, scenariosDir: string): string {
  if (isFile(nameOrPath)) return path.resolve(nameOrPath);
  if (new RegExp(NAME_PATTERN).test(nameOrPath)) {
    const candidate = path.resolve(scenariosDir, `${nameOrPath}.yaml`);
    if (isFile(candidate)) return candidate;
  }
  throw new UnknownScenarioError(nameOrPath, scenarioNames(scenariosDir), scenariosDir);
}

/**
 * Loads every `*.yaml` in `dir` (sorted by name). If any file is bad, throws one
 * ScenarioError with the problems of all bad files.
 */
export function listScenarios(dir: string): { name: string; description: string; file: string }[] {
  const out: { name: string; description: string; file: string }[] = [];
  const problems: ScenarioProblem[] = [];
  for (const name of scenarioNames(dir)) {
    try {
      const s = loadScenario(path.join(dir, `${name}.yaml`));
      out.push({ name: s.name, description: s.description, file: s.file });
    } catch (error) {
      if (!(error instanceof ScenarioError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ScenarioError(problems);
  return out;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The candidate within edit distance 2 of `word` (closest first), if any. */
function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
