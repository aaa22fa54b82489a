// Whether a submission was graded, and if not, why: a submission the grader never judged (no
// manifest, a wrong lab, a failed build, a command that cannot start, a harness error, an
// interrupted grading) is not a failing one. The grader sets it where it decides (grade-submission.ts,
// and gradingStatus/notStarted here for what the grading itself decides); every class output
// (class.json, grades.csv, index.html) shows it, none derives it.

import type { Rubric } from './rubric.js';
import { type SubmissionScore, ungradable } from './score.js';

export { NOT_GRADED_KINDS, type NotGraded, type NotGradedKind } from './not-graded.js';
import type { NotGradedKind } from './not-graded.js';

/** "graded", or the kind of reason it was not. */
export const statusOf = (sub: SubmissionScore): 'graded' | NotGradedKind => sub.notGraded?.kind ?? 'graded';

/** How many submissions were graded and how many not, by kind (class.json's `counts`). */
export function statusCounts(subs: readonly SubmissionScore[]): { submissions: number; graded: number; notGraded: number; byStatus: Record<string, number> } {
  const byStatus: Record<string, number> = {};
  for (const sub of subs) byStatus[statusOf(sub)] = (byStatus[statusOf(sub)] ?? 0) + 1;
  const graded = byStatus.graded ?? 0;
  return { submissions: subs.length, graded, notGraded: subs.length - graded, byStatus };
}

/** A graded submission's status where the grading, not the submission, decides it: interrupted, or a harness error. */
export function gradingStatus(score: SubmissionScore, harnessError: boolean, interruptedBy: string | undefined): SubmissionScore {
  // A build stopped by the interrupt failed because of it; any other reason stands.
  if (interruptedBy && (!score.notGraded || score.notGraded.kind === 'build-failed'))
    return {
      ...score,
      notGraded: { kind: 'interrupted', reason: `grading was interrupted (${interruptedBy}) while this submission was graded: its score is incomplete` },
    };
  if (score.notGraded || !harnessError) return score;
  const where = score.scenarios.filter((s) => s.harnessError).map((s) => s.name);
  return {
    ...score,
    notGraded: {
      kind: 'harness-error',
      reason: `a run of ${where.join(', ')} ended in a harness error: the grader failed there, not the submission; grade it again`,
    },
  };
}

/** A submission the grading never reached, being interrupted first. */
export function notStarted(name: string, rubric: Rubric, by: string | undefined): SubmissionScore {
  const reason = `grading was interrupted (${by ?? 'SIGINT'}) before this submission was graded`;
  return { ...ungradable(name, rubric, 'not started', reason), notGraded: { kind: 'interrupted', reason } };
}
