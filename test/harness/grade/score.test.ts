// Scores come from the runs' statuses as the verdicts gave them; the rubric's rate turns the pass
// rate into points (rate all: all k repeats pass or nothing); harness errors are never charged.
import t from 'tap';
import { gradescopeResults } from '../../../harness/grade/platforms/gradescope.js';
import { finishedData } from '../../../harness/grade/platforms/grade-data.js';
import { submissionJunit } from '../../../harness/grade/platforms/junit.js';
import type { RubricTest } from '../../../harness/grade/rubric.js';
import { pointsFor, type RunOutcome, runsStillWanted, scoreScenario, scoreSubmission, ungradable } from '../../../harness/grade/score.js';
import { smallRubric } from '../../helpers/grade.js';

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
  t.match(scoreScenario(dup, [{ status: 'error', reasons: [] }]), { score: 0, status: 'not graded', harnessErrors: 1, harnessError: true });
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

const pass: RunOutcome = { status: 'pass', reasons: [] };
const fail = (why: string, runDir?: string): RunOutcome => ({ status: 'fail', reasons: [why], ...(runDir ? { runDir } : {}) });
const harness = (why: string): RunOutcome => ({ status: 'error', reasons: [why] });
const test1 = (rate: RubricTest['rate'], reruns = 2, repeat = 1): RubricTest => ({
  name: 'conflict',
  points: 3,
  visibility: 'visible',
  feedback: '§3',
  repeat,
  rate,
  reruns,
});

t.test('reproducible (the default): a failure is re-run, and costs the points only when the failures are the majority', async (t) => {
  const test = test1('reproducible');
  t.equal(runsStillWanted(test, []), 1, 'k runs first');
  t.equal(runsStillWanted(test, [pass]), 0, 'a pass needs no re-run');
  t.equal(runsStillWanted(test, [fail('x')]), 2, 'a failure asks for its 2 re-runs');
  t.equal(runsStillWanted(test, [{ status: 'interrupted', reasons: [] }]), 0, 'an interrupted run is not re-run: it would be stopped again');
  t.equal(runsStillWanted(test, [{ status: 'skipped', reasons: ['needs a sealed run'] }]), 0, 'nor a skipped one');
  const once = scoreScenario(test, [fail('ACK 2 sent', '/r/1'), pass, pass]);
  t.match(once, { score: 3, status: 'passed', runs: 3, passed: 2, reruns: 2, harnessErrors: 0, reasons: [] }, 'a failure that does not repeat is not charged');
  const twice = scoreScenario(test, [fail('ACK 2 sent', '/r/1'), pass, fail('ACK 2 sent again', '/r/3')]);
  t.match(twice, { score: 0, status: 'failed', runs: 3, passed: 1, reruns: 2, reasons: ['ACK 2 sent'], failedRunDir: '/r/1' });
  const always = scoreScenario(test, [fail('a'), fail('b'), fail('c')]);
  t.match(always, { score: 0, status: 'failed', passed: 0, runs: 3 }, 'a deterministic bug still loses its points');
  t.match(scoreScenario(test, [fail('a')]), { score: 0, status: 'failed', runs: 3, passed: 0 }, 're-runs that never started are no passes');
  t.match(scoreScenario(test1('reproducible', 1, 1), [fail('a'), pass]), { score: 3, status: 'passed' }, "a tie is the student's");
});

t.test('all: one failure costs the points and is not re-run; proportional: points × the pass rate', async (t) => {
  const all = test1('all', 0, 3);
  t.equal(runsStillWanted(all, [pass, fail('x'), pass]), 0);
  t.match(scoreScenario(all, [pass, fail('x'), pass]), { score: 0, status: 'failed', runs: 3, passed: 2, reruns: 0 });
  const prop = test1('proportional', 2, 3);
  t.equal(runsStillWanted(prop, [pass, fail('x'), pass]), 2);
  t.match(scoreScenario(prop, [pass, fail('x'), pass, pass, fail('y')]), { score: 1.8, status: 'failed', runs: 5, passed: 3, reruns: 2, reasons: ['x'] });
  t.match(scoreScenario(prop, [pass, pass, pass]), { score: 3, status: 'passed', runs: 3 });
  t.same(pointsFor({ rate: 'proportional', points: 1 }, 1, 3), { score: 0.333333, ok: false });
  t.same(pointsFor({ rate: 'reproducible', points: 1 }, 2, 5), { score: 0, ok: false });
  t.same(pointsFor({ rate: 'reproducible', points: 1 }, 3, 5), { score: 1, ok: true });
});

t.test('a harness error is re-run and never charged; still short of counted runs: not graded, never failed', async (t) => {
  const test = test1('reproducible');
  t.equal(runsStillWanted(test, [harness('EPIPE writing to the publisher')]), 1, 'a harness error is replaced');
  const replaced = scoreScenario(test, [harness('EPIPE writing to the publisher'), pass]);
  t.match(replaced, { score: 3, status: 'passed', runs: 1, passed: 1, harnessErrors: 1, harnessError: false });
  const lost = scoreScenario(test, [harness('deadline overran'), fail('ACK 2'), fail('ACK 2'), harness('load')]);
  t.match(lost, { status: 'not graded', score: 0, harnessErrors: 2, harnessError: true }, 'a re-run lost to the harness: not judged');
  t.match(lost.reasons, [/^not graded: 2 run\(s\) ended in a harness error/, 'deadline overran']);
  const stillFailed = scoreScenario(test, [fail('ACK 2'), harness('load'), fail('ACK 2'), fail('ACK 2')]);
  t.match(
    stillFailed,
    { status: 'failed', score: 0, runs: 3, passed: 0, harnessErrors: 1, harnessError: false },
    'a replaced error does not hide a real failure',
  );
  const small = { ...rubric, tests: [test] };
  const sub = scoreSubmission('s', small, new Map([['conflict', [harness('EPIPE')]]]), 'how');
  t.match(sub, { score: 0, scenarios: [{ status: 'not graded' }] });
  // Every output says so: Gradescope's failed status with "Not graded", JUnit's <error>, not a failure.
  const results = gradescopeResults(finishedData(sub, small, { sealed: true, note: 'on' }, 1), 'student');
  t.match(results.tests[0], { status: 'failed', score: 0, output: /^Not graded: the grader failed on this test/ });
  const junit = submissionJunit(sub, small, { sealed: true, note: 'on' });
  t.match(junit, /failures="0" errors="1"/);
  t.match(junit, /<error message="not graded: harness error"[^>]*>not graded: 1 run\(s\) ended/);
  t.notMatch(junit, /<failure /);
});
