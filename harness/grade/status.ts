// Whether a submission was graded, and if not, why: a submission the grader never judged (no
// manifest, a wrong lab, a failed build, a command that cannot start, a harness error, an
// interrupted grading) is not a failing one. The grader sets it where it decides; every class
// output (class.json, grades.csv, index.html) shows it, none derives it.

import type { SubmissionScore } from './score.js';

/** Why a submission was not graded, as a word a spreadsheet filter can use (docs/grading.md, "Class outputs"). */
export const NOT_GRADED_KINDS = ['manifest', 'wrong-lab', 'files', 'build-failed', 'cannot-start', 'harness-error', 'interrupted'] as const;
export type NotGradedKind = (typeof NOT_GRADED_KINDS)[number];

export interface NotGraded {
  kind: NotGradedKind;
  /** In words, naming the file or run at fault. */
  reason: string;
}

/** "graded", or the kind of reason it was not. */
export const statusOf = (sub: SubmissionScore): 'graded' | NotGradedKind => sub.notGraded?.kind ?? 'graded';

/** How many submissions were graded and how many not, by kind (class.json's `counts`). */
export function statusCounts(subs: readonly SubmissionScore[]): { submissions: number; graded: number; notGraded: number; byStatus: Record<string, number> } {
  const byStatus: Record<string, number> = {};
  for (const sub of subs) byStatus[statusOf(sub)] = (byStatus[statusOf(sub)] ?? 0) + 1;
  const graded = byStatus.graded ?? 0;
  return { submissions: subs.length, graded, notGraded: subs.length - graded, byStatus };
}
