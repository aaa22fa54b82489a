// What every platform file of a submission is drawn from (platforms.ts): its scores (with their
// provenance and replay commands), the rubric, the sealing, and what staff need beside them. A
// platform renders this data; none re-derives a verdict.

import type { Sealing } from '../class/class-data.js';
import type { Rubric } from '../rubric.js';
import type { SubmissionScore } from '../score.js';

export interface GradeData {
  score: SubmissionScore;
  rubric: Rubric;
  sealing: Sealing;
  executionSeconds: number;
  /** Scenarios whose runs have not all finished: a file written while grading goes on (progressive.ts). */
  pending: readonly string[];
  /** The build log's path and last lines (staff-only), when the submission was built. */
  buildLog?: { path: string; tail: string };
}

/** The scenario is still being graded (or never was: grading stopped first). */
export const isPending = (data: GradeData, scenario: string): boolean => data.pending.includes(scenario);

/** A scenario's replay command, or the submission's with the scenario named, for staff. */
export const replayOf = (data: GradeData, scenario: string): string | undefined => data.score.scenarios.find((s) => s.name === scenario)?.replay;

/** A graded submission's data, every scenario finished. */
export const finishedData = (score: SubmissionScore, rubric: Rubric, sealing: Sealing, executionSeconds: number): GradeData => ({
  score,
  rubric,
  sealing,
  executionSeconds,
  pending: [],
});
