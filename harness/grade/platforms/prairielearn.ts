// PrairieLearn's external-grader results (PrairieLearn/PrairieLearn, docs/externalGrading.md,
// "Grading results"; read 2026-12 at 88fb855): `score` in [0, 1]; `gradable: false` (with
// `format_errors`) when the submission could not be graded, so the student loses no attempt;
// `message`, `output` and `tests` (name, description, points, max_points, message, output: every
// test has both points fields, or the element drops its per-test display); the file "should be
// limited to 1 MB": outputs are cut to fit, and the message says so. PrairieLearn shows the file
// to students as it is, with no hidden tests: a hidden scenario is "hidden test N", passed or
// failed, and the provenance carries nothing that names one.

import { jsonText } from '../../text/inert.js';
import { unsealedWarning } from '../class/class-data.js';
import type { GradeData } from './grade-data.js';
import { isPending } from './grade-data.js';
import { shownName } from '../rubric.js';

export interface PrairieLearnTest {
  name: string;
  description: string;
  points: number;
  max_points: number;
  message: string;
  output: string;
}

export interface PrairieLearnResults {
  gradable: boolean;
  score?: number;
  format_errors?: string[];
  message: string;
  output: string;
  tests: PrairieLearnTest[];
  chaoslab: Record<string, unknown>;
}

/** PrairieLearn's limit on the whole file, in bytes. */
export const PRAIRIELEARN_LIMIT = 1_000_000;

export function prairieLearnResults(data: GradeData, limit = PRAIRIELEARN_LIMIT): PrairieLearnResults {
  const { score: sub, rubric } = data;
  const tests = sub.scenarios.map((s, i): PrairieLearnTest => {
    const hidden = s.visibility === 'hidden';
    const pending = isPending(data, s.name);
    const verdict = pending ? 'not run to its end' : s.status;
    const runs = s.runs > 1 && !pending ? ` (${s.passed} of ${s.runs} runs passed; it scores only if all pass)` : '';
    return {
      name: shownName(rubric, rubric.tests[i]!),
      description: hidden ? 'a hidden test' : s.feedback,
      points: pending ? 0 : s.score,
      max_points: s.max,
      message: `${verdict}${runs}`,
      output: hidden || pending || s.status === 'passed' ? '' : s.reasons.map((r) => `- ${r}`).join('\n'),
    };
  });
  const warning = unsealedWarning(data.sealing);
  const message = [
    ...(warning ? [warning] : []),
    ...(data.pending.length ? [`Grading stopped before every test finished: ${data.pending.length} test(s) did not run to their end and score 0.`] : []),
  ].join('\n');
  const p = sub.provenance;
  const hiddenNames = new Set(sub.scenarios.filter((s) => s.visibility === 'hidden').map((s) => s.name));
  const results: PrairieLearnResults = {
    gradable: sub.problem === undefined,
    ...(sub.problem === undefined
      ? { score: sub.max > 0 ? Math.min(1, tests.reduce((sum, t) => sum + t.points, 0) / sub.max) : 1 }
      : { format_errors: [sub.problem] }),
    message,
    output: `Started with: ${sub.how}.`,
    tests,
    chaoslab: {
      complete: data.pending.length === 0,
      sealed: data.sealing.sealed,
      ...(p
        ? {
            version: p.chaoslab,
            lab: p.lab,
            scenarioSetHash: p.scenarioSetHash,
            ...(p.submissionHash ? { submissionHash: p.submissionHash } : {}),
            seeds: Object.fromEntries(Object.entries(p.seeds).filter(([name]) => !hiddenNames.has(name))),
          }
        : {}),
    },
  };
  return fitted(results, limit);
}

/** The results cut to `limit` bytes: every output (and the top one) to the same length, halved until it fits. */
function fitted(results: PrairieLearnResults, limit: number): PrairieLearnResults {
  if (size(results) <= limit) return results;
  const note = `Outputs were cut to fit PrairieLearn's ${limit}-byte limit on results.`;
  for (let cap = 65_536; cap >= 16; cap = Math.floor(cap / 2)) {
    const cut = (text: string) => (text.length > cap ? `${text.slice(0, cap)}\n… (cut: ${text.length - cap} more characters)` : text);
    const trial: PrairieLearnResults = {
      ...results,
      message: [results.message, note].filter(Boolean).join('\n'),
      output: cut(results.output),
      tests: results.tests.map((t) => ({ ...t, output: cut(t.output), message: cut(t.message), description: cut(t.description) })),
      ...(results.format_errors ? { format_errors: results.format_errors.map(cut) } : {}),
    };
    if (size(trial) <= limit) return trial;
  }
  // Even 16 characters each do not fit (a rubric of tens of thousands of scenarios): the tests go.
  return { ...results, message: `${note} The tests did not fit and are left out.`, output: '', tests: [] };
}

const size = (value: unknown): number => Buffer.byteLength(jsonText(value));
