// Scores from the runs' own verdicts (never re-derived): a scenario scores its points only if
// all k of its runs passed; a submission that could not be graded (no command, a failed build)
// scores 0 on every scenario, with the reason.

import type { Provenance } from './provenance.js';
import { maxScore, type Rubric, type RubricTest, type Visibility } from './rubric.js';
import type { NotGraded } from './status.js';

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
  /** Runs asked for (k) and how many of them ran and passed. */
  runs: number;
  passed: number;
  status: 'passed' | 'failed';
  /** Why it failed: the first failing run's reasons, or the submission's problem. */
  reasons: string[];
  /** The first failing run's folder (staff-only). */
  failedRunDir?: string;
  /** A run ended in a harness error: the grader, not the submission, failed there. */
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
}

/** The scenario's score from its k runs (fewer outcomes than k: the missing ones did not pass). */
export function scoreScenario(test: RubricTest, outcomes: readonly RunOutcome[]): ScenarioScore {
  const passed = outcomes.filter((o) => o.status === 'pass').length;
  const ok = passed === test.repeat;
  const firstBad = outcomes.find((o) => o.status !== 'pass');
  const reasons = ok ? [] : firstBad ? reasonsOf(firstBad) : [`${test.repeat - outcomes.length} of ${test.repeat} runs never started`];
  return {
    name: test.name,
    visibility: test.visibility,
    feedback: test.feedback,
    score: ok ? test.points : 0,
    max: test.points,
    runs: test.repeat,
    passed,
    status: ok ? 'passed' : 'failed',
    reasons,
    ...(firstBad?.runDir && !ok ? { failedRunDir: firstBad.runDir } : {}),
    harnessError: outcomes.some((o) => o.status === 'error'),
  };
}

function reasonsOf(outcome: RunOutcome): string[] {
  if (outcome.status === 'interrupted') return ["stopped before its end: the submission's deadline passed, or grading was interrupted"];
  if (outcome.status === 'skipped') return [`not run: ${outcome.reasons[0] ?? 'skipped'}`];
  return outcome.reasons.length ? outcome.reasons : [`${outcome.status} with no reason given`];
}

/** A submission's score from each rubric test's runs (keyed by scenario name). */
export function scoreSubmission(submission: string, rubric: Rubric, outcomes: ReadonlyMap<string, readonly RunOutcome[]>, how: string): SubmissionScore {
  const scenarios = rubric.tests.map((test) => scoreScenario(test, outcomes.get(test.name) ?? []));
  return { submission, score: total(scenarios), max: maxScore(rubric), scenarios, how };
}

/** A submission that could not be graded: 0 on every scenario, each saying why. */
export function ungradable(submission: string, rubric: Rubric, how: string, problem: string): SubmissionScore {
  const scenarios = rubric.tests.map(
    (test): ScenarioScore => ({
      name: test.name,
      visibility: test.visibility,
      feedback: test.feedback,
      score: 0,
      max: test.points,
      runs: test.repeat,
      passed: 0,
      status: 'failed',
      reasons: [problem],
      harnessError: false,
    }),
  );
  return { submission, score: 0, max: maxScore(rubric), scenarios, how, problem };
}

// Points may be fractional (0.5): sums are rounded to 1e-6 so shards and totals print the same.
const total = (scenarios: readonly ScenarioScore[]): number => Math.round(scenarios.reduce((sum, s) => sum + s.score, 0) * 1e6) / 1e6;
