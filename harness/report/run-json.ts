// The machine-readable shape of runs: `chaoslab run --reporter json` prints it, and a batch's
// results.json can hold the same. Drawn from each run's view only (the verdict as written).

import { join, relative } from 'node:path';
import { REPORT_FILES } from './render-all.js';
import type { RunStatus, RunView } from './view.js';

export const RESULTS_SCHEMA = 1;

export interface RunJson {
  /** The scenario name, or "name #2" in a repeat, or "consumer × name" in a matrix. */
  label: string;
  scenario: string;
  lab: string;
  status: RunStatus;
  headline: string;
  findings: { code: string; text: string }[];
  harnessErrors: { code: string; text: string }[];
  diff: string[];
  durationMs: number;
  consumerCommand: string;
  /** The command line and CHAOSLAB_* environment that re-run this one run by hand. */
  reproduce?: RunView['reproduce'];
  runId: string;
  /** Paths of the run folder and its files, relative to the `base` given (absolute without one). */
  reports: { dir: string; journal: string; summary: string; html: string; junit: string };
}

export interface ResultsJson {
  schema: typeof RESULTS_SCHEMA;
  /** pass only when every run passed (skipped ones aside); else error > interrupted > fail, as the exit status; skipped when every run was. */
  status: RunStatus;
  counts: Record<RunStatus, number>;
  total: number;
  runs: RunJson[];
}

export function runJson(view: RunView, runDir: string, options: { label?: string; base?: string } = {}): RunJson {
  const at = (p: string): string => (options.base === undefined ? p : relative(options.base, p) || '.');
  const [summary, html, junit] = REPORT_FILES;
  return {
    label: options.label ?? view.name,
    scenario: view.name,
    lab: view.protocol,
    status: view.status,
    headline: view.headline,
    findings: view.findings.map(({ code, text }) => ({ code, text })),
    harnessErrors: view.harnessErrors.map(({ code, text }) => ({ code, text })),
    diff: view.diff,
    durationMs: Math.round(view.durationMs),
    consumerCommand: view.consumerCommand,
    ...(view.reproduce ? { reproduce: view.reproduce } : {}),
    runId: view.runId,
    reports: {
      dir: at(runDir),
      journal: at(join(runDir, 'journal.jsonl')),
      summary: at(join(runDir, summary)),
      html: at(join(runDir, html)),
      junit: at(join(runDir, junit)),
    },
  };
}

/** The status of several runs: any harness error wins, then an interrupt, then any failure. */
export function overallStatus(statuses: readonly RunStatus[]): RunStatus {
  for (const s of ['error', 'interrupted', 'fail'] as const) if (statuses.includes(s)) return s;
  return statuses.length > 0 && statuses.every((s) => s === 'skipped') ? 'skipped' : 'pass';
}

export function resultsJson(runs: RunJson[]): ResultsJson {
  const counts: Record<RunStatus, number> = { pass: 0, fail: 0, error: 0, interrupted: 0, skipped: 0 };
  for (const r of runs) counts[r.status]++;
  return { schema: RESULTS_SCHEMA, status: overallStatus(runs.map((r) => r.status)), counts, total: runs.length, runs };
}
