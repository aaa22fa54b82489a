// The stability check of `chaoslab grade` (issue 29, "Verdicts that do not depend on the
// machine's mood"): the same class (the lab's references and mutants) graded N times, optionally
// while busy processes hog the CPU, and every submission's N scores compared. Stable: each
// submission got the same score on every attempt. `make grade-validity STABILITY=N [HOG=n]`
// runs it (scripts/grade-validity.mjs); the comparison and its table are pure and tested apart.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { markdownText } from '../../text/inert.js';
import type { ClassReport } from '../class/class-data.js';
import type { ValiditySubmission } from './class-folder.js';

export interface StabilityRow {
  submission: string;
  kind: ValiditySubmission['kind'];
  /** Each attempt's total, or undefined where that attempt has no score for it. */
  totals: (number | undefined)[];
  /** Attempts (1-based) where some scenario was not graded (harness errors): those totals judge nothing. */
  notGraded: number[];
  /** The scenarios whose score was not the same on every attempt. */
  differing: string[];
  /** Every attempt graded it, and gave it the same score on every scenario. */
  identical: boolean;
}

export interface Stability {
  lab: string;
  attempts: number;
  /** Busy processes that ran beside the gradings (0: none). */
  hogs: number;
  rows: StabilityRow[];
  verdict: 'stable' | 'not stable' | 'not judged';
}

/** Compares the attempts' class reports (undefined: that attempt gave none) submission by submission. */
export function compareAttempts(input: {
  lab: string;
  submissions: readonly Pick<ValiditySubmission, 'name' | 'kind'>[];
  attempts: readonly (ClassReport | undefined)[];
  hogs?: number;
}): Stability {
  const rows = input.submissions.map((s): StabilityRow => {
    const graded = input.attempts.map((a) => a?.submissions.find((x) => x.submission === s.name));
    const totals = graded.map((g) => g?.score);
    const notGraded = graded.flatMap((g, i) => (g?.scenarios.some((x) => x.status === 'not graded') ? [i + 1] : []));
    const names = graded.find((g) => g)?.scenarios.map((x) => x.name) ?? [];
    const differing = names.filter((name) => new Set(graded.map((g) => g?.scenarios.find((x) => x.name === name)?.score)).size > 1);
    const identical = totals.every((t) => t !== undefined && t === totals[0]) && differing.length === 0 && notGraded.length === 0;
    return { submission: s.name, kind: s.kind, totals, notGraded, differing, identical };
  });
  // Scores that differ between judged attempts are unstable whatever else happened; missing
  // or not-graded attempts alone leave the question open.
  const judgedDiffer = rows.some((r) => {
    const judged = r.totals.filter((t, i) => t !== undefined && !r.notGraded.includes(i + 1));
    return new Set(judged).size > 1 || (r.differing.length > 0 && r.notGraded.length === 0 && r.totals.every((t) => t !== undefined));
  });
  const verdict = judgedDiffer ? 'not stable' : rows.every((r) => r.identical) && rows.length > 0 ? 'stable' : 'not judged';
  return { lab: input.lab, attempts: input.attempts.length, hogs: input.hogs ?? 0, rows, verdict };
}

export const stabilityExitStatus = (s: Stability): number => (s.verdict === 'stable' ? 0 : s.verdict === 'not stable' ? 1 : 2);

export function stabilityVerdictLine(s: Stability): string {
  const how = `${s.rows.length} submissions graded ${s.attempts} times${s.hogs ? ` beside ${s.hogs} CPU hog(s)` : ''}`;
  const unstable = s.rows.filter((r) => !r.identical).map((r) => r.submission);
  if (s.verdict === 'stable') return `grade stability (${s.lab}): STABLE — ${how}: every submission got the same score each time`;
  if (s.verdict === 'not stable') return `grade stability (${s.lab}): NOT STABLE — ${how}: scores differ for ${unstable.join(', ')}`;
  return `grade stability (${s.lab}): NOT JUDGED — ${how}: some attempts did not grade ${unstable.join(', ')} (harness errors or no output)`;
}

const cellText = (r: StabilityRow, i: number): string => {
  const total = r.totals[i];
  if (total === undefined) return '–';
  return r.notGraded.includes(i + 1) ? `${total} (not graded)` : String(total);
};

/** The table (submission × attempt) as the console prints it, with the verdict last. */
export function renderStabilityTable(s: Stability): string {
  const w = Math.max(10, ...s.rows.map((r) => r.submission.length)) + 2;
  const cols = Array.from({ length: s.attempts }, (_, i) => `#${i + 1}`.padEnd(10)).join('');
  const lines = [`${'submission'.padEnd(w)}${'kind'.padEnd(11)}${cols}same`];
  for (const r of s.rows)
    lines.push(
      `${r.submission.padEnd(w)}${r.kind.padEnd(11)}${r.totals.map((_, i) => cellText(r, i).padEnd(10)).join('')}${r.identical ? 'yes' : `NO${r.differing.length ? ` (${r.differing.join(', ')})` : ''}`}`,
    );
  return [...lines, '', stabilityVerdictLine(s)].join('\n');
}

export function renderStabilityMarkdown(s: Stability, notes: readonly string[]): string {
  const head = `| submission | kind | ${Array.from({ length: s.attempts }, (_, i) => `#${i + 1}`).join(' | ')} | same |`;
  const rule = `|${'---|'.repeat(s.attempts + 3)}`;
  const rows = s.rows.map(
    (r) =>
      `| ${markdownText(r.submission)} | ${r.kind} | ${r.totals.map((_, i) => cellText(r, i)).join(' | ')} | ${r.identical ? 'yes' : `**no**${r.differing.length ? ` (${r.differing.map(markdownText).join(', ')})` : ''}`} |`,
  );
  return [`# Grade stability — ${s.lab} lab`, '', stabilityVerdictLine(s), '', head, rule, ...rows, '', ...notes.map((n) => `- ${markdownText(n)}`), ''].join(
    '\n',
  );
}

/** stability.json and stability.md in `out`. */
export function writeStability(out: string, s: Stability, notes: readonly string[]): void {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'stability.json'), `${JSON.stringify(s, null, 2)}\n`);
  writeFileSync(join(out, 'stability.md'), renderStabilityMarkdown(s, notes));
}

/**
 * A busy loop that ends when its parent (the pid given as its argument) does, whatever ended the
 * parent (SIGTERM or SIGKILL fire no 'exit' handler): it looks at its parent pid between rounds.
 */
export const HOG = 'const parent = Number(process.argv[1]); for (;;) { for (let i = 0; i < 1e7; i++); if (process.ppid !== parent) process.exit(0); }';

/** `count` busy processes (a CPU hog); stop() ends them, and so does this process's exit or death. */
export function startHogs(count: number): { stop: () => void } {
  const hogs: ChildProcess[] = Array.from({ length: count }, () => spawn(process.execPath, ['-e', HOG, String(process.pid)], { stdio: 'ignore' }));
  const stop = () => {
    for (const hog of hogs) if (hog.exitCode === null && hog.signalCode === null) hog.kill('SIGKILL');
    process.off('exit', stop);
  };
  process.on('exit', stop);
  return { stop };
}
