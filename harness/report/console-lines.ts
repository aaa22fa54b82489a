// The console's results as lines of text: a scenario's verdict when it finishes, the final table,
// the end of a batch. Pure functions of the outcomes, so the live console (console.ts) only
// decides when to print them, and agreement.ts can compare them with the other reports.

import { dirname, join, resolve } from 'node:path';
import { type BatchView, totalsLine } from './batch-view.js';
import { seconds } from '../text/format.js';
import { terminalText as inert } from '../text/inert.js';
import { latestTarget } from './run-folder.js';
import { type RunStatus, type RunView, reasonsOf, type StderrTail } from './view.js';

/** What the runner returns, as far as the console needs it. */
export interface FinishedRun {
  status: RunStatus;
  runDir: string;
  error?: string;
  /** The run as its reports show it (absent when the harness failed before rendering). */
  view?: RunView;
}

export interface ScenarioOutcome {
  name: string;
  status: RunStatus;
  durationMs: number;
  /** One line: why (or the pass statement). */
  reason: string;
  runDir?: string;
  /** What the console printed when it finished: the verdict, why, the diff, the consumer's stderr. */
  detail?: string[];
}

/** How the lines look on this console: colours (or none), paths shown relative, the width. */
export interface ConsoleLook {
  paint: (code: string, text: string) => string;
  show: (path: string) => string;
  width: () => number;
}

export const WORD = { pass: 'PASS', fail: 'FAIL', error: 'ERROR', interrupted: 'INTERRUPTED', skipped: 'SKIPPED' } as const;
export const COLOR = { pass: '32', fail: '31', error: '33', interrupted: '35', skipped: '36' } as const;

export const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`);

/** The consumer's last stderr lines, indented under its verdict. */
export const stderrLines = (tail: StderrTail): string[] => [
  `  The consumer said (stderr of incarnation ${tail.incarnation}, last ${tail.lines.length} lines):`,
  ...(tail.omitted ? [`    │ [… ${tail.omitted} earlier lines …]`] : []),
  ...tail.lines.map((l) => `    │ ${inert(l)}`),
];

/** What the console prints when a scenario finishes: the verdict, why, the smallest diff. */
export function outcomeLines(
  name: string,
  result: FinishedRun,
  elapsedMs: number,
  paint: (code: string, text: string) => string = (_code, text) => text,
): { status: RunStatus; durationMs: number; headline: string; lines: string[] } {
  const x = result.view;
  const status = x?.status ?? result.status;
  const durationMs = x?.durationMs ?? elapsedMs;
  const headline = inert(x?.headline ?? result.error ?? (status === 'pass' ? 'passed' : 'no explanation: the run has no verdict'));
  const lines = [`${paint(COLOR[status] ?? COLOR.error, WORD[status] ?? inert(String(status)))}  ${inert(name)}  (${seconds(durationMs)})`];
  if (status === 'pass') {
    lines.push(`  ${headline}`);
  } else {
    lines.push(`  Why: ${headline}`);
    for (const reason of (x ? reasonsOf(x) : []).map(inert).filter((r) => r !== headline)) lines.push(`  - ${reason}`);
    if (x?.diff.length) lines.push('  Smallest diff:', ...x.diff.map((d) => `    ${inert(d)}`));
    if (x?.stderrTail) lines.push(...stderrLines(x.stderrTail));
  }
  return { status, durationMs, headline, lines };
}

/** The table at the end of a run (scenario, verdict, time, reason), the count passed, and where the reports are. */
export function finalTableLines(rows: ScenarioOutcome[], look: ConsoleLook): string[] {
  const { paint, show } = look;
  const head = ['scenario', 'verdict', 'time', 'reason'];
  const cells = rows.map((r) => [inert(r.name), WORD[r.status] ?? inert(String(r.status)), seconds(r.durationMs), inert(r.reason) || '—']);
  const w = [0, 1, 2].map((i) => Math.max(head[i]!.length, ...cells.map((c) => c[i]!.length)));
  const reasonRoom = Math.max(20, look.width() - w[0]! - w[1]! - w[2]! - 8);
  const fmt = (c: string[], colorIt: boolean): string => {
    const verdict = c[1]!.padEnd(w[1]!);
    const status = rows.find((r) => WORD[r.status] === c[1])?.status;
    return `${c[0]!.padEnd(w[0]!)}  ${colorIt && status ? paint(COLOR[status], verdict) : verdict}  ${c[2]!.padStart(w[2]!)}  ${clip(c[3]!, reasonRoom)}`;
  };
  const lines = ['', fmt(head, false), ...cells.map((c) => fmt(c, true))];
  const passed = rows.filter((r) => r.status === 'pass').length;
  const skipped = rows.filter((r) => r.status === 'skipped').length;
  if (rows.length > 1) lines.push(`${passed}/${rows.length} passed${skipped ? `, ${skipped} skipped` : ''}`);
  lines.push(...reportPlaces(rows, w[0]!, show));
  return lines;
}

/** Where the reports are: one run's report.html (and `latest`), or one line per run. */
function reportPlaces(rows: ScenarioOutcome[], nameWidth: number, show: (path: string) => string): string[] {
  const dirs = rows.map((r) => r.runDir).filter((d): d is string => Boolean(d));
  const last = dirs[dirs.length - 1];
  if (!last) return [];
  const parent = dirname(resolve(last));
  const latest = latestTarget(parent) === resolve(last) ? join(parent, 'latest') : undefined;
  if (dirs.length === 1) return [`report: ${show(join(last, 'report.html'))}${latest ? `  (also ${show(latest)}/report.html)` : ''}`];
  const lines = ['reports:'];
  for (const r of rows) if (r.runDir) lines.push(`  ${inert(r.name).padEnd(nameWidth)}  ${show(join(r.runDir, 'report.html'))}`);
  if (latest) lines.push(`  latest: ${show(latest)}`);
  return lines;
}

/** The end of a batch, before its totals: the skipped runs, the runs that did not pass in full, the runs never started. */
export function batchEndLines(rows: ScenarioOutcome[], batch: BatchView, look: ConsoleLook): string[] {
  const { paint, show } = look;
  const lines: string[] = [];
  // Skipped runs did not fail: listed apart, with the reason, and they colour nothing.
  const bad = rows.filter((r) => r.status !== 'pass' && r.status !== 'skipped');
  const skipped = rows.filter((r) => r.status === 'skipped');
  if (skipped.length)
    lines.push('', `Skipped (${skipped.length}):`, ...skipped.map((r) => `  ${paint(COLOR.skipped, WORD.skipped)}  ${inert(r.name)}: ${inert(r.reason)}`));
  if (bad.length) {
    lines.push('', `Did not pass (${bad.length}):`);
    for (const r of bad)
      lines.push(
        '',
        ...(r.detail ?? [`${paint(COLOR[r.status] ?? COLOR.error, WORD[r.status] ?? inert(String(r.status)))}  ${inert(r.name)}`]),
        ...(r.runDir ? [`  report: ${show(join(r.runDir, 'report.html'))}`] : []),
      );
  }
  if (batch.notStarted?.length) lines.push('', `Not started (interrupted): ${batch.notStarted.map((n) => inert(n.label)).join(', ')}`);
  return lines;
}

/** The batch's one line of totals, coloured by its worst run, and where its index is. */
export function batchTotalsLine(rows: ScenarioOutcome[], batch: BatchView, look: ConsoleLook): string {
  const worst = rows.find((r) => r.status !== 'pass' && r.status !== 'skipped')?.status;
  return `${look.paint(worst ? (COLOR[worst] ?? COLOR.error) : COLOR.pass, inert(totalsLine(batch)))} — ${look.show(join(batch.dir, 'index.html'))}`;
}
