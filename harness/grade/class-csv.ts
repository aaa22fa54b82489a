// grades.csv: submission, score, max, then one column per rubric scenario (its points). Rows in
// submission-name order and nothing that depends on when or where it ran, so a class graded in
// shards and merged gives the same bytes. Unsealed grading: a first comment line says so.

import { csvCell } from '../report/inert.js';
import type { ClassReport } from './class-data.js';

/** The same words on every machine (the probe's reason is in class.json and index.html). */
export const CSV_UNSEALED = '# NOT SEALED: submissions ran without the sandbox (--unsealed)';

/** RFC 4180, and no cell a spreadsheet would compute (inert.ts). */
const cell = csvCell;

export function classCsv(report: ClassReport): string {
  const lines = [
    ...(report.sealing.sealed ? [] : [CSV_UNSEALED]),
    ['submission', 'score', 'max', ...report.rubric.map((t) => t.name)].map(cell).join(','),
    ...[...report.submissions]
      .sort((a, b) => (a.submission < b.submission ? -1 : a.submission > b.submission ? 1 : 0))
      .map((sub) => [sub.submission, sub.score, sub.max, ...sub.scenarios.map((s) => s.score)].map(cell).join(',')),
  ];
  return `${lines.join('\n')}\n`;
}
