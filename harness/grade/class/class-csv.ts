// grades.csv: a header row and nothing before it (csv.DictReader, spreadsheet imports), then one
// row per submission in name order: its status (graded, or why not), score, max, whether it ran
// sealed, one column per rubric scenario (its points), the reason it was not graded, and the
// grade's provenance (provenance.ts; empty cells where the grader gave none). Nothing that depends
// on when or where it ran, so a class graded in shards and merged gives the same bytes. Columns:
// docs/grading.md, "Class outputs".

import { csvCell } from '../../text/inert.js';
import type { ClassReport } from './class-data.js';
import type { SubmissionScore } from '../score.js';
import { statusOf } from '../status.js';

/** The columns before the scenarios' and after them; a scenario may not take one of these names. */
export const CSV_LEADING = ['submission', 'status', 'score', 'max', 'sealed'] as const;
export const CSV_TRAILING = ['reason', 'chaoslab', 'lab', 'scenario_set_sha256', 'submission_sha256', 'seeds', 'replay'] as const;

/** RFC 4180, and no cell a spreadsheet would compute (inert.ts). */
const cell = csvCell;

/** Why scenarios with these names cannot be columns of grades.csv (a name taken twice), or undefined. */
export function csvColumnClash(scenarios: readonly string[]): string | undefined {
  const fixed = new Set<string>([...CSV_LEADING, ...CSV_TRAILING]);
  const taken = scenarios.find((name) => fixed.has(name));
  return taken === undefined
    ? undefined
    : `scenario "${taken}" would be a second "${taken}" column of grades.csv: rename it (a rubric may give a scenario its own file and name)`;
}

export function classCsv(report: ClassReport): string {
  const sealed = report.sealing.sealed ? 'yes' : 'no';
  const row = (sub: SubmissionScore): (string | number)[] => {
    const p = sub.provenance;
    return [
      sub.submission,
      statusOf(sub),
      sub.score,
      sub.max,
      sealed,
      ...sub.scenarios.map((s) => s.score),
      sub.notGraded?.reason ?? '',
      p?.chaoslab ?? '',
      p?.lab ?? '',
      p?.scenarioSetHash ?? '',
      p?.submissionHash ?? '',
      p ? JSON.stringify(p.seeds) : '',
      p?.replay ?? '',
    ];
  };
  const lines = [
    [...CSV_LEADING, ...report.rubric.map((t) => t.name), ...CSV_TRAILING].map(cell).join(','),
    ...[...report.submissions]
      .sort((a, b) => (a.submission < b.submission ? -1 : a.submission > b.submission ? 1 : 0))
      .map((sub) => row(sub).map(cell).join(',')),
  ];
  return `${lines.join('\n')}\n`;
}
