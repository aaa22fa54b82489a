// results.json by Gradescope's specification (gradescope/autograder_samples, docs/specs.md,
// "Output format", "Controlling Test Case Visibility", "Controlling standard output
// visibility", "Test case status", "Output String Formatting"; read 2026-12 at af5dee4):
// - every output and name is "text" (no HTML, Markdown or ANSI rendered): a finding quotes the
//   submission's bytes, which must stay inert;
// - a test's `visibility` is the rubric's; a `hidden` test is never shown to students and carries
//   no points (rubric.ts refuses one that does), so its findings may go in its output for staff
//   ("Instructors will always see all tests");
// - "If test cases are hidden, students will not be able to see their total score": the total is
//   in `score`, and the top-level `output` (always visible) states only the visible tests' points;
// - staff-only notes (provenance, replay commands, build log, harness errors) go in one last
//   informational test with no score, `hidden`, and in `extra_data` (stored, never shown);
// - `stdout_visibility` is `hidden`: run_autograder's stdout names every scenario.
// Two audiences, two files: 'platform' is the file to upload (<out>/.staff/<name>/results.json,
// with the staff-only parts above, which Gradescope keeps from students); 'student' is the copy
// in the student's folder, which staff may hand out as it is: a hidden test there is "hidden
// test N", passed or failed, with no staff-only part and nothing naming a hidden scenario.
// A test still running when the file was written (progressive.ts) is there with 0 points,
// `failed`, and says it did not run to its end.

import type { GradeData } from './grade-data.js';
import { isPending } from './grade-data.js';
import { unsealedWarning } from '../class/class-data.js';
import { shownName, type Visibility } from '../rubric.js';
import type { Provenance } from '../provenance.js';
import { RATE_RULE, type ScenarioScore } from '../score.js';

export interface GradescopeTest {
  name: string;
  name_format: 'text';
  score?: number;
  max_score?: number;
  status: 'passed' | 'failed';
  output: string;
  output_format: 'text';
  visibility: Visibility;
  extra_data?: Record<string, unknown>;
}

export interface GradescopeResults {
  score: number;
  execution_time: number;
  output: string;
  output_format: 'text';
  test_output_format: 'text';
  test_name_format: 'text';
  visibility: 'visible';
  stdout_visibility: 'hidden';
  extra_data: Record<string, unknown>;
  tests: GradescopeTest[];
}

export const STAFF_TEST_NAME = 'Staff only: how this grade was made';

export type Audience = 'platform' | 'student';

export function gradescopeResults(data: GradeData, audience: Audience): GradescopeResults {
  const { score: sub, rubric } = data;
  const staff = audience === 'platform';
  const tests = sub.scenarios.map((s, i): GradescopeTest => {
    const test = rubric.tests[i]!;
    const pending = isPending(data, s.name);
    const secret = !staff && s.visibility === 'hidden';
    return {
      name: shownName(rubric, test),
      name_format: 'text',
      score: pending ? 0 : s.score,
      max_score: s.max,
      status: !pending && s.status === 'passed' ? 'passed' : 'failed',
      output: pending ? NOT_RUN : testOutput(s, staff),
      output_format: 'text',
      visibility: s.visibility,
      ...(secret ? {} : { extra_data: { scenario: s.name, ...(staff && s.replay ? { replay: s.replay } : {}), ...(pending ? { pending: true } : {}) } }),
    };
  });
  if (staff)
    tests.push({
      name: STAFF_TEST_NAME,
      name_format: 'text',
      status: 'passed',
      output: staffNotes(data).join('\n'),
      output_format: 'text',
      visibility: 'hidden',
    });
  const score = Math.round(tests.reduce((sum, t) => sum + (t.score ?? 0), 0) * 1e6) / 1e6;
  return {
    score,
    execution_time: Math.round(data.executionSeconds),
    output: studentOutput(data),
    output_format: 'text',
    test_output_format: 'text',
    test_name_format: 'text',
    visibility: 'visible',
    stdout_visibility: 'hidden',
    extra_data: {
      chaoslab: {
        ...(sub.provenance ? { provenance: staff ? sub.provenance : studentProvenance(sub.provenance) } : {}),
        complete: data.pending.length === 0,
        sealed: data.sealing.sealed,
        ...(staff && data.buildLog ? { build_log: data.buildLog.path } : {}),
      },
    },
    tests,
  };
}

const NOT_RUN = 'Not run to its end: grading stopped before this test finished (the time limit?). It scores 0.';

/** What every student sees at the top: nothing that a test not yet shown would give away. */
function studentOutput(data: GradeData): string {
  const { score: sub } = data;
  const warning = unsealedWarning(data.sealing);
  const visible = sub.scenarios.filter((s) => s.visibility === 'visible');
  const later = sub.scenarios.filter((s) => s.visibility === 'after_due_date' || s.visibility === 'after_published');
  const points = (list: ScenarioScore[], field: 'score' | 'max') =>
    Math.round(list.reduce((sum, s) => sum + (isPending(data, s.name) && field === 'score' ? 0 : s[field]), 0) * 1e6) / 1e6;
  const notRun = data.pending.length;
  return [
    ...(warning ? [warning] : []),
    `Started with: ${sub.how}.`,
    ...(sub.problem ? [`Not graded: ${sub.problem}`] : []),
    ...(notRun ? [`Grading stopped before every test finished: ${notRun} test(s) did not run to their end and score 0.`] : []),
    `Tests shown now: ${points(visible, 'score')} / ${points(visible, 'max')} points.`,
    ...(later.length
      ? [`${later.length} more test(s) (${points(later, 'max')} points) are shown after the due date or when grades are published; so is the total.`]
      : []),
  ].join('\n');
}

function testOutput(s: ScenarioScore, staff: boolean): string {
  const runs =
    s.runs > 1 ? ` (${s.passed} of ${s.runs} runs passed${s.reruns ? `, ${s.reruns} of them re-runs after a failure` : ''}; ${RATE_RULE[s.rate]})` : '';
  if (s.status === 'not graded') return 'Not graded: the grader failed on this test (a harness error, not your code); staff will grade it again.';
  if (s.visibility === 'hidden' && !staff) return s.status === 'passed' ? `Passed${runs}.` : `Failed${runs}.`;
  const named = s.visibility === 'hidden' ? `Staff only (hidden scenario ${s.name}): ` : '';
  if (s.status === 'passed') return `${named}Passed${runs}.`;
  return [`${named}Failed${runs}: ${s.feedback}`, ...s.reasons.map((r) => `- ${r}`)].join('\n');
}

/** What of the provenance a student's copy carries: nothing that names a scenario. */
const studentProvenance = (p: Provenance) => ({
  chaoslab: p.chaoslab,
  lab: p.lab,
  scenarioSetHash: p.scenarioSetHash,
  ...(p.submissionHash ? { submissionHash: p.submissionHash } : {}),
});

/** The staff-only test's text: the provenance, each scenario's replay, the build log, harness errors. */
function staffNotes(data: GradeData): string[] {
  const { score: sub } = data;
  const p = sub.provenance;
  const lines: string[] = [`Sealed: ${data.sealing.sealed ? 'yes' : `no (${data.sealing.note})`}.`];
  if (data.pending.length) lines.push(`Incomplete: still running or never finished: ${data.pending.join(', ')}.`);
  if (p) {
    lines.push(
      `chaoslab ${p.chaoslab}, lab ${p.lab}`,
      `scenario set: ${p.scenarioSetHash}`,
      ...(p.submissionHash ? [`submission files: ${p.submissionHash}`] : []),
      `seeds: ${
        Object.entries(p.seeds)
          .map(([name, seeds]) => `${name} [${seeds.join(', ')}]`)
          .join('; ') || 'none'
      }`,
      `replay this grade: ${p.replay}`,
    );
  }
  for (const s of sub.scenarios) if (s.replay) lines.push(`replay ${s.name} (${s.status}): ${s.replay}`);
  for (const s of sub.scenarios) if (s.harnessError) lines.push(`${s.name}: a run ended in a harness error (the grader's failure, not the submission's).`);
  for (const s of sub.scenarios) if (s.failedRunDir) lines.push(`${s.name}: failing run's report: ${s.failedRunDir}`);
  if (data.buildLog) lines.push(`build log: ${data.buildLog.path}; its last lines:`, data.buildLog.tail);
  return lines;
}
