// A batch (run --all, --only, --repeat, mutants) as every batch renderer sees it: its runs, each
// with the view its own reports were drawn from, in the order they were asked for, plus what the
// batch itself was (its name, command line, start and end). Nothing here judges: statuses,
// headlines and findings are the runs' own; the totals only count them.

import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { typedCommand } from '../record/reproduce.js';
import type { RunView } from './view.js';

export interface BatchRun {
  /** As the batch named it: the scenario, "name #2" in a repeat, "consumer × name" in a matrix. */
  label: string;
  /** Absolute path of the run folder. */
  runDir: string;
  view: RunView;
}

export interface BatchMeta {
  name: string;
  /** ISO 8601. */
  startedAt: string;
  endedAt: string;
  /** The command that made the batch, as typed (quoted where needed). */
  commandLine: string;
  /** The items an interrupt kept from starting, in the order they were asked for. */
  notStarted?: NotStartedRun[];
  /** What the command that made the batch has to say first (e.g. `chaos`: the failures it confirmed), drawn before the runs. */
  sections?: BatchSection[];
}

/** A few lines a batch's command says of the batch as a whole; `href` relative to the batch folder. */
export interface BatchSection {
  title: string;
  lines: { text: string; href?: string }[];
}

export interface NotStartedRun {
  label: string;
  scenario: string;
  /** The scenario file, relative to the working directory when inside it. */
  file?: string;
}

export interface BatchView extends BatchMeta {
  /** Absolute path of the batch folder. */
  dir: string;
  runs: BatchRun[];
  /** Runs per status; the usual four always present, any other status a run has too. */
  totals: Record<string, number>;
}

/** The statuses every batch counts (and index.html filters by), in the order they are shown. */
export const USUAL_STATUSES = ['fail', 'error', 'interrupted', 'pass'] as const;

export function batchViewOf(dir: string, meta: BatchMeta, runs: BatchRun[]): BatchView {
  const totals: Record<string, number> = Object.fromEntries(USUAL_STATUSES.map((s) => [s, 0]));
  for (const run of runs) totals[run.view.status] = (totals[run.view.status] ?? 0) + 1;
  return { ...meta, dir, runs, totals };
}

/** The statuses of the batch in display order: the usual ones, then any other a run has. */
export const statusesOf = (view: BatchView): string[] => [
  ...USUAL_STATUSES,
  ...Object.keys(view.totals)
    .filter((s) => !(USUAL_STATUSES as readonly string[]).includes(s))
    .sort(),
];

const WORDS: Record<string, [string, string]> = {
  pass: ['passed', 'passed'],
  fail: ['failed', 'failed'],
  error: ['error', 'errors'],
  interrupted: ['interrupted', 'interrupted'],
  skipped: ['skipped', 'skipped'],
};

/** "31 passed, 2 failed, 1 error": the statuses a run has, passes first, then the others in display order. */
export function totalsLine(view: BatchView): string {
  const order = ['pass', ...statusesOf(view).filter((s) => s !== 'pass')];
  const parts = order
    .filter((s) => (view.totals[s] ?? 0) > 0)
    .map((s) => {
      const n = view.totals[s]!;
      const [one, many] = WORDS[s] ?? [s, s];
      return `${n} ${n === 1 ? one : many}`;
    });
  const unstarted = view.notStarted?.length ? [`${view.notStarted.length} not started`] : [];
  return parts.length || unstarted.length ? [...parts, ...unstarted].join(', ') : 'no runs';
}

/** A run folder as a path relative to the batch folder (what index.html links and results.json names). */
export const runPath = (view: BatchView, run: BatchRun): string => relative(view.dir, run.runDir) || '.';

/** Where a status sorts in a batch's lists: failures, errors, interruptions, any other, skipped, passes. */
const LIST_RANK: Record<string, number> = { fail: 0, error: 1, interrupted: 2, skipped: 4, pass: 5 };
const rankOf = (status: string): number => LIST_RANK[status] ?? 3;

/** Failures first, then errors, interrupted runs, any other status, skipped runs and passes; each group in run order. */
export const failuresFirst = (view: BatchView): BatchRun[] =>
  view.runs
    .map((run, i) => ({ run, i }))
    .sort((a, b) => rankOf(a.run.view.status) - rankOf(b.run.view.status) || a.i - b.i)
    .map(({ run }) => run);

export const RESULTS_FILE = 'results.json';

/**
 * What a batch folder's results.json says of the batch itself (name, command line, times, each
 * run's label), for re-rendering it; undefined fields where the file is missing or unreadable.
 */
export function readBatchMeta(dir: string): { meta?: BatchMeta; labels: Map<string, string> } {
  const labels = new Map<string, string>();
  const path = join(dir, RESULTS_FILE);
  if (!existsSync(path)) return { labels };
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as {
      batch?: unknown;
      startedAt?: unknown;
      endedAt?: unknown;
      commandLine?: unknown;
      runs?: { label?: unknown; runDir?: unknown }[];
      notStarted?: { label?: unknown; scenario?: unknown; file?: unknown }[];
      sections?: unknown;
    };
    const notStarted = (Array.isArray(data.notStarted) ? data.notStarted : []).flatMap((n) =>
      typeof n?.label === 'string' && typeof n.scenario === 'string'
        ? [{ label: n.label, scenario: n.scenario, ...(typeof n.file === 'string' ? { file: n.file } : {}) }]
        : [],
    );
    const sections = sectionsOf(data.sections);
    for (const r of Array.isArray(data.runs) ? data.runs : [])
      if (typeof r?.label === 'string' && typeof r.runDir === 'string') labels.set(join(dir, r.runDir), r.label);
    const ok = [data.batch, data.startedAt, data.endedAt, data.commandLine].every((v) => typeof v === 'string');
    return ok
      ? {
          meta: {
            name: data.batch as string,
            startedAt: data.startedAt as string,
            endedAt: data.endedAt as string,
            commandLine: data.commandLine as string,
            ...(notStarted.length ? { notStarted } : {}),
            ...(sections.length ? { sections } : {}),
          },
          labels,
        }
      : { labels };
  } catch {
    return { labels };
  }
}

/** Sections as results.json holds them; anything malformed is left out. */
function sectionsOf(data: unknown): BatchSection[] {
  if (!Array.isArray(data)) return [];
  return data.flatMap((x: { title?: unknown; lines?: unknown }) =>
    typeof x?.title === 'string' && Array.isArray(x.lines)
      ? [
          {
            title: x.title,
            lines: x.lines.flatMap((l: { text?: unknown; href?: unknown }) =>
              typeof l?.text === 'string' ? [{ text: l.text, ...(typeof l.href === 'string' ? { href: l.href } : {}) }] : [],
            ),
          },
        ]
      : [],
  );
}

/** The command line this process was started with, as `chaoslab …`. */
export const ownCommandLine = (argv: readonly string[] = process.argv): string => typedCommand(argv.slice(2));
