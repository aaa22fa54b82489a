// The restart storm's checker (issue 12), against the contract's section 6: no retry earlier
// than half the base; growth up to the cap and jitter at every step, cap included (a
// Kolmogorov–Smirnov test of the normalised delays against U(0.5, 1.5), before the cap and at
// the cap separately: storm/ks.ts); n back to 0 after a connection that delivered data (the
// first retry of every later restart); every process alive until SIGTERM, then exit 0.

import type { JournalEntry } from '../../../record/journal.js';
import { type Finding, type Figure, statusOf, type Table, type Verdict } from '../../../findings/verdict.js';
import { failHeadline, rankFindings } from '../../../findings/priority.js';
import { FEED_PRIORITIES } from '../priorities.js';
import { SIGTERM_FAULT } from '../check/facts.js';
import type { FeedPlan, StormPlan } from '../scenario/plan.js';
import { type StormAttempt, stormAttempts } from './attempts.js';
import { BIN_MS, simulateCrowd } from './crowd.js';
import { jitteredBelowStep, KS_ALPHA, KS_TOLERANCE, type KsResult, ksTest, quantile, shapeOf } from './ks.js';
import { preCapSteps } from './scenario.js';
import { STORM_FIGURE, type StormFigureData } from './figure-data.js';

const ms = (x: number): string => `${Math.round(x)} ms`;
const fixed = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : '—');

export interface StormJudgement {
  findings: Finding[];
  tables: Table[];
  state: Table;
  figure: Figure;
}

/** The delay before an attempt over its nominal step min(BASE × 2^n, CAP). */
export const stepOf = (base: number, cap: number, n: number): number => Math.min(base * 2 ** Math.min(n, 40), cap);

/**
 * The largest median first retry after a restart that still means n went back to 0: halfway
 * between the longest wait at n = 0 (1.5 × BASE) and the shortest at the cap (CAP / 2), where a
 * process that kept its n would be; at least 100 ms above 1.5 × BASE (scheduling adds delay).
 */
export const resetLimitMs = (base: number, cap: number): number => Math.max(1.5 * base + 100, (1.5 * base + cap / 2) / 2);

/** The contract's rule for the random factor, said where a finding shows it missing. */
const JITTER_EVERY_TIME = 'wait min(BASE × 2^n, CAP) × U with U drawn uniformly from [0.5, 1.5] for every attempt, also at the cap (CONTRACT.md §6)';

type ExitEntry = Extract<JournalEntry, { type: 'process-exit' }>;
type StormRecord = ReturnType<typeof stormAttempts>[number];

export function judgeStorm(journal: readonly JournalEntry[], plan: FeedPlan, storm: StormPlan): StormJudgement {
  const { backoffBaseMs: base, backoffCapMs: cap } = plan.consumer;
  const nCap = preCapSteps(base, cap);
  const records = stormAttempts(journal, storm.processes);
  const all = records.flatMap((r) => r.attempts.filter((a) => a.round >= 1));
  const exits = consumerExits(journal);
  const norm = (a: StormAttempt) => a.delayMs / stepOf(base, cap, a.n);
  const ks = { pre: ksTest(all.filter((a) => a.n < nCap).map(norm)), cap: ksTest(all.filter((a) => a.n >= nCap).map(norm)) };
  const early = all.filter((a) => a.delayMs < base / 2);
  const firsts = all.filter((a) => a.round >= 2 && a.index === 0);
  const findings: Finding[] = rankFindings(
    [
      ...exitFindings(records, exits, sigtermTimes(journal)),
      ...unansweredFindings(records),
      ...noRetryFindings(records),
      ...earlyFindings(early, all.length, base),
      ...backoffFindings(all, ks, base, cap, nCap, norm),
      ...resetFindings(firsts, base, cap),
    ],
    FEED_PRIORITIES,
  );
  const tables = [statsTable(all, ks, early, firsts, base, cap, nCap)];
  return { findings, tables, state: processTable(records, exits, storm), figure: figureOf(records, all, storm, base, cap, nCap, norm) };
}

/** Each consumer process's exit, by incarnation. */
function consumerExits(journal: readonly JournalEntry[]): Map<number, ExitEntry> {
  const exits = new Map<number, ExitEntry>();
  for (const e of journal) if (e.type === 'process-exit' && e.role === 'consumer') exits.set(e.incarnation, e);
  return exits;
}

/** When each consumer process was sent SIGTERM, by incarnation. */
function sigtermTimes(journal: readonly JournalEntry[]): Map<number, number> {
  const sigterm = new Map<number, number>();
  for (const e of journal) if (e.type === 'fault' && e.name === SIGTERM_FAULT.consumer && e.incarnation !== undefined) sigterm.set(e.incarnation, e.t);
  return sigterm;
}

/** Processes: each ran to the end and exited 0 on SIGTERM. */
function exitFindings(records: readonly StormRecord[], exits: Map<number, ExitEntry>, sigterm: Map<number, number>): Finding[] {
  const findings: Finding[] = [];
  for (const r of records) {
    const exit = exits.get(r.process);
    const termed = sigterm.get(r.process);
    if (!exit) continue;
    if (termed === undefined || exit.t < termed)
      findings.push({
        code: 'storm-exit',
        text: `process ${r.process} ended during the storm (exit ${exit.code ?? exit.signal}) instead of reconnecting until SIGTERM`,
        subject: { process: { role: 'consumer', incarnation: r.process }, t: exit.t },
      });
    else if (exit.code !== 0 || exit.killedBy)
      findings.push({
        code: 'storm-exit',
        text: `process ${r.process} did not exit 0 on SIGTERM (${exit.killedBy ? `killed by the ${exit.killedBy}` : `exit ${exit.code ?? exit.signal}`})`,
        subject: { process: { role: 'consumer', incarnation: r.process }, t: exit.t },
      });
  }
  return findings;
}

/** Every process reconnected after every restart. */
/**
 * Processes that sent lines but never got a snapshot or an event: the server could not read
 * their subscribe, so their backoff after a served connection was never shown.
 */
function unansweredFindings(records: readonly StormRecord[]): Finding[] {
  const unserved = records.filter((r) => !r.served && r.firstLine !== undefined);
  if (unserved.length === 0) return [];
  const first = unserved[0]!;
  const line = first.firstLine!.length > 120 ? `${first.firstLine!.slice(0, 120)}…` : first.firstLine!;
  return [
    {
      code: 'storm-subscribe-unanswered',
      text: `${unserved.length === records.length ? `no process (of ${records.length})` : `${unserved.length} of ${records.length} processes`} got a snapshot or an event: the server could not read ${unserved.length === 1 ? 'its subscribe' : 'their subscribes'} as one (process ${first.process}'s first line: ${JSON.stringify(line)}), so no backoff after a served connection could be shown — a subscribe is one JSON object with op, client, topics, cursor and blockHash, its members in any order (CONTRACT.md §2)`,
      subject: { process: { role: 'consumer', incarnation: first.process } },
    },
  ];
}

function noRetryFindings(records: readonly StormRecord[]): Finding[] {
  const findings: Finding[] = [];
  for (const r of records)
    for (let round = 1; round <= r.roundStarts.length; round++)
      if (!r.attempts.some((a) => a.round === round))
        findings.push({
          code: 'storm-no-retry',
          text: `process ${r.process} never reconnected after restart ${round}`,
          subject: { process: { role: 'consumer', incarnation: r.process } },
        });
  return findings;
}

/** No retry earlier than half the base. */
function earlyFindings(early: readonly StormAttempt[], total: number, base: number): Finding[] {
  if (early.length === 0) return [];
  const first = early.reduce((a, b) => (b.delayMs < a.delayMs ? b : a));
  return [
    {
      code: 'storm-too-early',
      text: `${early.length} of ${total} retries came earlier than half the base (BASE/2 = ${ms(base / 2)}): the earliest ${fixed(first.delayMs, 1)} ms after the connection ended (process ${first.process}, restart ${first.round}, retry ${first.index + 1}); min(BASE × 2^n, CAP) × U(0.5, 1.5) is never below BASE/2, measured from the moment the connection ended (CONTRACT.md §6)`,
      subject: { process: { role: 'consumer', incarnation: first.process }, t: first.t },
    },
  ];
}

/** Jitter and growth: the normalised delays, before the cap and at the cap, never pooled. */
function backoffFindings(
  all: readonly StormAttempt[],
  ks: { pre: KsResult; cap: KsResult },
  base: number,
  cap: number,
  nCap: number,
  norm: (a: StormAttempt) => number,
): Finding[] {
  let preCapFinding: Finding | undefined;
  let atCapFinding: Finding | undefined;
  let capJitter = false;
  const pre = all.filter((a) => a.n < nCap);
  const atCap = all.filter((a) => a.n >= nCap);
  const ksWords = (r: KsResult) =>
    `Kolmogorov–Smirnov D⁺ = ${fixed(r.plus)} over ${r.n} delays divided by their step, above the bound ${fixed(r.threshold)} (√(ln(2/α)/2N) + ${KS_TOLERANCE}, α = ${KS_ALPHA.toExponential()})`;
  const medians = (xs: StormAttempt[]) => {
    const levels = [...new Set(xs.map((a) => Math.min(a.n, nCap)))].sort((a, b) => a - b);
    return levels
      .map((n) => {
        const at = xs.filter((a) => Math.min(a.n, nCap) === n).map((a) => a.delayMs);
        return `${n >= nCap ? 'at the cap' : `n = ${n}`} ${ms(quantile(at, 0.5))} (step ${ms(stepOf(base, cap, n))})`;
      })
      .join(', ');
  };
  if (!ks.cap.pass) {
    const xs = atCap.map(norm);
    const shape = shapeOf(xs);
    const above = xs.filter((x) => x > 1.25).length / xs.length;
    const spread = fixed(quantile(xs, 0.75) - quantile(xs, 0.25));
    // Jitter before the cap, all at CAP on it: the jittered value was clamped, min(CAP, BASE × 2^n × U).
    // (Delays below their step, not the KS test or the spread: a loaded machine's scheduling
    // spreads a jitterless sample and can pass it, but never shortens a wait.)
    const clampedFlat = shape === 'no-jitter' && jitteredBelowStep(pre.map(norm)) && Math.abs(quantile(xs, 0.5) - 1) < 0.1;
    const why =
      shape === 'clamped' || clampedFlat
        ? `the delay is clamped after the jitter: at the cap every retry waits ${clampedFlat ? 'exactly' : 'at most'} CAP (${ms(cap)}; ${
            clampedFlat ? `the middle half of the delays at the cap spans ${spread} of CAP` : `only ${Math.round(above * 100)} % of them exceed 1.25 × CAP`
          }, where U(0.5, 1.5) spreads them from 0.5 to 1.5 × CAP) — that is min(CAP, BASE × 2^n × U) instead of min(BASE × 2^n, CAP) × U: clamp the step, then multiply by U, or every client at the cap comes back in step (CONTRACT.md §6)`
        : shape === 'no-jitter'
          ? `no jitter at the cap: every retry at the cap waits CAP exactly (the middle half of the delays at the cap spans ${spread} of CAP; U(0.5, 1.5) spans 0.50), so every client of a restarted server comes back in step — ${JITTER_EVERY_TIME}`
          : `the delays at the cap do not follow CAP × U(0.5, 1.5): median ${medians(atCap)} (CONTRACT.md §6)`;
    atCapFinding = { code: 'storm-backoff-at-cap', text: `${why}; ${ksWords(ks.cap)}` };
    capJitter = shape !== 'other' || clampedFlat;
  }
  if (!ks.pre.pass) {
    const shape = shapeOf(pre.map(norm));
    const why =
      shape === 'no-jitter'
        ? `no jitter before the cap: every retry waits its step min(BASE × 2^n, CAP) exactly (the middle half of the normalised delays spans ${fixed(quantile(pre.map(norm), 0.75) - quantile(pre.map(norm), 0.25))}; U(0.5, 1.5) spans 0.50) — ${JITTER_EVERY_TIME}`
        : `the delays before the cap do not grow as min(BASE × 2^n, CAP) × U(0.5, 1.5): median ${medians(pre)} (CONTRACT.md §6)`;
    preCapFinding = { code: 'storm-backoff-before-cap', text: `${why}; ${ksWords(ks.pre)}` };
  }
  // A jitter missing or clamped at the cap leads. The cap's steps are the longest, so scheduling
  // stretches them least: a jitterless backoff fails there in every run, while beside a CPU hog
  // its short pre-cap steps can be stretched to just within the bound (D⁺ 0.28 at 0.28), and
  // with the pre-cap finding first the same consumer's leading finding changed from run to run.
  // Growth is shown best before the cap, where the steps differ: that finding leads otherwise.
  return (capJitter ? [atCapFinding, preCapFinding] : [preCapFinding, atCapFinding]).filter((f): f is Finding => f !== undefined);
}

/**
 * n back to 0 after a connection that delivered data: the first retry of every later restart.
 * Judged on the shortest of them: scheduling only adds delay (20 clients reconnecting in step
 * queue up behind each other), and a process that kept its n waits at least CAP / 2.
 */
function resetFindings(firsts: readonly StormAttempt[], base: number, cap: number): Finding[] {
  const firstMin = Math.min(...firsts.map((a) => a.delayMs));
  if (firsts.length === 0 || firstMin <= resetLimitMs(base, cap)) return [];
  return [
    {
      code: 'storm-not-reset',
      text: `n was not reset after a successful subscription: the first retry after each restart that followed a served event waited at least ${ms(firstMin)} in all ${firsts.length} (processes × restarts); with n back to 0 it waits at most 1.5 × BASE = ${ms(1.5 * base)} — n returns to 0 after a connection on which a snapshot or an event arrived (CONTRACT.md §6)`,
    },
  ];
}

function statsTable(
  all: readonly StormAttempt[],
  ks: { pre: KsResult; cap: KsResult },
  early: readonly StormAttempt[],
  firsts: readonly StormAttempt[],
  base: number,
  cap: number,
  nCap: number,
): Table {
  const firstMin = Math.min(...firsts.map((a) => a.delayMs));
  const row = (label: string, r: KsResult) => ({
    label,
    cells: [r.n, r.n === 0 ? '—' : `${fixed(r.plus)} (D⁻ ${fixed(r.minus)})`, r.n === 0 ? '—' : fixed(r.threshold)],
    ...(r.n === 0 ? {} : { ok: r.pass }),
  });
  return {
    id: 'storm-backoff',
    title: 'Backoff statistics',
    columns: ['attempts', 'D⁺ or value', 'bound'],
    rows: [
      row(`KS before the cap (n < ${nCap})`, ks.pre),
      row(`KS at the cap (n ≥ ${nCap})`, ks.cap),
      {
        label: 'earliest retry (ms)',
        cells: [all.length, all.length ? fixed(Math.min(...all.map((a) => a.delayMs)), 1) : '—', `≥ ${base / 2}`],
        ...(all.length ? { ok: early.length === 0 } : {}),
      },
      {
        label: 'shortest first retry after a served event (ms)',
        cells: [firsts.length, firsts.length ? Math.round(firstMin) : '—', `≤ ${resetLimitMs(base, cap)}`],
        ...(firsts.length ? { ok: firstMin <= resetLimitMs(base, cap) } : {}),
      },
    ],
    note: `Delays are divided by their step min(BASE × 2^n, CAP) (BASE ${base} ms, CAP ${cap} ms) and compared with U(0.5, 1.5); a sample fails when D⁺ (the sample's CDF above U's: waits too short or too regular) > √(ln(2/α)/2N) + ${KS_TOLERANCE}, α = ${KS_ALPHA.toExponential()}. D⁻ (waits too long) is shown, not judged: scheduling delays, which only ever lengthen a wait, produce it on a loaded machine.`,
  };
}

function processTable(records: readonly StormRecord[], exits: Map<number, ExitEntry>, storm: StormPlan): Table {
  return {
    id: 'storm-processes',
    title: 'Processes',
    columns: [...Array.from({ length: storm.rounds }, (_, i) => `restart ${i + 1}: attempts`), 'shortest wait (ms)', 'exit'],
    rows: records.map((r) => {
      const exit = exits.get(r.process);
      const mine = r.attempts.filter((a) => a.round >= 1);
      return {
        label: `process ${r.process}`,
        cells: [
          ...Array.from({ length: storm.rounds }, (_, i) => r.attempts.filter((a) => a.round === i + 1).length),
          mine.length ? Math.round(Math.min(...mine.map((a) => a.delayMs))) : null,
          exit ? (exit.killedBy ? `killed (${exit.killedBy})` : String(exit.code ?? exit.signal)) : null,
        ],
      };
    }),
    empty: 'no process ran',
  };
}

function figureOf(
  records: ReturnType<typeof stormAttempts>,
  all: StormAttempt[],
  storm: StormPlan,
  base: number,
  cap: number,
  nCap: number,
  norm: (a: StormAttempt) => number,
): Figure {
  const zero = Math.min(...records.flatMap((r) => r.roundStarts.slice(0, 1)), Number.POSITIVE_INFINITY);
  const origin = Number.isFinite(zero) ? zero : 0;
  const last = Math.max(origin, ...all.map((a) => a.t));
  const bins = Math.max(1, Math.ceil((last - origin + 500) / BIN_MS));
  const cells = new Map<string, [number, number, number]>();
  for (const a of all) {
    const bin = Math.floor((a.t - origin) / BIN_MS);
    if (bin < 0 || bin >= bins) continue;
    const key = `${bin}:${a.process - 1}`;
    const cell = cells.get(key) ?? [bin, a.process - 1, 0];
    cell[2]++;
    cells.set(key, cell);
  }
  const restarts = [...new Set(records.flatMap((r) => r.roundStarts.map((t) => Math.floor((t - origin) / BIN_MS))))].sort((a, b) => a - b);
  const spanMs = storm.roundMs;
  const crowd = simulateCrowd({
    baseMs: base,
    capMs: cap,
    spanMs,
    preCap: all.filter((a) => a.n < nCap).map(norm),
    atCap: all.filter((a) => a.n >= nCap).map(norm),
  });
  const data: StormFigureData = {
    binMs: BIN_MS,
    processes: storm.processes,
    cells: [...cells.values()],
    bins,
    restarts,
    crowd: { clients: 50_000, spanMs, ...crowd },
  };
  return {
    id: STORM_FIGURE,
    title: 'The restart storm',
    caption: `Attempts per ${BIN_MS} ms, all ${storm.processes} processes stacked; beside it, the same restart played by 50 000 clients drawing from the measured delays, against a twin without jitter: peak ${Math.round(crowd.peakJittered).toLocaleString('en')} against ${Math.round(crowd.peakUnjittered).toLocaleString('en')} accepts per second.`,
    data,
  };
}

/** The storm run's verdict. */
export function checkStorm(journal: readonly JournalEntry[], plan: FeedPlan, storm: StormPlan): Verdict {
  const judged = judgeStorm(journal, plan, storm);
  const status = statusOf(judged.findings, []);
  return {
    status,
    headline:
      status === 'pass'
        ? `${storm.processes} processes came back from ${storm.rounds} restarts with jittered exponential backoff, n reset after each served event`
        : failHeadline({ findings: judged.findings, harnessErrors: [] }),
    findings: judged.findings,
    harnessErrors: [],
    diff: judged.findings.map((f) => f.text),
    state: judged.state,
    tables: judged.tables,
    figures: [judged.figure],
  };
}
