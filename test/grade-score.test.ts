// Scores come from the runs' statuses as the verdicts gave them: all k repeats pass or nothing.
import t from 'tap';
import { scoreScenario, scoreSubmission, ungradable } from '../harness/grade/score.js';
import { smallRubric } from './helpers/grade.js';

const rubric = smallRubric();
const dup = rubric.tests[1]!;

t.test('a scenario scores only if all k runs pass, and says how many did', async (t) => {
  const all = scoreScenario(dup, [
    { status: 'pass', reasons: [] },
    { status: 'pass', reasons: [] },
    { status: 'pass', reasons: [] },
  ]);
  t.match(all, { score: 2, max: 2, passed: 3, runs: 3, status: 'passed', reasons: [], harnessError: false });
  const rare = scoreScenario(dup, [
    { status: 'pass', reasons: [] },
    { status: 'fail', reasons: ['seq 3 applied twice'], runDir: '/r/2' },
    { status: 'pass', reasons: [] },
  ]);
  t.match(rare, { score: 0, passed: 2, status: 'failed', reasons: ['seq 3 applied twice'], failedRunDir: '/r/2' });
});

t.test('runs that did not finish or never started are no passes', async (t) => {
  t.match(scoreScenario(dup, [{ status: 'pass', reasons: [] }]), { score: 0, passed: 1, reasons: ['2 of 3 runs never started'] });
  t.match(scoreScenario(dup, [{ status: 'interrupted', reasons: [] }]), { score: 0, reasons: [/deadline passed/] });
  t.match(scoreScenario(dup, [{ status: 'skipped', reasons: ['needs a sealed run'] }]), { score: 0, reasons: ['not run: needs a sealed run'] });
  t.match(scoreScenario(dup, [{ status: 'error', reasons: [] }]), { score: 0, reasons: ['error with no reason given'], harnessError: true });
});

t.test('a submission: the sum of its scenarios; an ungradable one scores 0 everywhere with the reason', async (t) => {
  const sub = scoreSubmission(
    's',
    rubric,
    new Map([
      ['happy-path', [{ status: 'pass', reasons: [] }]],
      ['sigkill-storm', [{ status: 'pass', reasons: [] }]],
    ]),
    'how',
  );
  t.match(sub, { submission: 's', score: 4, max: 6, how: 'how' });
  t.notOk('problem' in sub);
  const zero = ungradable('z', rubric, 'how', 'no command');
  t.match(zero, { score: 0, max: 6, problem: 'no command' });
  t.ok(zero.scenarios.every((s) => s.status === 'failed' && s.reasons[0] === 'no command'));
});

t.test('fractional points add up without float noise', async (t) => {
  const r = { ...rubric, tests: [0.1, 0.2].map((points, i) => ({ ...rubric.tests[0]!, name: `s${i}`, points })) };
  const sub = scoreSubmission('f', r, new Map(r.tests.map((x) => [x.name, [{ status: 'pass' as const, reasons: [] }]])), 'how');
  t.equal(sub.score, 0.3);
});
