// A submission's junit.xml: one test case per rubric scenario, as the student may see it (a
// hidden scenario is "hidden test N" with no findings). The score is a property of the suite.

import { attr } from '../../report/junit.js';
import { escapeMarkup } from '../../text/format.js';
import type { Sealing } from '../class/class-data.js';
import { unsealedWarning } from '../class/class-data.js';
import { type Rubric, shownName } from '../rubric.js';
import type { SubmissionScore } from '../score.js';

export function submissionJunit(sub: SubmissionScore, rubric: Rubric, sealing: Sealing): string {
  const failures = sub.scenarios.filter((s) => s.status === 'failed').length;
  const name = attr(`chaoslab grade ${sub.submission}`);
  // Not graded (harness errors): an <error>, the grader's, never a failure of the submission.
  const errors = sub.scenarios.filter((s) => s.status === 'not graded').length;
  const counts = `tests="${sub.scenarios.length}" failures="${failures}" errors="${errors}" skipped="0"`;
  const warning = unsealedWarning(sealing);
  const props: [string, string][] = [
    ['score', String(sub.score)],
    ['max', String(sub.max)],
    ['sealed', String(sealing.sealed)],
    ...(warning ? ([['warning', warning]] as [string, string][]) : []),
    ...(sub.problem ? ([['problem', sub.problem]] as [string, string][]) : []),
  ];
  const cases = sub.scenarios.map((s, i) => {
    const shown = shownName(rubric, rubric.tests[i]!);
    const open = `    <testcase name="${attr(shown)}" classname="chaoslab.grade.${attr(shown)}">`;
    if (s.status === 'passed') return `${open}</testcase>`;
    if (s.status === 'not graded')
      return `${open}\n      <error message="not graded: harness error" type="chaoslab.grade">${escapeMarkup(s.visibility === 'hidden' ? 'not graded: harness error' : s.reasons.join('\n'))}</error>\n    </testcase>`;
    const text = s.visibility === 'hidden' ? 'failed' : [s.feedback, ...s.reasons.map((r) => `- ${r}`)].join('\n');
    const message = s.visibility === 'hidden' ? 'failed' : s.feedback;
    return `${open}\n      <failure message="${attr(message)}" type="chaoslab.grade">${escapeMarkup(text)}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${name}" ${counts}>`,
    `  <testsuite name="${name}" ${counts}>`,
    '    <properties>',
    ...props.map(([n, v]) => `      <property name="${attr(n)}" value="${attr(v)}"/>`),
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
