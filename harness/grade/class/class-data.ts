// class.json: everything the class outputs are drawn from (grades.csv, index.html), and what
// merge-reports joins. Staff-only: it holds hidden scenarios' names and findings. Schema 2: each
// submission says whether it was graded (status.ts), the folders skipped are listed, and the file
// carries the counts (graded, not graded by why) for tools that read it.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonText } from '../../text/inert.js';
import type { Visibility } from '../rubric.js';
import type { SubmissionScore } from '../score.js';
import { statusCounts } from '../status.js';
import type { Skipped } from './submissions.js';

export const CLASS_FILE = 'class.json';
export const CLASS_SCHEMA = 2;

export interface Sealing {
  sealed: boolean;
  /** The sealing decision in words (why not, when not). */
  note: string;
}

export interface ClassReport {
  schema: number;
  lab: string;
  /** The rubric's scenarios, in its order. */
  rubric: { name: string; points: number; visibility: Visibility; repeat: number }[];
  sealing: Sealing;
  /** In submission-name order. */
  submissions: SubmissionScore[];
  /** Entries of the class folder not graded, with the reason, in name order (submissions.ts). */
  skipped: Skipped[];
}

export function writeClassReport(outDir: string, report: ClassReport): void {
  writeFileSync(join(outDir, CLASS_FILE), jsonText({ ...report, counts: { ...statusCounts(report.submissions), skipped: report.skipped.length } }));
}

/** Reads `<dir>/class.json`; a folder without one, or of another schema, is named. */
export function readClassReport(dir: string): ClassReport {
  const file = join(dir, CLASS_FILE);
  let report: ClassReport;
  try {
    report = JSON.parse(readFileSync(file, 'utf8')) as ClassReport;
  } catch (error) {
    throw new Error(`${file}: not a grading output (${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no class.json' : (error as Error).message})`);
  }
  if (report.schema !== CLASS_SCHEMA) throw new Error(`${file}: schema ${String(report.schema)}, this chaoslab reads ${CLASS_SCHEMA}`);
  // The counts are drawn from the submissions when written; a merge draws them again.
  delete (report as ClassReport & { counts?: unknown }).counts;
  return report;
}

/** The banner every output carries when the submissions ran unsealed. */
export const unsealedWarning = (sealing: Sealing): string | undefined =>
  sealing.sealed ? undefined : `NOT SEALED: submissions ran without the sandbox (${sealing.note})`;
