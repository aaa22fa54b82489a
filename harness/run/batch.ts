// Several scenario runs — a catalogue, a repeat, a mutant matrix — with at most `jobs` at a
// time. Each run is independent (its own publisher, Toxiproxy server, processes and run
// folder), so running two at once on two cores changes no verdict, only the wall time.

import { isAbsolute, join, relative } from 'node:path';
import { type BatchView, batchViewOf, ownCommandLine } from '../report/batch-view.js';
import { renderBatchFiles } from '../report/render-batch.js';
import { ensureDir, switchLatest } from '../report/run-folder.js';
import { closeFolder, makePassable } from '../report/staff-only.js';
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
  onStart?(item: BatchItem, index: number, total: number): void;
  onJournal?: RunOptions['onJournal'];
  onFinish?(item: BatchItem, result: RunResult, index: number): void;
}

export interface BatchResult {
  batchDir: string;
  /** The runs that started, in item order (all items, unless interrupted). */
  results: RunResult[];
  /** The items never started because of an interrupt (the tail of `items`). */
  notStarted: BatchItem[];
  /** The batch as its index.html, summary.md and results.json show it. */
  view: BatchView;
}

/** Runs `items` in order, `jobs` at a time, each into its own folder under a new batch folder. */
export async function runBatch(
  name: string,
  items: BatchItem[],
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
): Promise<BatchResult> {
  const startedAt = new Date().toISOString().slice(0, 19);
  const batchDir = join(options.reportsDir, newRunId(name));
  // Passable but not listable while its runs are live: no consumer reads the names of its
  // siblings' run folders (under grading they name hidden scenarios); closed at the end.
  makePassable(ensureDir(options.reportsDir));
  makePassable(ensureDir(batchDir));
  const results: RunResult[] = new Array(items.length);
  let next = 0;
  // Each worker is a job slot: sealed runs of different slots run as different uids.
  const worker = async (slot: number) => {
    for (let index = next++; index < items.length && !options.signal?.aborted; index = next++) {
      const item = items[index]!;
      options.onStart?.(item, index, items.length);
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
  // Items are taken in order, so those started are a prefix.
  const started = results.filter(Boolean);
  const notStarted = items.slice(started.length);
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
    started.map((r, i) => ({ label: items[i]!.label, runDir: r.runDir, view: r.view })),
  );
  renderBatchFiles(view);
  closeFolder(batchDir);
  switchLatest(options.reportsDir, batchDir);
  return { batchDir, results: started, notStarted, view };
}

/** A scenario file as the reports show it: relative to the working directory when inside it. */
const shownFile = (file: string, cwd: string): string => (isAbsolute(file) && !relative(cwd, file).startsWith('..') ? relative(cwd, file) : file);
