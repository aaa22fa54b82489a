// Several scenario runs — a catalogue, a repeat, a mutant matrix — with at most `jobs` at a
// time. Each run is independent (its own publisher, Toxiproxy server, processes and run
// folder), so running two at once on two cores changes no verdict, only the wall time.

import { isAbsolute, join, relative } from 'node:path';
import { type BatchView, batchViewOf, ownCommandLine } from '../report/batch-view.js';
import { renderBatchFiles } from '../report/render-batch.js';
import { ensureDir, switchLatest } from '../report/run-folder.js';
import { closeFolder, makePassable } from '../report/staff-only.js';
import { labNamed } from '../labs/registry.js';
import { type RunOptions, type RunResult, newRunId, runScenario } from './runner.js';
import type { Scenario } from '../catalogue/load.js';
import type { SealMode } from './sealing.js';

export interface BatchItem {
  scenario: Scenario;
  consumerCommand?: string;
  /** A server scenario's server under test (`--server`). */
  serverCommand?: string;
  /** Shown in tables: the scenario name, or "name #3" in a repeat, or "consumer × name". */
  label: string;
}

export interface BatchHooks {
  /** `nth`: how many runs of the batch started before this one (the console's [n/total]; the longest start first). */
  onStart?(item: BatchItem, nth: number, total: number): void;
  onJournal?: RunOptions['onJournal'];
  onFinish?(item: BatchItem, result: RunResult, index: number): void;
}

export interface BatchResult<I extends BatchItem = BatchItem> {
  batchDir: string;
  /** The runs that started, each with its item, in item order (all items, unless interrupted). */
  runs: { item: I; result: RunResult }[];
  /** The items never started because of an interrupt, in item order. */
  notStarted: I[];
  /** The batch as its index.html, summary.md and results.json show it. */
  view: BatchView;
}

/**
 * Runs `items`, `jobs` at a time, each into its own folder under a new batch folder: the longest
 * by script first (Lab.scriptMs), then in item order, so that a run that waits for its script
 * most of a minute (the feed lab's storm) does not start last beside idle jobs. Results and
 * reports keep item order.
 */
export async function runBatch<I extends BatchItem>(
  name: string,
  items: I[],
  options: {
    jobs: number;
    cwd: string;
    reportsDir: string;
    toxiproxyUrl?: string;
    /** `--store-limit` for every run. */
    storeLimitBytes?: number;
    seal?: SealMode;
    roomQuotaBytes?: number;
    commandLine?: string;
    invokedAs?: string;
    signal?: AbortSignal;
  } & BatchHooks,
): Promise<BatchResult<I>> {
  const startedAt = new Date().toISOString().slice(0, 19);
  const batchDir = join(options.reportsDir, newRunId(name));
  // Passable but not listable while its runs are live: no consumer reads the names of its
  // siblings' run folders (under grading they name hidden scenarios); closed at the end.
  makePassable(ensureDir(options.reportsDir));
  makePassable(ensureDir(batchDir));
  const results: (RunResult | undefined)[] = new Array(items.length);
  const order = startOrder(items);
  let next = 0;
  // Each worker is a job slot: sealed runs of different slots run as different uids.
  const worker = async (slot: number) => {
    for (let index = order[next++]; index !== undefined && !options.signal?.aborted; index = order[next++]) {
      const item = items[index]!;
      options.onStart?.(item, next - 1, items.length);
      results[index] = await runScenario({
        scenario: item.scenario,
        cwd: options.cwd,
        reportsDir: batchDir,
        ...(item.consumerCommand ? { consumerCommand: item.consumerCommand } : {}),
        ...(item.serverCommand ? { serverCommand: item.serverCommand } : {}),
        ...(options.toxiproxyUrl ? { toxiproxyUrl: options.toxiproxyUrl } : {}),
        ...(options.storeLimitBytes ? { storeLimitBytes: options.storeLimitBytes } : {}),
        ...(options.seal ? { seal: options.seal } : {}),
        ...(options.roomQuotaBytes !== undefined ? { roomQuotaBytes: options.roomQuotaBytes } : {}),
        slot,
        latest: false,
        ...(options.invokedAs ? { invokedAs: options.invokedAs } : {}),
        ...(options.onJournal ? { onJournal: options.onJournal } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      options.onFinish?.(item, results[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs, items.length)) }, (_, slot) => worker(slot)));
  const runs = items.flatMap((item, i) => (results[i] ? [{ item, result: results[i] }] : []));
  const notStarted = items.filter((_, i) => !results[i]);
  const meta = {
    name,
    startedAt,
    endedAt: new Date().toISOString().slice(0, 19),
    commandLine: options.commandLine ?? ownCommandLine(),
    notStarted: notStarted.map((item) => ({ label: item.label, scenario: item.scenario.name, file: shownFile(item.scenario.file, options.cwd) })),
  };
  const view = batchViewOf(
    batchDir,
    meta,
    runs.map(({ item, result }) => ({ label: item.label, runDir: result.runDir, view: result.view })),
  );
  renderBatchFiles(view);
  closeFolder(batchDir);
  switchLatest(options.reportsDir, batchDir);
  return { batchDir, runs, notStarted, view };
}

/** Item indices, the longest script first; equal ones (every CPU-bound run: 0) in item order. */
export function startOrder(items: BatchItem[]): number[] {
  const scriptMs = items.map((item) => labNamed(item.scenario.protocol)?.scriptMs?.(item.scenario.lab) ?? 0);
  return items.map((_, i) => i).sort((a, b) => scriptMs[b]! - scriptMs[a]! || a - b);
}

/** A scenario file as the reports show it: relative to the working directory when inside it. */
const shownFile = (file: string, cwd: string): string => (isAbsolute(file) && !relative(cwd, file).startsWith('..') ? relative(cwd, file) : file);
