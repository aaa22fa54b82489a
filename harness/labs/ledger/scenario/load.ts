// The ledger lab's part of loading a scenario: checks its schema cannot express (fault seqs inside
// the script, retention below the event count, transcript incarnations in range, min <= max) and
// the resolved plan (script generated, defaults filled, durations scaled).

import type { Misbehaviour } from '../../../../publisher/ledger/misbehaviour.js';
import type { LabScenario } from '../../../lab-api/lab.js';
import { generateDeltas } from '../../../scenario/generate.js';
import type { RawProblem, Segment } from '../../../scenario/problems.js';
import { FAULT_SHAPE, parseFaultPlan } from './fault-plan.js';
import { badValue } from './environment-values.js';
import { badEnvironmentValueProblems } from '../../../judge/environment-duty.js';
import { DEFAULTS, FAULT_PLAN_PATTERN, type LedgerFile, ledgerProperties } from './schema.js';

export type ExpectExit = 'zero' | 'nonzero' | 'any';

/** The ledger lab's part of the run plan. */
export interface LedgerPlan {
  /** The resolved script; `events[i].seq === i`. */
  events: { seq: number; delta: number }[];
  eventSource: { kind: 'explicit' } | { kind: 'generated'; count: number; seed: number; min: number; max: number };
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
    /** A bad environment (`consumer.env`, `consumer.unset`): the scenario grades the duty to exit 64 before connecting. */
    badEnvironment?: { set: Record<string, string>; unset: string[] };
  };
  /** `acks` absent = the ACKs of that incarnation are not compared (only its RESUME is). */
  expect: {
    transcript?: { incarnation: number; resume: number; acks?: number[]; closedBy?: 'consumer' | 'publisher' }[];
    /** The consumer's expected final cursor when the scenario ends before the script does; `resync`: where the publisher's first RESYNC found it. */
    finalLast?: number | 'resync';
  };
}

const scriptSize = (file: LedgerFile): number => file.events.deltas?.length ?? file.events.generate?.count ?? 0;

export const ledgerScenario: LabScenario<LedgerPlan> = {
  schema: { properties: ledgerProperties, required: ['events'] },

  patternMessage(pattern, value) {
    if (pattern !== FAULT_PLAN_PATTERN) return undefined;
    const result = parseFaultPlan(value);
    return `must look like ${FAULT_SHAPE} (got ${JSON.stringify(value)})${result.ok ? '' : `: ${result.reason}`}`;
  },

  positions: (file) => scriptSize(file as unknown as LedgerFile),

  semanticProblems(raw) {
    const file = raw as unknown as LedgerFile;
    const out: RawProblem[] = [];
    const gen = file.events.generate;
    if (gen) {
      const min = gen.min ?? DEFAULTS.generateMin;
      const max = gen.max ?? DEFAULTS.generateMax;
      if (min > max)
        out.push({
          segments: ['events', 'generate', gen.min !== undefined ? 'min' : 'max'],
          at: 'value',
          message: `min must be <= max (got min ${min}, max ${max})`,
        });
    }
    const count = scriptSize(file);
    const seqs = `the script has seqs 0..${count - 1}`;
    const inScript = (seq: number, segments: Segment[]) => {
      if (seq >= count) out.push({ segments, at: 'value', message: `seq ${seq} is beyond the script (${seqs})` });
    };

    const retention = file.publisher?.retention_start;
    if (retention !== undefined && retention >= count)
      out.push({ segments: ['publisher', 'retention_start'], at: 'value', message: `must be below the number of events, ${count} (got ${retention})` });

    const incarnations = file.consumer?.incarnations ?? [{}];
    for (const [i, inc] of incarnations.entries()) {
      if (inc.fault === undefined) continue;
      const plan = parseFaultPlan(inc.fault);
      if (!plan.ok) continue; // already reported by the schema's pattern
      for (const step of plan.steps) {
        if (step.seq >= count)
          out.push({
            segments: ['consumer', 'incarnations', i, 'fault'],
            at: 'value',
            message: `seq ${step.seq} in "${step.action}@${step.point}:${step.seq}" is beyond the script (${seqs})`,
          });
      }
    }

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
    out.push(...badEnvironmentProblems(file));
    const finalLast = file.expect?.final_last;
    if (typeof finalLast === 'number' && finalLast > count - 1)
      out.push({ segments: ['expect', 'final_last'], at: 'value', message: `must be between -1 and ${count - 1}: ${seqs} (got ${finalLast})` });

    out.push(...transcriptProblems(file, count, Math.max(incarnations.length, file.consumer?.restart?.max ?? 0)));
    return out;
  },

  resolve(raw, timeScale) {
    const file = raw as unknown as LedgerFile;
    let deltas: number[];
    let eventSource: LedgerPlan['eventSource'];
    if (file.events.generate) {
      const g = file.events.generate;
      const options = { count: g.count, seed: g.seed, min: g.min ?? DEFAULTS.generateMin, max: g.max ?? DEFAULTS.generateMax };
      deltas = generateDeltas(options);
      eventSource = { kind: 'generated', ...options };
    } else {
      deltas = [...(file.events.deltas ?? [])];
      eventSource = { kind: 'explicit' };
    }
    const incarnations = file.consumer?.incarnations ?? [{}];
    const transcript = file.expect?.transcript;
    const restart = file.consumer?.restart;
    return {
      events: deltas.map((delta, seq) => ({ seq, delta })),
      eventSource,
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
        ...(file.consumer?.env || file.consumer?.unset
          ? { badEnvironment: { set: { ...(file.consumer.env ?? {}) } as Record<string, string>, unset: [...(file.consumer.unset ?? [])] } }
          : {}),
      },
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
  },
};

/**
 * A bad environment grades one duty on its own: one plain process that must exit 64 before it
 * connects. Anything that assumes the process gets further is refused, as are values the
 * contract calls valid (the scenario would grade nothing).
 */
function badEnvironmentProblems(file: LedgerFile): RawProblem[] {
  const consumer = file.consumer;
  const env = consumer?.env ?? {};
  const unset = consumer?.unset ?? [];
  if (!consumer?.env && !consumer?.unset) return [];
  const out = badEnvironmentValueProblems(env, unset, (name, value) => badValue(name, value) !== undefined);
  const why = 'with consumer.env or consumer.unset the scenario runs one plain process, which must exit 64 before it connects';
  const incarnations = consumer.incarnations ?? [{}];
  if (incarnations.length > 1 || incarnations.some((inc) => inc.fault !== undefined || inc.expect_exit !== undefined))
    out.push({ segments: ['consumer', 'incarnations'], at: 'key', message: `leave it out: ${why}` });
  if (consumer.restart) out.push({ segments: ['consumer', 'restart'], at: 'key', message: `leave it out: ${why}` });
  if (file.expect?.transcript) out.push({ segments: ['expect', 'transcript'], at: 'key', message: `leave it out: ${why}` });
  if (file.expect?.final_last !== undefined) out.push({ segments: ['expect', 'final_last'], at: 'key', message: `leave it out: ${why}` });
  return out;
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

/** `expect.transcript`: one entry per incarnation there is, its resume and ACKs within the script. */
function transcriptProblems(file: LedgerFile, count: number, maxIncarnations: number): RawProblem[] {
  const out: RawProblem[] = [];
  const seqs = `the script has seqs 0..${count - 1}`;
  const seen = new Map<number, number>();
  for (const [i, entry] of (file.expect?.transcript ?? []).entries()) {
    const at = (key: string): Segment[] => ['expect', 'transcript', i, key];
    if (entry.incarnation > maxIncarnations)
      out.push({
        segments: at('incarnation'),
        at: 'value',
        message: `must be between 1 and ${maxIncarnations}, the number of consumer incarnations (got ${entry.incarnation})`,
      });
    const earlier = seen.get(entry.incarnation);
    if (earlier !== undefined)
      out.push({
        segments: at('incarnation'),
        at: 'value',
        message: `incarnation ${entry.incarnation} already has an entry (expect.transcript[${earlier}])`,
      });
    else seen.set(entry.incarnation, i);
    if (entry.resume > count - 1)
      out.push({ segments: at('resume'), at: 'value', message: `must be between -1 and ${count - 1}: ${seqs} (got ${entry.resume})` });
    for (const [j, ack] of (entry.acks ?? []).entries()) {
      if (ack >= count) out.push({ segments: ['expect', 'transcript', i, 'acks', j], at: 'value', message: `ACK ${ack} names no event: ${seqs}` });
    }
  }
  return out;
}
