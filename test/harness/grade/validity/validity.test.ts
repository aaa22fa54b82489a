// The validity proof's pieces (harness/grade/validity/): the class folder it grades, the cell by
// cell comparison with a mutant matrix, the reading back of every output, and what it prints.
// test/e2e/grade-validity.test.ts runs them on a real class.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { writeClassOutputs } from '../../../../harness/commands/grade-action.js';
import { type ClassReport, CLASS_SCHEMA } from '../../../../harness/grade/class/class-data.js';
import { loadRubric, type Rubric } from '../../../../harness/grade/rubric.js';
import { type RunOutcome, scoreSubmission } from '../../../../harness/grade/score.js';
import { finishedData } from '../../../../harness/grade/platforms/grade-data.js';
import { gradescopeResults } from '../../../../harness/grade/platforms/gradescope.js';
import { submissionJunit } from '../../../../harness/grade/platforms/junit.js';
import { absoluteCommand, validitySubmissions, writeValidityClass } from '../../../../harness/grade/validity/class-folder.js';
import {
  cellKey,
  compareGradings,
  differingCells,
  exitStatusOf,
  expectedCell,
  type MatrixFile,
  matrixRow,
  type Validity,
  withReruns,
} from '../../../../harness/grade/validity/compare.js';
import { outputProblems } from '../../../../harness/grade/validity/outputs.js';
import { labExitStatus, proofPrograms, proveLabValidity } from '../../../../harness/grade/validity/lab-proof.js';
import { judge, ProofError, proveValidity, readMatrix } from '../../../../harness/grade/validity/proof.js';
import { renderMarkdown, renderTable, verdictLine } from '../../../../harness/grade/validity/render.js';
import { labNamed, labNames } from '../../../../harness/labs/registry.js';
import { consumersNamed, loadMatrixConsumers, loadMatrixServers } from '../../../../harness/run/mutants.js';
import { projectRoot } from '../../../../harness/base/paths.js';
import { smallClass, smallRubric } from '../../../helpers/grade.js';

const rubric = smallRubric();
// smallClass(): alice passes everything; bob passes happy-path only (2 of 3 duplicate-delivery
// runs, the hidden sigkill-storm failed); carol's build failed.
const submissions = [
  { name: 'alice', consumer: 'typescript', kind: 'reference' as const },
  { name: 'bob', consumer: 'm (python)', kind: 'mutant' as const },
  { name: 'carol', consumer: 'broken (typescript)', kind: 'mutant' as const },
];
const row = (consumer: string, statuses: string[]) => ({
  consumer,
  kind: 'x',
  cells: ['happy-path', 'duplicate-delivery', 'sigkill-storm'].map((scenario, i) => ({ scenario, status: statuses[i]!, reason: `why ${i}` })),
});
const matrixOf = (bob = ['pass', 'fail', 'fail']): MatrixFile => ({
  lab: 'ledger',
  rows: [row('typescript', ['pass', 'pass', 'pass']), row('m (python)', bob), row('broken (typescript)', ['fail', 'fail', 'fail'])],
});
const compare = (matrix: MatrixFile, gradings: ClassReport[] = [smallClass(), smallClass()]) =>
  compareGradings({ matrix, rubric: rubric.tests, submissions, gradings });

t.test('a cell is worth its points when the matrix passed it, 0 when it failed, nothing otherwise', async (t) => {
  const matrix = matrixOf(['pass', 'error', 'skipped']);
  const [happy, dup, storm] = rubric.tests;
  t.same(expectedCell(matrix, 'm (python)', happy!), { points: 1 });
  t.same(expectedCell(matrix, 'broken (typescript)', dup!), { points: 0 });
  t.same(expectedCell(matrix, 'm (python)', dup!), { none: "the matrix's run ended error: why 1" });
  t.same(expectedCell(matrix, 'm (python)', storm!), { none: "the matrix's run ended skipped: why 2" });
  t.same(expectedCell(matrix, 'nobody', happy!), { none: 'the matrix has no row nobody' });
  t.same(expectedCell(matrix, 'typescript', { name: 'gap', points: 1 }), { none: 'the matrix did not run typescript × gap' });
});

t.test("a server row of the same label (the server matrix's typescript) is not a consumer's cell, wherever it stands", async (t) => {
  const consumerRows = matrixOf().rows;
  const server = { consumer: 'm (python)', kind: 'mutant', program: 'server', cells: [{ scenario: rubric.tests[0]!.name, status: 'fail', reason: 'lost' }] };
  const matrix: MatrixFile = { lab: 'feed', rows: [server, ...consumerRows] };
  t.same(expectedCell(matrix, 'm (python)', rubric.tests[0]!), { points: 1 }, 'the consumer row, not the server row before it');
  t.equal(matrixRow(matrix, 'm (python)', 'server'), server);
  t.equal(matrixRow({ lab: 'feed', rows: [server] }, 'm (python)'), undefined);
  t.same(expectedCell(matrix, 'm (python)', rubric.tests[0]!, 'server'), { points: 0 }, "a server submission's cell is the server row's");
  const servers = submissions.map((x) => ({ ...x, program: 'server' as const }));
  const v = compareGradings({ matrix, rubric: rubric.tests.slice(0, 1), submissions: servers.slice(1, 2), gradings: [smallClass()] });
  t.equal(v.program, 'server');
  t.equal(v.rows[0]!.cells[0]!.problem, 'grading 1 gave 1, the matrix says 0', 'bob passed happy-path; the server row says it failed');
  t.match(verdictLine(v), /^grade validity \(feed, servers\): NOT VALID/);
  t.equal(compare(matrixOf()).program, undefined, 'a class of consumers');
});

t.test('gradings as the matrix says: valid', async (t) => {
  const v = compare(matrixOf());
  t.equal(v.verdict, 'valid');
  t.equal(exitStatusOf(v), 0);
  t.same(
    v.rows.map((r) => [r.submission, r.expected, r.totals]),
    [
      ['alice', 6, [6, 6]],
      ['bob', 1, [1, 1]],
      ['carol', 0, [0, 0]],
    ],
  );
  const table = renderTable(v);
  t.match(table, /^submission +kind +matrix +grade 1 +grade 2 +cells\nalice +reference +6 +6 +6 +3\/3\n/);
  t.match(table, /\ngrade validity \(ledger\): VALID — 3 submissions × 3 rubric scenarios, graded 2 times: /);
  t.match(renderMarkdown(v, ['a note']), /- a note\n[\s\S]*\| bob \| ✓ \| ✗ \| ✗ \|/);
});

t.test('one cell flipped in the matrix: not valid, and the cell is named', async (t) => {
  // bob passed 2 of 3 duplicate-delivery runs: the matrix's single passing run says 2 points.
  const v = compare(matrixOf(['pass', 'pass', 'fail']));
  t.equal(v.verdict, 'not valid');
  t.equal(exitStatusOf(v), 1);
  t.equal(v.mismatches, 1);
  const cell = v.rows[1]!.cells[1]!;
  t.equal(cell.agrees, false);
  t.equal(cell.problem, 'grading 1 gave 0 (2 of 3 runs passed), the matrix says 2; grading 2 gave 0 (2 of 3 runs passed), the matrix says 2');
  t.match(
    renderTable(v),
    /bob +mutant +3 +1 +1 +2\/3 +✗\n[\s\S]*\nDIFFERS bob × duplicate-delivery: grading 1 gave 0[\s\S]*NOT VALID — [^\n]*: 1 cells not as the mutant matrix says/,
  );
  t.match(renderMarkdown(v, []), /\| bob \| ✓ \| \*\*✓≠0\/0\*\* \| ✗ \|/);
});

t.test('a differing cell whose reruns show the gradings’ outcome is a mutant caught only sometimes, not a mismatch', async (t) => {
  const v = compare(matrixOf(['pass', 'pass', 'fail']));
  t.same(differingCells(v), [{ submission: 'bob', consumer: 'm (python)', scenario: 'duplicate-delivery' }]);
  // Run again outside the grader: it failed 9 of 10 (the matrix's one pass was the rare one).
  const sometimes = withReruns(v, new Map([[cellKey('bob', 'duplicate-delivery'), { runs: 10, failed: 9 }]]));
  t.equal(sometimes.verdict, 'valid');
  t.equal(sometimes.mismatches, 0);
  t.equal(sometimes.intermittent, 1);
  t.same(sometimes.rows[1]!.cells[1]!.rerun, { runs: 10, failed: 9 });
  t.match(
    renderTable(sometimes),
    /bob +mutant +3 +1 +1 +2\/3 +~\n[\s\S]*\nSOMETIMES bob × duplicate-delivery: grading 1 gave 0[^\n]*— run again 10 times outside the grader: failed 9\n/,
  );
  t.match(renderTable(sometimes), /VALID — [^\n]*: every cell as the mutant matrix says; 1 cells where the mutant is caught only some of the time/);
  t.match(renderMarkdown(sometimes, []), /\| bob \| ✓ \| ✓~0\/0 \(9\/10 failed\) \| ✗ \|/);
  // It passed all 10 reruns: the grader's failure is not the mutant's, and stays a mismatch.
  const wrong = withReruns(v, new Map([[cellKey('bob', 'duplicate-delivery'), { runs: 10, failed: 0 }]]));
  t.equal(wrong.verdict, 'not valid');
  t.equal(wrong.mismatches, 1);
  t.notOk(wrong.rows[1]!.cells[1]!.intermittent);
  t.match(renderTable(wrong), /\nDIFFERS bob × duplicate-delivery: .* failed 0\n/);
  // The other way round: the gradings scored a cell the matrix failed; reruns that never pass leave it a mismatch.
  const lucky = compare(matrixOf(['fail', 'fail', 'fail']));
  t.equal(withReruns(lucky, new Map([[cellKey('bob', 'happy-path'), { runs: 10, failed: 10 }]])).mismatches, 1);
  t.equal(withReruns(lucky, new Map([[cellKey('bob', 'happy-path'), { runs: 10, failed: 7 }]])).mismatches, 0);
});

t.test('a matrix cell that neither passed nor failed judges nothing: not judged (exit 2)', async (t) => {
  const v = compare(matrixOf(['pass', 'error', 'fail']));
  t.equal(v.verdict, 'not judged');
  t.equal(exitStatusOf(v), 2);
  t.equal(v.unjudged, 1);
  t.equal(v.rows[1]!.expected, undefined);
  t.match(renderTable(v), /UNJUDGED bob × duplicate-delivery: the matrix's run ended error[\s\S]*NOT JUDGED/);
});

t.test('a grading that gives other scores the second time, or lacks a submission, is not valid', async (t) => {
  const again = smallClass();
  again.submissions[0]!.scenarios[0]!.score = 0;
  const v = compare(matrixOf(), [smallClass(), again]);
  t.equal(v.verdict, 'not valid');
  t.match(v.outputProblems, [/^grading 2 gave other scores than grading 1 in 1 cells: alice × happy-path: 1 then 0$/]);
  const fewer = smallClass();
  fewer.submissions.pop();
  const w = compare(matrixOf(), [smallClass(), fewer]);
  t.match(w.rows[2]!.cells[0]!.problem, /grading 2 has no such cell/);
  t.same(w.rows[2]!.totals, [0, undefined]);
  // A harness error in a grading's run judges nothing (and is no agreement either).
  const broken = smallClass();
  broken.submissions[1]!.scenarios[2]!.harnessError = true;
  const x = compare(matrixOf(), [broken]);
  t.equal(x.verdict, 'not judged');
  t.match(x.rows[1]!.cells[2]!.problem, /grading 1: a run ended in a harness error/);
});

/** Writes a grading's files for `report` into `dir` as grade-submission.ts and grade-action.ts do. */
function writeGrading(dir: string, report: ClassReport, graded: Rubric = rubric): void {
  for (const sub of report.submissions) {
    mkdirSync(join(dir, sub.submission), { recursive: true });
    writeFileSync(join(dir, sub.submission, 'results.json'), JSON.stringify(gradescopeResults(finishedData(sub, graded, report.sealing, 1), 'student')));
    writeFileSync(join(dir, sub.submission, 'junit.xml'), submissionJunit(sub, graded, report.sealing));
    for (const s of sub.scenarios.filter((x) => x.status === 'failed' && x.visibility !== 'hidden' && !sub.problem)) {
      mkdirSync(join(dir, sub.submission, 'reports'), { recursive: true });
      writeFileSync(join(dir, sub.submission, 'reports', `${s.name}.html`), 'report');
    }
  }
  writeClassOutputs(dir, report);
}

t.test('every output is read back against class.json; a wrong one is named', async (t) => {
  const dir = t.testdir();
  writeGrading(dir, smallClass(false));
  t.same(outputProblems(dir, smallClass(false), 'g'), [], 'the writers agree with class.json');
  const edit = (file: string, from: string | RegExp, to: string) => writeFileSync(join(dir, file), readFileSync(join(dir, file), 'utf8').replace(from, to));
  edit('bob/results.json', '"score":1,', '"score":2,');
  edit(
    'alice/junit.xml',
    '<testcase name="happy-path" classname="chaoslab.grade.happy-path"></testcase>',
    '<testcase name="happy-path" classname="chaoslab.grade.happy-path">\n      <failure message="x" type="chaoslab.grade">x</failure>\n    </testcase>',
  );
  edit('grades.csv', 'bob,graded,1,6,no,1,0,0', 'bob,graded,1,6,no,1,2,0');
  edit('index.html', '<td>0 / 6</td>', '<td>6 / 6</td>');
  rmSync(join(dir, 'bob', 'reports', 'duplicate-delivery.html'));
  mkdirSync(join(dir, 'alice', 'reports'));
  writeFileSync(join(dir, 'alice', 'reports', 'sigkill-storm.html'), 'a hidden report');
  t.same(outputProblems(dir, smallClass(false), 'g'), [
    'g: alice/junit.xml: test case 1 happy-path failed, class.json happy-path passed',
    'g: alice/reports/sigkill-storm.html: there, though the scenario passed (after_due_date)',
    'g: bob/results.json: score 2, class.json 1',
    'g: bob/reports/duplicate-delivery.html: missing, though the scenario failed (visible)',
    'g: grades.csv: row bob,graded,1,6,1,2,0, class.json bob,graded,1,6,1,0,0',
    'g: index.html: carol: not 0 / 6',
  ]);
  rmSync(join(dir, 'grades.csv'));
  rmSync(join(dir, 'carol', 'results.json'));
  const missing = outputProblems(dir, smallClass(false), 'g');
  t.ok(missing.includes('g: carol/results.json: missing') && missing.includes('g: grades.csv: missing'), missing.join('\n'));
});

t.test('judge(): two gradings on disk against a matrix; validity.md and validity.json beside them', async (t) => {
  const out = t.testdir({ g1: {}, g2: {} });
  writeGrading(join(out, 'g1'), smallClass());
  writeGrading(join(out, 'g2'), smallClass());
  const lines: string[] = [];
  const v = judge({
    matrix: matrixOf(),
    rubric,
    submissions: submissions.map((s) => ({ ...s, language: 'x', command: 'x', manifest: 'chaoslab.json' as const })),
    dirs: [join(out, 'g1'), join(out, 'g2')],
    out,
    log: (l) => lines.push(l),
  });
  t.equal(v.verdict, 'valid');
  t.match(lines.join('\n'), /VALID/);
  t.match(readFileSync(join(out, 'validity.md'), 'utf8'), /^# chaoslab grade validity — ledger: VALID/);
  t.equal((JSON.parse(readFileSync(join(out, 'validity.json'), 'utf8')) as { verdict: string }).verdict, 'valid');
  // The same class.json, but another grades.csv: the repeat is caught on the bytes too.
  writeFileSync(join(out, 'g2', 'grades.csv'), `${readFileSync(join(out, 'g2', 'grades.csv'), 'utf8')}\n`);
  const w = judge({ matrix: matrixOf(), rubric, submissions: [], dirs: [join(out, 'g1'), join(out, 'g2')], out });
  t.match(w.outputProblems, ['grades.csv differs between the gradings']);
});

t.test('the class: every matrix consumer a submission, manifests JSON and YAML in turn, commands absolute', async (t) => {
  const lab = labNamed('ledger')!;
  const subs = validitySubmissions(consumersNamed(loadMatrixConsumers(lab), ['gap-skip']), projectRoot);
  t.same(
    subs.map((s) => [s.name, s.consumer, s.manifest]),
    [
      ['ref-typescript', 'typescript', 'chaoslab.json'],
      ['ref-python', 'python', 'chaoslab.yaml'],
      ['gap-skip-ts', 'gap-skip (typescript)', 'chaoslab.json'],
      ['gap-skip-py', 'gap-skip (python)', 'chaoslab.yaml'],
    ],
  );
  t.equal(subs[3]!.command, `python3 ${join(projectRoot, 'consumer/ledger/mutants/gap-skip.py')}`);
  t.equal(absoluteCommand('node not/there.js --x', '/r'), 'node not/there.js --x', 'only words naming a file of the project');
  const dir = t.testdir({ root: { 'a b.js': '' } });
  t.equal(absoluteCommand('node a b.js', join(dir, 'root')), 'node a b.js');
  copyFileSync(join(dir, 'root', 'a b.js'), join(dir, 'root', 'c.js'));
  t.equal(absoluteCommand('node c.js', join(dir, 'root')), `node ${join(dir, 'root', 'c.js')}`);
  writeValidityClass(join(dir, 'class'), 'ledger', subs);
  t.same(readdirSync(join(dir, 'class')).sort(), ['gap-skip-py', 'gap-skip-ts', 'ref-python', 'ref-typescript']);
  t.same(JSON.parse(readFileSync(join(dir, 'class', 'ref-typescript', 'chaoslab.json'), 'utf8')), { lab: 'ledger', command: subs[0]!.command });
  t.equal(readFileSync(join(dir, 'class', 'gap-skip-py', 'chaoslab.yaml'), 'utf8'), `lab: ledger\ncommand: ${subs[3]!.command}\n`);
  t.throws(() => writeValidityClass(join(dir, 'class'), 'ledger', subs), /exists already/);
  // A checkout deep in the file system: the command stays on its line, as staff would copy it.
  const deep = { ...subs[3]!, command: `python3 ${join(dir, 'a'.repeat(40), 'b'.repeat(40), 'consumer', 'ledger', 'mutants', 'gap_skip.py')}` };
  writeValidityClass(join(dir, 'deep'), 'ledger', [deep]);
  t.equal(readFileSync(join(dir, 'deep', 'gap-skip-py', 'chaoslab.yaml'), 'utf8'), `lab: ledger\ncommand: ${deep.command}\n`, 'a long command is not folded');
});

t.test("a class of servers: the lab's server matrix rows, each manifest naming a `server`", async (t) => {
  const subs = validitySubmissions(consumersNamed(loadMatrixServers(labNamed('feed')!), ['no-heartbeat']), projectRoot);
  t.same(
    subs.map((s) => [s.name, s.consumer, s.program, s.manifest]),
    [
      ['ref-typescript', 'typescript', 'server', 'chaoslab.json'],
      ['ref-python', 'python', 'server', 'chaoslab.yaml'],
      ['no-heartbeat-ts', 'no-heartbeat (typescript)', 'server', 'chaoslab.json'],
      ['no-heartbeat-py', 'no-heartbeat (python)', 'server', 'chaoslab.yaml'],
    ],
  );
  t.equal(subs[3]!.command, `python3 ${join(projectRoot, 'publisher/feed/mutants/no-heartbeat.py')}`);
  const dir = t.testdir();
  writeValidityClass(join(dir, 'class'), 'feed', subs);
  t.same(JSON.parse(readFileSync(join(dir, 'class', 'ref-typescript', 'chaoslab.json'), 'utf8')), { lab: 'feed', server: subs[0]!.command });
  t.equal(readFileSync(join(dir, 'class', 'no-heartbeat-py', 'chaoslab.yaml'), 'utf8'), `lab: feed\nserver: ${subs[3]!.command}\n`);
  const matrix: MatrixFile = {
    lab: 'feed',
    rows: [{ consumer: 'typescript', kind: 'reference', cells: [{ scenario: 'feed-server-heartbeats', status: 'pass', reason: '' }] }],
  };
  const heartbeats = { ...rubric, lab: 'feed', tests: [{ ...rubric.tests[0]!, name: 'feed-server-heartbeats' }] };
  t.throws(
    () => readMatrix(writeJson(dir, 'm.json', matrix), 'feed', subs.slice(0, 1), heartbeats),
    /does not cover the class .*: no server typescript$/,
    "a consumer row is not the server's",
  );
});

/** `value` as JSON in `dir/name`; the file's path. */
function writeJson(dir: string, name: string, value: unknown): string {
  writeFileSync(join(dir, name), JSON.stringify(value));
  return join(dir, name);
}

t.test("which programs a lab's proof proves, and ONLY= split between them", async (t) => {
  const feed = labNamed('feed')!;
  const ledger = labNamed('ledger')!;
  t.same(proofPrograms(feed, undefined, undefined), [{ program: 'consumer' }, { program: 'server' }], 'a lab with a push server: both');
  t.same(proofPrograms(ledger, undefined, undefined), [{ program: 'consumer' }]);
  t.same(proofPrograms(feed, 'server', undefined), [{ program: 'server' }]);
  t.same(
    proofPrograms(feed, undefined, ['no-heartbeat']),
    [{ program: 'server', only: ['no-heartbeat'] }],
    'the consumers none of whose mutants is named are left out',
  );
  t.same(proofPrograms(feed, undefined, ['always-null-subscribe', 'no-heartbeat']), [
    { program: 'consumer', only: ['always-null-subscribe'] },
    { program: 'server', only: ['no-heartbeat'] },
  ]);
  t.throws(() => proofPrograms(feed, 'consumer', ['no-heartbeat']), /ONLY: no mutant no-heartbeat; mutants: consumers always-null-subscribe, /);
  t.throws(() => proofPrograms(feed, undefined, ['nope']), /ONLY: no mutant nope; mutants: consumers .*; servers snapshot-then-subscribe, /);
  t.throws(() => proofPrograms(ledger, 'server', undefined), /PROGRAM: the ledger lab has no push server under test/);
  t.throws(() => proofPrograms(feed, 'both', undefined), /PROGRAM: unknown program "both"; programs: consumer, server/);
  const verdicts = (...vs: Validity['verdict'][]) => vs.map((verdict) => ({ validity: { verdict } as Validity }));
  t.same(
    [labExitStatus(verdicts('valid', 'valid')), labExitStatus(verdicts('not judged', 'valid')), labExitStatus(verdicts('not judged', 'not valid'))],
    [0, 2, 1],
  );
});

t.test('a matrix that does not cover the class, or of another lab, is refused before any grading', async (t) => {
  const dir = t.testdir({ 'm.json': JSON.stringify(matrixOf()), 'bad.json': '{' });
  const subs = submissions.map((s) => ({ ...s, language: 'x', command: 'x', manifest: 'chaoslab.json' as const }));
  t.equal(readMatrix(join(dir, 'm.json'), 'ledger', subs, rubric).rows.length, 3);
  t.throws(() => readMatrix(join(dir, 'm.json'), 'feed', subs, rubric), /is the ledger lab's matrix, not feed's/);
  t.throws(() => readMatrix(join(dir, 'm.json'), 'ledger', [...subs, { ...subs[0]!, consumer: 'other' }], rubric), /does not cover the class .*: no other$/);
  const wider = { ...rubric, tests: [...rubric.tests, { ...rubric.tests[0]!, name: 'gap' }] };
  t.throws(() => readMatrix(join(dir, 'm.json'), 'ledger', subs, wider), /no typescript × gap, m \(python\) × gap, broken \(typescript\) × gap/);
  t.throws(() => readMatrix(join(dir, 'bad.json'), 'ledger', subs, rubric), ProofError);
});

t.test('proveValidity(): the class from index.yaml, the matrix and two gradings through the CLI (a stand-in here)', async (t) => {
  const dir = t.testdir({
    'rubric.yaml':
      'lab: ledger\nscenarios:\n  - { name: happy-path, points: 1, feedback: "a" }\n  - { name: gap, points: 1.5, visibility: after_due_date, feedback: "b" }\n',
    'feed.yaml': 'lab: feed\nscenarios:\n  - { name: feed-happy-path, points: 1, feedback: "a" }\n',
    full: { x: '' },
  });
  const graded = loadRubric(join(dir, 'rubric.yaml'), labNames());
  const pass: RunOutcome = { status: 'pass', reasons: [] };
  const fail: RunOutcome = { status: 'fail', reasons: ['seq 3 missing below the cursor'] };
  const names = ['ref-typescript', 'ref-python', 'gap-skip-ts', 'gap-skip-py'];
  const report: ClassReport = {
    schema: CLASS_SCHEMA,
    lab: 'ledger',
    rubric: graded.tests.map((x) => ({ name: x.name, points: x.points, visibility: x.visibility, repeat: x.repeat })),
    sealing: { sealed: true, note: 'sealed' },
    submissions: names.map((n) =>
      scoreSubmission(
        n,
        graded,
        new Map([
          ['happy-path', [pass]],
          ['gap', [n.startsWith('gap') ? fail : pass]],
        ]),
        'chaoslab.json: `x`',
      ),
    ),
    skipped: [],
  };
  writeGrading(join(dir, 'grading'), report, graded);
  const labels = ['typescript', 'python', 'gap-skip (typescript)', 'gap-skip (python)'];
  const cells = (gap: string) => [
    { scenario: 'happy-path', status: 'pass', reason: '' },
    { scenario: 'gap', status: gap, reason: '' },
  ];
  const matrix = { lab: 'ledger', rows: labels.map((consumer, i) => ({ consumer, kind: 'x', cells: cells(i < 2 ? 'pass' : 'fail') })) };
  writeFileSync(join(dir, 'matrix.json'), JSON.stringify(matrix));
  const stub = join(projectRoot, 'test', 'fixtures', 'grade-validity', 'stub-cli.mjs');
  const lines: string[] = [];
  const opts = (out: string) => ({
    lab: 'ledger',
    jobs: 1,
    only: ['gap-skip'],
    rubric: join(dir, 'rubric.yaml'),
    out: join(dir, out),
    cli: stub,
    log: (l: string) => lines.push(l),
  });
  process.env.STUB_GRADING = join(dir, 'grading');
  process.env.STUB_MATRIX = join(dir, 'matrix.json');
  t.teardown(() => {
    delete process.env.STUB_GRADING;
    delete process.env.STUB_MATRIX;
    delete process.env.STUB_GRADE_STATUS;
  });

  const v = await proveValidity(opts('proof'));
  t.equal(v.verdict, 'valid', lines.join('\n'));
  t.same(readdirSync(join(dir, 'proof', 'class')).sort(), [...names].sort());
  t.match(
    lines.join('\n'),
    /\$ chaoslab mutants --lab ledger --program consumer --jobs 1 --reports .*proof\/matrix --mutant gap-skip\nthe mutant matrix: done in/,
  );
  t.match(readFileSync(join(dir, 'proof', 'grade-2.log'), 'utf8'), 'stub chaoslab grade');
  t.match(readFileSync(join(dir, 'proof', 'validity.md'), 'utf8'), /- 4 submissions: ref-typescript, ref-python, gap-skip-ts, gap-skip-py\n/);

  // Given a matrix with one cell flipped: no matrix run, and not valid.
  matrix.rows[3]!.cells[1]!.status = 'pass';
  writeFileSync(join(dir, 'flipped.json'), JSON.stringify(matrix));
  const w = await proveValidity({ ...opts('flipped'), matrix: join(dir, 'flipped.json') });
  t.equal(w.verdict, 'not valid');
  t.match(
    renderTable(w),
    /DIFFERS gap-skip-py × gap: grading 1 gave 0 \(0 of 3 runs passed\), the matrix says 1.5.* — run again 10 times outside the grader: failed 0/,
  );
  t.match(
    lines.join('\n'),
    /\$ chaoslab run gap --repeat 10 --jobs 1 --consumer .*gap-skip\.py --out /,
    'the differing cell was run again, outside the grader',
  );

  await t.rejects(proveValidity({ ...opts('none'), lab: 'nope' }), { message: new RegExp(`unknown lab "nope"; labs: ${labNames().join(', ')}`) });
  await t.rejects(proveValidity(opts('full')), /is not empty: give the proof a new folder/);
  await t.rejects(proveValidity({ ...opts('o'), only: ['gap-skip', 'nope'] }), /ONLY: no mutant nope/);
  await t.rejects(proveValidity({ ...opts('r'), rubric: join(dir, 'feed.yaml') }), /is a rubric for the feed lab, not ledger/);
  await t.rejects(proveValidity({ ...opts('m'), rubric: join(dir, 'missing.yaml') }), /no such rubric file/);
  delete process.env.STUB_MATRIX;
  await t.rejects(proveValidity(opts('no-matrix')), /the mutant matrix wrote no matrix.json under /);
  process.env.STUB_GRADE_STATUS = '2';
  await t.rejects(proveValidity({ ...opts('bad-grading'), matrix: join(dir, 'matrix.json') }), /grading 1 \(chaoslab grade .*\) exited 2: see .*grade-1.log/);
});

t.test('proveLabValidity(): the feed lab proves its consumers and its servers, each a class of its own, against one matrix (a stand-in CLI)', async (t) => {
  const dir = t.testdir({ full: { x: '' } });
  const feed = labNamed('feed')!;
  const pass: RunOutcome = { status: 'pass', reasons: [] };
  const fail: RunOutcome = { status: 'fail', reasons: ['caught'] };
  // Each program: its references and one mutant in both languages; the mutant fails its killer only.
  const programs = [
    { program: 'consumer', rubric: join(projectRoot, 'rubrics', 'feed.yaml'), rows: consumersNamed(loadMatrixConsumers(feed), ['always-null-subscribe']) },
    { program: 'server', rubric: join(projectRoot, 'rubrics', 'feed-server.yaml'), rows: consumersNamed(loadMatrixServers(feed), ['no-heartbeat']) },
  ] as const;
  const matrix: MatrixFile = { lab: 'feed', rows: [] };
  for (const p of programs) {
    const graded = loadRubric(p.rubric, labNames());
    const fails = (kind: string, killer: string | undefined, test: string) => kind === 'mutant' && test === killer;
    const subs = validitySubmissions(p.rows, projectRoot);
    const report: ClassReport = {
      schema: CLASS_SCHEMA,
      lab: 'feed',
      rubric: graded.tests.map((x) => ({ name: x.name, points: x.points, visibility: x.visibility, repeat: x.repeat })),
      sealing: { sealed: true, note: 'sealed' },
      submissions: subs.map((s, i) =>
        scoreSubmission(
          s.name,
          graded,
          new Map(graded.tests.map((x) => [x.name, [fails(s.kind, p.rows[i]!.killer, x.name) ? fail : pass]])),
          'chaoslab.json: `x`',
        ),
      ),
      skipped: [],
    };
    writeGrading(join(dir, `grading-${p.program}`), report, graded);
    for (const r of p.rows)
      matrix.rows.push({
        consumer: r.label,
        kind: r.kind,
        program: p.program,
        cells: graded.tests.map((x) => ({ scenario: x.name, status: fails(r.kind, r.killer, x.name) ? 'fail' : 'pass', reason: '' })),
      });
  }
  const matrixFile = writeJson(dir, 'matrix.json', matrix);
  process.env.STUB_GRADING = join(dir, 'grading-consumer');
  process.env.STUB_GRADING_SERVER = join(dir, 'grading-server');
  process.env.STUB_MATRIX = matrixFile;
  t.teardown(() => {
    for (const v of ['STUB_GRADING', 'STUB_GRADING_SERVER', 'STUB_MATRIX']) delete process.env[v];
  });
  const lines: string[] = [];
  const opts = (out: string) => ({
    lab: 'feed',
    jobs: 1,
    only: ['always-null-subscribe', 'no-heartbeat'],
    out: join(dir, out),
    cli: join(projectRoot, 'test', 'fixtures', 'grade-validity', 'stub-cli.mjs'),
    log: (l: string) => lines.push(l),
  });

  const proofs = await proveLabValidity(opts('both'));
  t.same(
    proofs.map((p) => [p.program, p.out, p.validity.verdict, p.validity.rows.length]),
    [
      ['consumer', join(dir, 'both', 'consumer'), 'valid', 4],
      ['server', join(dir, 'both', 'server'), 'valid', 4],
    ],
    lines.join('\n'),
  );
  t.equal(labExitStatus(proofs), 0);
  const log = lines.join('\n');
  t.match(
    log,
    /\$ chaoslab mutants --lab feed --jobs 1 --reports .*both\/matrix --mutant always-null-subscribe,no-heartbeat\n/,
    'one matrix for both programs',
  );
  t.equal(log.match(/\$ chaoslab mutants/g)?.length, 1);
  t.match(log, /\$ chaoslab grade .*both\/server\/class --rubric .*rubrics\/feed-server\.yaml /);
  const serverScenes = loadRubric(join(projectRoot, 'rubrics', 'feed-server.yaml'), labNames()).tests.length;
  t.match(log, new RegExp(`grade validity \\(feed, servers\\): VALID — 4 submissions × ${serverScenes} rubric scenarios`));
  t.match(readFileSync(join(dir, 'both', 'server', 'class', 'no-heartbeat-py', 'chaoslab.yaml'), 'utf8'), /^lab: feed\nserver: python3 .*no-heartbeat\.py\n$/);
  t.match(readFileSync(join(dir, 'both', 'consumer', 'class', 'ref-typescript', 'chaoslab.json'), 'utf8'), /"command": "node /);

  // The servers alone, the killer's cell flipped in the matrix: not valid, and run again with --server.
  const flipped = structuredClone(matrix);
  const killerCell = flipped.rows
    .find((r) => r.program === 'server' && r.consumer === 'no-heartbeat (python)')!
    .cells.find((c) => c.scenario === 'feed-server-heartbeats')!;
  killerCell.status = 'pass';
  lines.length = 0;
  const [servers] = await proveLabValidity({ ...opts('servers'), only: ['no-heartbeat'], program: 'server', matrix: writeJson(dir, 'flipped.json', flipped) });
  t.equal(servers!.out, join(dir, 'servers'), 'one program: its folder is the proof folder, as before');
  t.equal(servers!.validity.verdict, 'not valid');
  t.match(lines.join('\n'), /\$ chaoslab run feed-server-heartbeats --repeat 10 --jobs 1 --server python3 .*no-heartbeat\.py --out /);

  await t.rejects(
    proveLabValidity({ ...opts('r'), rubric: join(projectRoot, 'rubrics', 'feed.yaml') }),
    /RUBRIC: one rubric grades one program: give PROGRAM=/,
  );
  await t.rejects(proveLabValidity(opts('full')), /is not empty: give the proof a new folder/);
  await t.rejects(proveLabValidity({ ...opts('x'), lab: 'nope' }), /unknown lab "nope"/);
});
