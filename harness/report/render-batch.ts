// Writes a batch folder's own files — index.html, summary.md, results.json, junit.xml — from the
// batch view: at the end of a batch from the runs' views, and for `chaoslab report <batch>` after
// every run folder in it has been re-rendered from its journal. Each file is written under a
// temporary name and renamed into place.

import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { renderBatchIndex } from './batch-index.js';
import { renderBatchResults } from './batch-results.js';
import { renderBatchSummary } from './batch-summary.js';
import { type BatchMeta, type BatchRun, type BatchView, batchViewOf, RESULTS_FILE, readBatchMeta } from './batch-view.js';
import { type JournalEntry, readJournal } from '../record/journal.js';
import { renderJunit } from './junit.js';
import { type RenderedRun, renderRunFolder } from './render-all.js';
import { writeAtomically } from './write-atomically.js';

export const BATCH_FILES = ['index.html', 'summary.md', RESULTS_FILE, 'junit.xml'] as const;

/** Writes the batch's files; returns their absolute paths. */
export function renderBatchFiles(view: BatchView): string[] {
  const files = {
    'index.html': renderBatchIndex(view),
    'summary.md': renderBatchSummary(view),
    [RESULTS_FILE]: renderBatchResults(view),
    'junit.xml': renderJunit(
      view.runs.map((r) => ({ journal: detailsOf(r.runDir), runDir: r.runDir, view: r.view })),
      {
        suiteName: `chaoslab ${view.name}`,
        notStarted: (view.notStarted ?? []).map((n) => ({ name: n.label, ...(n.file ? { file: n.file } : {}) })),
      },
    ),
  };
  return Object.entries(files).map(([name, text]) => {
    const path = join(view.dir, name);
    writeAtomically(path, text);
    return path;
  });
}

/**
 * A run's journal for what JUnit adds to its verdict (scenario file, consumer, stderr tails); none
 * when it cannot be read. The verdict is the run's own view, never the file: unsealed, the
 * consumer can write into its journal (a forged line once stopped a whole grading here).
 */
function detailsOf(runDir: string): JournalEntry[] {
  try {
    return readJournal(join(runDir, 'journal.jsonl'));
  } catch {
    return [];
  }
}

/** A batch folder's name without its stamp and random tail: `20261130-101500-only-ack-x2-k3j9` → `only-ack-x2`. */
export const batchNameOf = (dir: string): string =>
  basename(dir)
    .replace(/^\d{8}-\d{6}-/, '')
    .replace(/-[a-z0-9]{4}$/, '');

/**
 * `chaoslab report <batch>`: every run folder re-rendered from its journal, then the batch's
 * files from their views. The batch's name, command line, times and run labels come from its
 * results.json where there is one; else from the folder (name, modification times) and the runs.
 */
export function rerenderBatch(dir: string, runDirs: string[], now = new Date()): { runs: RenderedRun[]; files: string[]; view: BatchView } {
  const rendered = runDirs.map((runDir) => renderRunFolder(runDir, { now }));
  const { meta, labels } = readBatchMeta(dir);
  const when = (p: string): string => statSync(p).mtime.toISOString().slice(0, 19);
  const fallback: BatchMeta = {
    name: batchNameOf(dir),
    startedAt: runDirs.length ? when(runDirs[0]!) : when(dir),
    endedAt: runDirs.length ? when(join(runDirs.at(-1)!, 'journal.jsonl')) : when(dir),
    commandLine: `chaoslab report ${basename(dir)}`,
  };
  // In the order results.json lists them (the order they were asked for), others after.
  const order = [...labels.keys()];
  const rank = (r: RenderedRun): number => (order.includes(r.runDir) ? order.indexOf(r.runDir) : order.length);
  const runs: BatchRun[] = [...rendered]
    .sort((a, b) => rank(a) - rank(b))
    .map((r) => ({ label: labels.get(r.runDir) ?? r.view.name, runDir: r.runDir, view: r.view }));
  const view = batchViewOf(dir, meta ?? fallback, runs);
  return { runs: rendered, files: renderBatchFiles(view), view };
}
