// Scores from the runs' own verdicts (never re-derived). A scenario's runs are its k counted runs,
// plus `reruns` more once one failed (rate reproducible or proportional), plus a replacement for
// every run that ended in a harness error: such a run is the grader's failure, never counted and
// never charged. The rubric's rate turns the pass rate into points (rubric.ts RATES). A scenario
// whose counted runs are still short because of harness errors is "not graded", not failed.
// A submission that could not be graded (no command, a failed build) scores 0 on every
// scenario, with the reason.

import type { Provenance } from './provenance.js';
import { maxScore, type Rate, type Rubric, type RubricTest, type Visibility } from './rubric.js';
import type { NotGraded } from './not-graded.js';
import type { BuildRecord } from './build/submission-build.js';

/** The rate's rule in a student's words (results.json, junit). */
export const RATE_RULE: Record<Rate, string> = {
  reproducible: 'it loses its points only when most runs fail',
  all: 'it scores only if all pass',
  proportional: 'it scores the share of runs that passed',
};

/** One run as the grader needs it: its status and the checker's words, as the verdict gave them. */
export interface RunOutcome {
  status: 'pass' | 'fail' | 'error' | 'skipped' | 'interrupted';
  reasons: string[];
  /** The run folder (staff-only). */
  runDir?: string;
}

export interface ScenarioScore {
  name: string;
  visibility: Visibility;
  feedback: string;
  score: number;
  max: number;
  /** Counted runs (k, plus the re-runs of a failure; a run that never started counts, as no pass) and how many of them passed. */
  runs: number;
  passed: number;
  /** How its pass rate became points (rubric.ts RATES). */
  rate: Rate;
  /** Of the counted runs, how many were re-runs after a failure. */
  reruns: number;
  /** Runs that ended in a harness error: re-run, never counted, never charged. */
  harnessErrors: number;
  /** `not graded`: harness errors left too few counted runs to judge (0 points, and the grade exits 2). */
  status: 'passed' | 'failed' | 'not graded';
  /** Why it failed or was not graded: the first failing (or harness error) run's reasons, or the submission's problem. */
  reasons: string[];
  /** The first failing run's folder (staff-only). */
  failedRunDir?: string;
  /** Not graded because of harness errors: the grader, not the submission, failed there. */
  harnessError: boolean;
  /** The command that replays this scenario's verdict on its own (staff-only). */
  replay?: string;
}

export interface SubmissionScore {
  submission: string;
  score: number;
  max: number;
  scenarios: ScenarioScore[];
  /** How the submission was started (manifest or default), in words. */
  how: string;
  /** Why it could not be graded at all (the scenarios then score 0). */
  problem?: string;
  /** How to reproduce this grade (provenance.ts). */
  provenance?: Provenance;
  /** Set when the grader never judged it (status.ts): not graded is not failing. */
  notGraded?: NotGraded;
  /** How its build went: taken from the build cache, or run and how long it took (absent: no build). */
  build?: BuildRecord;
}

/** The counted runs a scenario needs, given the counted runs so far: k, plus its re-runs once one failed. */
export function targetRuns(test: RubricTest, counted: readonly RunOutcome[]): number {
  // Only a verdict of the submission's own is re-run: an interrupted run (the deadline, a signal)
  // or a skipped one would end the same way again.
  return test.repeat + (counted.some((o) => o.status === 'fail') ? test.reruns : 0);
}

/** How many more runs a scenario needs: re-runs of a failure, and a replacement for each harness error. */
export function runsStillWanted(test: RubricTest, outcomes: readonly RunOutcome[]): number {
  const counted = outcomes.filter((o) => o.status !== 'error');
  return Math.max(0, targetRuns(test, counted) - counted.length);
}

/** Whether a pass rate earns the points, and how many (rubric.ts RATES). */
export function pointsFor(test: Pick<RubricTest, 'rate' | 'points'>, passed: number, runs: number): { score: number; ok: boolean } {
  const failed = runs - passed;
  if (test.rate === 'all') return failed === 0 ? { score: test.points, ok: true } : { score: 0, ok: false };
  if (test.rate === 'proportional') return { score: runs === 0 ? 0 : round((test.points * passed) / runs), ok: failed === 0 };
  // reproducible: charged only when the failing runs are the majority (a tie is the student's).
  return 2 * failed > runs ? { score: 0, ok: false } : { score: test.points, ok: true };
}

/**
 * The scenario's score from all its runs, in the order they ran (the first k, then re-runs and
 * replacements). Runs the target asks for that are missing (never started: the deadline or an
 * interruption) count as no pass — unless harness errors took their place: then not graded.
 */
export function scoreScenario(test: RubricTest, outcomes: readonly RunOutcome[]): ScenarioScore {
  const counted = outcomes.filter((o) => o.status !== 'error');
  const errors = outcomes.filter((o) => o.status === 'error');
  const target = targetRuns(test, counted);
  const base = { name: test.name, visibility: test.visibility, feedback: test.feedback, max: test.points, rate: test.rate, harnessErrors: errors.length };
  const reruns = Math.max(0, counted.length - test.repeat);
  if (counted.length < target && errors.length > 0) {
    return {
      ...base,
      score: 0,
      runs: counted.length,
      passed: counted.filter((o) => o.status === 'pass').length,
      reruns,
      status: 'not graded',
      reasons: [`not graded: ${errors.length} run(s) ended in a harness error (the grader's failure, not the submission's)`, ...errors[0]!.reasons],
      harnessError: true,
    };
  }
  const runs = Math.max(target, counted.length);
  const passed = counted.filter((o) => o.status === 'pass').length;
  const { score, ok } = pointsFor(test, passed, runs);
  const firstBad = counted.find((o) => o.status !== 'pass');
  const reasons = passed === runs ? [] : firstBad ? reasonsOf(firstBad) : [`${runs - counted.length} of ${runs} runs never started`];
  return {
    ...base,
    score,
    runs,
    passed,
    reruns,
    status: ok ? 'passed' : 'failed',
    reasons: ok && test.rate !== 'proportional' ? [] : reasons,
    ...(firstBad?.runDir && !ok ? { failedRunDir: firstBad.runDir } : {}),
    harnessError: false,
  };
}

function reasonsOf(outcome: RunOutcome): string[] {
  if (outcome.status === 'interrupted') return ["stopped before its end: the submission's deadline passed, or grading was interrupted"];
  if (outcome.status === 'skipped') return [`not run: ${outcome.reasons[0] ?? 'skipped'}`];
  return outcome.reasons.length ? outcome.reasons : [`${outcome.status} with no reason given`];
}

/**
 * A submission's score from each rubric test's runs (keyed by scenario name). `unrun`: tests the
 * submission gave nothing to run for (a server scenario, and its manifest names no server), each
 * 0 with the reason.
 */
export function scoreSubmission(
  submission: string,
  rubric: Rubric,
  outcomes: ReadonlyMap<string, readonly RunOutcome[]>,
  how: string,
  unrun: ReadonlyMap<string, string> = new Map(),
): SubmissionScore {
  const scenarios = rubric.tests.map((test) =>
    unrun.has(test.name) ? unrunScore(test, unrun.get(test.name)!) : scoreScenario(test, outcomes.get(test.name) ?? []),
  );
  return { submission, score: total(scenarios), max: maxScore(rubric), scenarios, how };
}

/** A submission that could not be graded: 0 on every scenario, each saying why. */
export function ungradable(submission: string, rubric: Rubric, how: string, problem: string): SubmissionScore {
  const scenarios = rubric.tests.map((test) => unrunScore(test, problem));
  return { submission, score: 0, max: maxScore(rubric), scenarios, how, problem };
}

/** A scenario never run for the submission's own reason: 0, and why. */
function unrunScore(test: RubricTest, problem: string): ScenarioScore {
  return {
    name: test.name,
    visibility: test.visibility,
    feedback: test.feedback,
    score: 0,
    max: test.points,
    rate: test.rate,
    runs: test.repeat,
    passed: 0,
    reruns: 0,
    harnessErrors: 0,
    status: 'failed',
    reasons: [problem],
    harnessError: false,
  };
}

// Points may be fractional (0.5): sums are rounded to 1e-6 so shards and totals print the same.
const round = (points: number): number => Math.round(points * 1e6) / 1e6;
const total = (scenarios: readonly ScenarioScore[]): number => round(scenarios.reduce((sum, s) => sum + s.score, 0));
