// Renders every report of a run folder from its journal alone: summary.md, report.html,
// junit.xml. Used at the end of a run and by `chaoslab report <run-folder>` (no re-run; works
// on the partial journal of an interrupted run too). Each file is written under a temporary
// name and renamed into place, so nobody ever opens half a report.

import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJournal } from '../journal.js';
import { type HtmlReport, type RunExplanation, renderHtml } from './html.js';
import { renderJunitRun } from './junit.js';
import { switchLatest } from './run-folder.js';
import type { DiagramOptions } from './sequence-diagram.js';
import { renderSummary } from './summary.js';

export const REPORT_FILES = ['summary.md', 'report.html', 'junit.xml'] as const;

export interface RenderOptions {
  /** Also point `<latestIn>/latest` at this run folder (atomically). */
  latestIn?: string;
  diagram?: DiagramOptions;
  now?: Date;
}

export interface RenderedRun {
  runDir: string;
  /** Absolute paths of the files written. */
  files: string[];
  explanation: RunExplanation;
  diagram: HtmlReport['diagram'];
  htmlBytes: number;
  entries: number;
  latest?: string;
}

function writeAtomically(path: string, text: string): number {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
  return Buffer.byteLength(text);
}

export function renderRunFolder(runDir: string, options: RenderOptions = {}): RenderedRun {
  const journalPath = join(runDir, 'journal.jsonl');
  if (!existsSync(journalPath)) throw new Error(`${runDir}: no journal.jsonl, nothing to render`);
  const journal = readJournal(journalPath);
  const summaryPath = join(runDir, 'summary.md');
  const htmlPath = join(runDir, 'report.html');
  const junitPath = join(runDir, 'junit.xml');
  writeAtomically(summaryPath, renderSummary(journal));
  const report = renderHtml(journal, { renderedAt: options.now ?? new Date(), ...(options.diagram ? { diagram: options.diagram } : {}) });
  const htmlBytes = writeAtomically(htmlPath, report.html);
  writeAtomically(junitPath, renderJunitRun(journal, runDir, { explanation: report.explanation }));
  const latest = options.latestIn === undefined ? undefined : switchLatest(options.latestIn, runDir);
  return {
    runDir,
    files: [summaryPath, htmlPath, junitPath],
    explanation: report.explanation,
    diagram: report.diagram,
    htmlBytes,
    entries: journal.length,
    ...(latest ? { latest } : {}),
  };
}
