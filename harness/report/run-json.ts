// The machine-readable record of a run, drawn from its view only (the verdict as written): one
// shape for `chaoslab run --reporter json` (the document below: a status, counts and one record
// per run) and for a batch's results.json (batch-results.ts: the batch's totals and the same
// record per run). Schema: docs/reports.md.

import { join, relative } from 'node:path';
import { REPORT_FILES } from './render-all.js';
import type { RunStatus, RunView } from './view.js';

/** The `--reporter json` document's schema: 2 since `consumerCommand` became `consumer` (the run record of results.json). */
export const RUN_JSON_SCHEMA = 2;

export interface RunJson {
  /** The scenario name, or "name #2" in a repeat, or "consumer × name" in a matrix. */
  label: string;
  scenario: string;
  lab: string;
  /** The consumer's command line (a server run's: its probes'). */
  consumer: string;
  /** A server run: the server under test's command line. */
  server?: string;
  /** Who took part, as the run named them (a server run's instances, probes and clients). */
  parties?: RunView['parties'];
  status: RunStatus;
  durationMs: number;
  /** The run folder (as reports.dir). */
  runDir: string;
  headline: string;
  findings: { code: string; text: string; subject?: unknown }[];
  harnessErrors: { code: string; text: string }[];
  /** The last lines the consumer wrote to stderr, or null. */
  stderrTail: { incarnation: number; lines: string[] } | null;
  diff: string[];
  /** The command line and CHAOSLAB_* environment that re-run this one run by hand. */
  reproduce?: RunView['reproduce'];
  runId: string;
  /** The run folder and its files. */
  reports: { dir: string; journal: string; summary: string; html: string; junit: string };
}

export interface ResultsJson {
  schema: typeof RUN_JSON_SCHEMA;
  /** pass only when every run passed (skipped ones aside); else error > interrupted > fail, as the exit status; skipped when every run was. */
  status: RunStatus;
  counts: Record<RunStatus, number>;
  total: number;
  runs: RunJson[];
}

/** A run's record; its paths are relative to `base` when given (a batch folder), else absolute. */
export function runJson(view: RunView, runDir: string, options: { label?: string; base?: string } = {}): RunJson {
  const at = (p: string): string => (options.base === undefined ? p : relative(options.base, p) || '.');
  const [summary, html, junit] = REPORT_FILES;
  return {
    label: options.label ?? view.name,
    scenario: view.name,
    lab: view.protocol,
    consumer: view.consumerCommand,
    ...(view.serverCommand === undefined ? {} : { server: view.serverCommand }),
    ...(view.parties ? { parties: view.parties } : {}),
    status: view.status,
    durationMs: Math.round(view.durationMs),
    runDir: at(runDir),
    headline: view.headline,
    findings: view.findings.map((f) => ({ code: f.code, text: f.text, ...(f.subject ? { subject: f.subject } : {}) })),
    harnessErrors: view.harnessErrors.map(({ code, text }) => ({ code, text })),
    stderrTail: view.stderrTail ? { incarnation: view.stderrTail.incarnation, lines: view.stderrTail.lines } : null,
    diff: view.diff,
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
  return { schema: RUN_JSON_SCHEMA, status: overallStatus(runs.map((r) => r.status)), counts, total: runs.length, runs };
}
