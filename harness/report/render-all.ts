// Renders every report of a run folder: summary.md, report.html, junit.xml. At the end of a run
// from the harness's own record (its in-memory journal); for `chaoslab report <run-folder>` from
// the journal file (no re-run; works on the partial journal of an interrupted run too), and the
// page says so. Each file is written under a temporary name and renamed into place, so nobody
// ever opens half a report.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type JournalEntry, readJournal } from '../record/journal.js';
import { type HtmlReport, renderHtml } from './html.js';
import { renderJunitRun } from './junit.js';
import { switchLatest } from './run-folder.js';
import type { DiagramOptions } from './sequence-diagram.js';
import { renderSummary } from './summary.js';
import type { RunView } from './view.js';
import { writeAtomically } from './write-atomically.js';

export const REPORT_FILES = ['summary.md', 'report.html', 'junit.xml'] as const;

export interface RenderOptions {
  /** Also point `<latestIn>/latest` at this run folder (atomically). */
  latestIn?: string;
  diagram?: DiagramOptions;
  now?: Date;
  /** The run's own record; without it the journal file is read back. */
  entries?: readonly JournalEntry[];
}

export interface RenderedRun {
  runDir: string;
  /** Absolute paths of the files written. */
  files: string[];
  view: RunView;
  diagram: HtmlReport['diagram'];
  htmlBytes: number;
  entries: number;
  latest?: string;
}

export function renderRunFolder(runDir: string, options: RenderOptions = {}): RenderedRun {
  const journalPath = join(runDir, 'journal.jsonl');
  if (!options.entries && !existsSync(journalPath)) throw new Error(`${runDir}: no journal.jsonl, nothing to render`);
  const journal = options.entries ?? readJournal(journalPath);
  const summaryPath = join(runDir, 'summary.md');
  const htmlPath = join(runDir, 'report.html');
  const junitPath = join(runDir, 'junit.xml');
  const report = renderHtml(journal, {
    renderedAt: options.now ?? new Date(),
    fromFile: !options.entries,
    ...(options.diagram ? { diagram: options.diagram } : {}),
  });
  writeAtomically(summaryPath, renderSummary(journal, report.view));
  const htmlBytes = writeAtomically(htmlPath, report.html);
  writeAtomically(junitPath, renderJunitRun(journal, runDir, { view: report.view }));
  const latest = options.latestIn === undefined ? undefined : switchLatest(options.latestIn, runDir);
  return {
    runDir,
    files: [summaryPath, htmlPath, junitPath],
    view: report.view,
    diagram: report.diagram,
    htmlBytes,
    entries: journal.length,
    ...(latest ? { latest } : {}),
  };
}
