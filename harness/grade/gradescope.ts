// results.json in Gradescope's autograder schema (score, execution_time, output, tests[] with
// name, score, max_score, status, output, visibility). What a student may see only: a hidden
// scenario is "hidden test N", its output says it failed or passed and nothing of its findings.

import type { Sealing } from './class-data.js';
import { unsealedWarning } from './class-data.js';
import { type Rubric, shownName } from './rubric.js';
import { RATE_RULE, type ScenarioScore, type SubmissionScore } from './score.js';

export interface GradescopeTest {
  name: string;
  score: number;
  max_score: number;
  status: 'passed' | 'failed';
  output: string;
  visibility: ScenarioScore['visibility'];
}

export interface GradescopeResults {
  score: number;
  execution_time: number;
  output: string;
  visibility: 'visible';
  tests: GradescopeTest[];
}

export function gradescopeResults(sub: SubmissionScore, rubric: Rubric, sealing: Sealing, executionSeconds: number): GradescopeResults {
  const warning = unsealedWarning(sealing);
  const output = [
    ...(warning ? [warning] : []),
    `Started with: ${sub.how}.`,
    ...(sub.problem ? [`Not graded: ${sub.problem}`] : []),
    `Score: ${sub.score} / ${sub.max}.`,
  ].join('\n');
  const tests = sub.scenarios.map((s, i): GradescopeTest => {
    const test = rubric.tests[i]!;
    return {
      name: shownName(rubric, test),
      score: s.score,
      max_score: s.max,
      status: s.status === 'passed' ? 'passed' : 'failed',
      output: testOutput(s),
      visibility: s.visibility,
    };
  });
  return { score: sub.score, execution_time: Math.round(executionSeconds), output, visibility: 'visible', tests };
}

function testOutput(s: ScenarioScore): string {
  const runs =
    s.runs > 1 ? ` (${s.passed} of ${s.runs} runs passed${s.reruns ? `, ${s.reruns} of them re-runs after a failure` : ''}; ${RATE_RULE[s.rate]})` : '';
  if (s.status === 'not graded') return 'Not graded: the grader failed on this test (a harness error, not your code); staff will grade it again.';
  if (s.status === 'passed') return `Passed${runs}.`;
  if (s.visibility === 'hidden') return `Failed${runs}.`;
  return [`Failed${runs}: ${s.feedback}`, ...s.reasons.map((r) => `- ${r}`)].join('\n');
}
