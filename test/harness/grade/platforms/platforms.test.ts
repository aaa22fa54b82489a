// The platform files of a submission (harness/grade/platforms/platforms.ts): Gradescope's results.json for
// the student's folder and, with the staff-only parts, for upload; PrairieLearn's; each checked
// against a JSON Schema transcribed from the platform's specification, including the partial
// files written while a submission is graded (progressive.ts). And the provenance they carry.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { finishedData } from '../../../../harness/grade/platforms/grade-data.js';
import { gradescopeResults, STAFF_TEST_NAME } from '../../../../harness/grade/platforms/gradescope.js';
import { submissionJunit } from '../../../../harness/grade/platforms/junit.js';
import { PLATFORMS } from '../../../../harness/grade/platforms/platforms.js';
import { PRAIRIELEARN_LIMIT, prairieLearnResults } from '../../../../harness/grade/platforms/prairielearn.js';
import { Progress } from '../../../../harness/grade/progressive.js';
import { chaoslabVersion, replayCommand, scenarioSeeds, submissionHash } from '../../../../harness/grade/provenance.js';
import { checkRubric } from '../../../../harness/grade/rubric.js';
import { type RunOutcome, scoreSubmission, ungradable } from '../../../../harness/grade/score.js';
import { scenariosDir } from '../../../../harness/base/paths.js';
import { resolveScenario } from '../../../../harness/catalogue/catalogue.js';
import { loadScenario } from '../../../../harness/catalogue/load.js';
import { platformProblems } from '../../../helpers/platform-schemas.js';

const rubric = checkRubric(
  {
    lab: 'ledger',
    scenarios: [
      { name: 'happy-path', points: 1, feedback: '§3: read and apply' },
      { name: 'duplicate-delivery', points: 2, repeat: 2, visibility: 'after_due_date', feedback: '§3: a duplicate is acknowledged, not applied' },
      { name: 'gap', points: 0, visibility: 'hidden', feedback: '§3: a gap ends the session' },
    ],
  },
  join(scenariosDir, '..', 'rubrics', 'ledger.yaml'),
  ['ledger'],
);
const scenarios = new Map(rubric.tests.map((x) => [x.name, loadScenario(resolveScenario(x.name, scenariosDir))]));
const sealing = { sealed: true, note: 'sealed mode on' };
const pass: RunOutcome = { status: 'pass', reasons: [] };
const fail = (why: string): RunOutcome => ({ status: 'fail', reasons: [why], runDir: `/out/.staff/x/runs/${why.length}` });

const valid = (t: Test, dir: string, what: string) => {
  t.same(platformProblems('gradescope', readFileSync(join(dir, 'results.json'), 'utf8')), [], `${what}: results.json by Gradescope's specification`);
  if (existsSync(join(dir, 'prairielearn.json')))
    t.same(platformProblems('prairielearn', readFileSync(join(dir, 'prairielearn.json'), 'utf8')), [], `${what}: prairielearn.json by PrairieLearn's`);
};
const json = (dir: string, file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8'));

t.test('progressive: a whole, valid file before the first run, after each run, and at the end', async (t) => {
  const dir = t.testdir({ class: { sub: { 'client.py': 'print(1)\n' } }, out: { sub: {}, staff: {} } });
  const student = join(dir, 'out', 'sub');
  const staff = join(dir, 'out', 'staff');
  const progress = new Progress(
    { rubric, scenarios, sealing, replayOptions: ['--jobs', '1'] },
    { name: 'sub', folder: join(dir, 'class', 'sub') },
    student,
    staff,
  );
  progress.begin();
  valid(t, student, 'before any run');
  valid(t, staff, 'before any run (staff)');
  let r = json(student, 'results.json');
  t.same(
    r.tests.map((x: { score: number; status: string }) => [x.score, x.status]),
    [
      [0, 'failed'],
      [0, 'failed'],
      [0, 'failed'],
    ],
  );
  t.match(r.tests[0].output, /^Not run to its end/);
  t.match(r.output, /3 test\(s\) did not run to their end/);
  t.equal(json(student, 'prairielearn.json').chaoslab.complete, false);

  progress.finished('happy-path', pass, 'default: `python3 client.py`');
  progress.finished('duplicate-delivery', fail('seq 3 applied twice'), 'default: `python3 client.py`');
  valid(t, student, 'after two runs');
  r = json(student, 'results.json');
  t.same(
    r.tests.map((x: { score: number; status: string; extra_data?: { pending?: boolean } }) => [x.score, x.status, x.extra_data?.pending ?? false]),
    [
      [1, 'passed', false],
      [0, 'failed', true],
      [0, 'failed', false],
    ],
    'happy-path scored; duplicate-delivery has 1 of its 2 runs: still pending',
  );
  t.equal(r.score, 1);
  t.equal(json(student, 'prairielearn.json').score, 1 / 3);

  progress.finished('duplicate-delivery', pass, 'default: `python3 client.py`');
  progress.finished('gap', fail('seq 7 missing below the cursor'), 'default: `python3 client.py`');
  const outcomes = new Map([
    ['happy-path', [pass]],
    ['duplicate-delivery', [fail('seq 3 applied twice'), pass]],
    ['gap', [fail('seq 7 missing below the cursor')]],
  ]);
  progress.setSubmissionHash(submissionHash(join(dir, 'class', 'sub')));
  const final = progress.end(scoreSubmission('sub', rubric, outcomes, 'default: `python3 client.py`'));
  valid(t, student, 'at the end');
  valid(t, staff, 'at the end (staff)');
  t.same(readdirSync(student).sort(), ['junit.xml', 'prairielearn.json', 'results.json'], 'no temporary file left');
  t.same(readdirSync(staff).sort(), ['results.json'], 'the upload copy only (no temporary file)');

  // Provenance, filled once and carried by every file.
  t.match(final.provenance, {
    lab: 'ledger',
    scenarioSetHash: /^sha256:[0-9a-f]{64}$/,
    submissionHash: submissionHash(join(dir, 'class', 'sub')),
    seeds: { 'happy-path': scenarioSeeds(scenarios.get('happy-path')!) },
  });
  t.equal(final.provenance!.replay, `chaoslab grade '${join(dir, 'class')}' --submission 'sub' --rubric '${rubric.file}' --jobs 1`);
  t.equal(final.scenarios[2]!.replay, `chaoslab grade '${join(dir, 'class')}' --submission 'sub' --rubric '${rubric.file}' --only 'gap' --jobs 1`);

  // Who sees what: the student's copy names no hidden scenario; the upload has it for staff.
  const studentText = readFileSync(join(student, 'results.json'), 'utf8');
  t.notMatch(studentText, /"gap"|\bgap\b.*cursor|missing below|--only|a gap ends/, 'nothing of the hidden scenario in the student copy');
  t.notMatch(readFileSync(join(student, 'prairielearn.json'), 'utf8'), /"gap"|missing below|a gap ends/, 'nor in prairielearn.json');
  t.notMatch(readFileSync(join(student, 'junit.xml'), 'utf8'), /"gap"|missing below|a gap ends/, 'nor in junit.xml');
  const upload = json(staff, 'results.json');
  t.equal(upload.stdout_visibility, 'hidden');
  t.match(upload.tests[2], {
    name: 'hidden test 1',
    visibility: 'hidden',
    output: /^Staff only \(hidden scenario gap\): Failed[^:]*: .*\n- seq 7 missing below the cursor/,
  });
  const notes = upload.tests[3];
  t.match(notes, { name: STAFF_TEST_NAME, visibility: 'hidden', status: 'passed' });
  t.notOk('score' in notes || 'max_score' in notes, 'the staff notes carry no points');
  t.match(notes.output, /replay this grade: chaoslab grade .*\nreplay happy-path \(passed\): .*--only 'happy-path'/);
  t.equal(upload.extra_data.chaoslab.provenance.replay, final.provenance!.replay);
  t.equal(upload.score, 1, 'the score: the same in both files');
  t.equal(json(student, 'results.json').score, 1);
});

t.test('the top-level output reveals no test that is not shown yet', async (t) => {
  const sub = scoreSubmission(
    's',
    rubric,
    new Map([
      ['happy-path', [pass]],
      ['duplicate-delivery', [pass, pass]],
      ['gap', [pass]],
    ]),
    'x',
  );
  for (const audience of ['student', 'platform'] as const) {
    const r = gradescopeResults(finishedData(sub, rubric, sealing, 3), audience);
    t.equal(r.score, 3);
    t.match(r.output, /Tests shown now: 1 \/ 1 points\.\n1 more test\(s\) \(2 points\) are shown after the due date/);
    t.notMatch(r.output, /3 \/ 3|duplicate-delivery/);
    t.equal(r.output_format, 'text');
    t.same(platformProblems('gradescope', JSON.stringify(r)), []);
  }
});

t.test('PrairieLearn: score 0–1; not gradable when the submission could not be graded; cut to 1 MB', async (t) => {
  const bad = ungradable('b', rubric, 'chaoslab.json: `make`', 'the build `make` failed (exit status 2); see build.log');
  const pl = prairieLearnResults(finishedData(bad, rubric, sealing, 1));
  t.match(pl, { gradable: false, format_errors: ['the build `make` failed (exit status 2); see build.log'] });
  t.notOk('score' in pl);
  t.same(platformProblems('prairielearn', JSON.stringify(pl)), []);

  const huge = 'x'.repeat(700_000);
  const big = scoreSubmission(
    'h',
    rubric,
    new Map([
      ['happy-path', [fail(`${huge}a`)]],
      ['duplicate-delivery', [fail(`${huge}b`), pass]],
      ['gap', [pass]],
    ]),
    'x',
  );
  const text = JSON.stringify(prairieLearnResults(finishedData(big, rubric, sealing, 1)));
  t.ok(Buffer.byteLength(text) <= PRAIRIELEARN_LIMIT, `${Buffer.byteLength(text)} bytes fit`);
  t.match(JSON.parse(text).message, /Outputs were cut to fit PrairieLearn's 1000000-byte limit/);
  t.match(JSON.parse(text).tests[0].output, /… \(cut: \d+ more characters\)$/);
  t.same(platformProblems('prairielearn', text), []);
});

t.test('the schemas refuse what the specifications do not allow', async (t) => {
  t.match(platformProblems('gradescope', JSON.stringify({ score: 1, tests: [{ name: 'a', visibility: 'secret' }] })), [/visibility/]);
  t.match(platformProblems('gradescope', JSON.stringify({ score: 1, output_format: 'latex' })), [/output_format/]);
  t.match(platformProblems('gradescope', JSON.stringify({ score: 1, grade: 3 })), [/additional/]);
  t.match(platformProblems('prairielearn', JSON.stringify({ score: 1.5 })), [/score/]);
  t.match(platformProblems('prairielearn', JSON.stringify({ gradable: true })), [/score/]);
  t.same(platformProblems('prairielearn', JSON.stringify({ gradable: false, format_errors: 'no file' })), []);
});

t.test('one registry of platforms, one file name each', async (t) => {
  t.same(
    PLATFORMS.map((p) => [p.name, p.file, p.staff !== undefined]),
    [
      ['Gradescope', 'results.json', true],
      ['PrairieLearn', 'prairielearn.json', false],
      ['JUnit', 'junit.xml', false],
    ],
  );
  const sub = scoreSubmission('s', rubric, new Map([['gap', [fail('secret finding')]]]), 'x');
  t.notMatch(submissionJunit(sub, rubric, sealing), /\bgap\b|secret finding/, 'junit.xml names no hidden scenario');
});

t.test('provenance: the submission hash follows no link; seeds; replay commands quoted for a shell', async (t) => {
  const dir = t.testdir({ a: { 'x.py': 'one', sub: { 'y.txt': 'two' } }, b: { 'x.py': 'one', sub: { 'y.txt': 'two' } }, target: 'secret' });
  t.equal(submissionHash(join(dir, 'a')), submissionHash(join(dir, 'b')), 'the same files, the same hash');
  writeFileSync(join(dir, 'b', 'sub', 'y.txt'), 'two!');
  t.not(submissionHash(join(dir, 'a')), submissionHash(join(dir, 'b')), 'one byte changed, another hash');
  symlinkSync(join(dir, 'target'), join(dir, 'a', 'link'));
  const linked = submissionHash(join(dir, 'a'));
  writeFileSync(join(dir, 'target'), 'changed');
  t.equal(submissionHash(join(dir, 'a')), linked, "a link's target is not read");
  mkdirSync(join(dir, 'a', 'empty'));
  t.not(submissionHash(join(dir, 'a')), linked, 'an empty folder counts');

  t.same(scenarioSeeds({ source: 'events:\n  generate: { count: 3, seed: 11 }\nfaults:\n  - random: { seed: 4 }\n' }), [11, 4]);
  t.same(scenarioSeeds({ source: 'name: x\n' }), []);
  t.equal(
    replayCommand({ command: "python3 it's.py", cwd: '/c d', name: 'n' }, '/r.yaml', ['--unsealed'], 'gap'),
    `cd '/c d' && chaoslab grade --consumer 'python3 it'\\''s.py' --name 'n' --rubric '/r.yaml' --only 'gap' --unsealed`,
  );
  t.match(chaoslabVersion(), /^\d+\.\d+\.\d+( \([0-9a-f]{12}(\+changes)?\))?$/);
});
