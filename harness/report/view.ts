// A run as every renderer sees it: the checker's verdict, as it was written, plus what the
// journal says about the run itself (name, command, duration, whether it finished). Nothing here
// judges: a run without a verdict is either interrupted (stopped by a signal, or no run-end at
// all) or a harness error.

import type { JournalEntry } from '../record/journal.js';
import { type Cast, castOf } from '../record/cast.js';
import { type Reproduce, reproduceLine } from '../record/reproduce.js';
import type { Figure, Finding, Table, Verdict } from '../findings/verdict.js';
import { clip, describeUnknown, processWords, seconds, showLine } from '../text/format.js';

export type RunStatus = Verdict['status'] | 'interrupted';

export interface RunView {
  name: string;
  description: string;
  runId: string;
  protocol: string;
  consumerCommand: string;
  /** A scenario that tests a push server: the server under test (then `consumerCommand` names the probes). */
  serverCommand?: string;
  /** Who took part, as the run named them (a server run's instances, probes and clients); absent when it named none. */
  parties?: { name: string; side: 'server' | 'client'; about?: string }[];
  status: RunStatus;
  /** False when the journal has no run-end (interrupted, or still being written). */
  complete: boolean;
  headline: string;
  findings: Finding[];
  harnessErrors: Finding[];
  diff: string[];
  state?: Table;
  tables: Table[];
  /** The lab's pictures, as data (absent when there are none). */
  figures?: Figure[];
  durationMs: number;
  timeScale: number;
  /** Whether the run was sealed, and why (not), as the run-start entry says. */
  sealing: string;
  /** How to re-run it by hand; `line` is cd + environment + command, ready to paste (absent in older journals). */
  reproduce?: Reproduce & { line: string };
  /** The consumer's own words: the last lines its last process that wrote to stderr wrote there. */
  stderrTail?: StderrTail;
}

export interface StderrTail {
  incarnation: number;
  /** At most STDERR_TAIL_LINES lines, control bytes made visible (safe for a terminal). */
  lines: string[];
  /** Lines of the kept tail left out above these. */
  omitted: number;
}

export const STDERR_TAIL_LINES = 12;

/** The last lines of what the last consumer process that wrote to stderr wrote there. */
export function stderrTailOf(journal: readonly JournalEntry[]): StderrTail | undefined {
  for (let i = journal.length - 1; i >= 0; i--) {
    const e = journal[i]!;
    if (e.type !== 'process-exit' || e.role !== 'consumer' || !e.stderrTail?.trim()) continue;
    const all = e.stderrTail.replace(/\s+$/, '').split('\n');
    const lines = all.slice(-STDERR_TAIL_LINES).map((l) => clip(showLine(l), 300));
    return { incarnation: e.incarnation, lines, omitted: all.length - lines.length };
  }
  return undefined;
}

/** Every finding's text, harness errors first. */
export const reasonsOf = (v: Pick<RunView, 'findings' | 'harnessErrors'>): string[] => [...v.harnessErrors, ...v.findings].map((f) => f.text);

export class OldJournalError extends Error {
  override name = 'OldJournalError';
}

/** The view of a run, from its journal entries (in memory at the end of a run, or read back from the file). */
export function viewOf(journal: readonly JournalEntry[]): RunView {
  let start: Extract<JournalEntry, { type: 'run-start' }> | undefined;
  let end: Extract<JournalEntry, { type: 'run-end' }> | undefined;
  let verdict: Verdict | undefined;
  let timeScale = 1;
  const harnessErrors: Finding[] = [];
  const stopAt = journal.flatMap((e) => (e.type === 'run-end' && e.interrupted ? [e.interrupted.at] : []))[0];
  for (const e of journal) {
    if (e.type === 'run-start') start ??= e;
    else if (e.type === 'run-end') end ??= e;
    else if (e.type === 'verdict') verdict ??= e.verdict;
    // After an interrupt, what failed while the run was being stopped failed because of the stop.
    else if (e.type === 'harness-error' && !(stopAt !== undefined && e.t > stopAt))
      harnessErrors.push({ code: 'harness-error', text: `harness: ${e.message}` });
    else if (e.type === 'scenario') timeScale = (e.plan as { timeScale?: number } | undefined)?.timeScale ?? 1;
  }
  if (start && start.schema !== 2)
    throw new OldJournalError(
      `this journal has schema ${start.schema}, written by an older chaoslab; its reports cannot be re-rendered by this one (re-run the scenario)`,
    );
  const last = journal[journal.length - 1];
  const status: RunStatus = end?.status ?? 'interrupted';
  const stderrTail = stderrTailOf(journal);
  const base = {
    name: start?.scenario?.name ?? 'unknown scenario',
    description: start?.scenario?.description ?? '',
    runId: start?.runId ?? '',
    protocol: start?.protocol ?? '',
    consumerCommand: start?.consumerCommand ?? '',
    ...(start?.serverCommand ? { serverCommand: start.serverCommand } : {}),
    ...partiesOf(journal),
    status,
    complete: Boolean(end),
    durationMs: end?.t ?? last?.t ?? 0,
    timeScale,
    sealing: start?.sealing ?? '',
    ...(start?.reproduce ? { reproduce: { ...start.reproduce, line: reproduceLine(start.reproduce, start.cwd) } } : {}),
    ...(stderrTail ? { stderrTail } : {}),
  };
  if (verdict && end && end.status !== 'interrupted')
    return {
      ...base,
      headline: verdict.headline,
      findings: verdict.findings,
      harnessErrors: verdict.harnessErrors,
      diff: verdict.diff,
      state: verdict.state,
      tables: verdict.tables,
      ...(verdict.figures?.length ? { figures: verdict.figures } : {}),
    };
  const stop = end?.interrupted;
  const headline = stop
    ? `interrupted by ${stop.by} at ${seconds(stop.at)}, after ${entryInWords(journal.filter((e) => e.t <= stop.at && e.type !== 'run-end').at(-1), castOf(journal))}: the run has no verdict`
    : status === 'interrupted'
      ? `the run did not finish: the journal stops at ${seconds(last?.t ?? 0)}, after ${entryInWords(last, castOf(journal))}`
      : (harnessErrors[0]?.text ?? 'the harness failed (no message recorded)');
  return { ...base, headline, findings: [], harnessErrors, diff: [], tables: [] };
}

/** The run's parties in a few words each, when it named any. */
function partiesOf(journal: readonly JournalEntry[]): Pick<RunView, 'parties'> {
  const cast = castOf(journal);
  if (cast.empty) return {};
  return { parties: cast.parties.map(({ name, side, about }) => ({ name, side, ...(about === undefined ? {} : { about }) })) };
}

/** A journal entry in a few words, for "the journal stops after …". */
function entryInWords(e: JournalEntry | undefined, cast: Cast): string {
  if (!e) return 'nothing';
  const x = e as unknown as Record<string, unknown>;
  const who =
    cast.nameOf(x.role, x.incarnation) ??
    (x.role === 'control' || x.role === 'server' || x.incarnation !== undefined ? processWords(x.role, x.incarnation) : 'the consumer');
  switch (e.type) {
    case 'run-start':
    case 'scenario':
      return 'the run started';
    case 'toxiproxy':
      return 'Toxiproxy was ready';
    case 'stream':
    case 'proxy':
      return 'the publisher was set up';
    case 'process-start':
      return `${who} started (pid ${e.pid})`;
    case 'process-exit':
      return `${who} ended`;
    case 'wire':
      // A line in a headline: a feed lab's JSON lines are long, their start says enough.
      return `${e.stream} traffic (${e.kind}${'line' in e ? ` ${clipped(JSON.stringify(e.line), 60)}` : ''})`;
    case 'store-read':
      return `a read of ${who}'s file`;
    case 'verdict':
      return 'the verdict';
    default:
      return describeUnknown(x, 80);
  }
}

const clipped = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
