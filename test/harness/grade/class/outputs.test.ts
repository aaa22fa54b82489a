// What grading writes: results.json (Gradescope), junit.xml, grades.csv, index.html, and the
// merge of shards. Hidden scenarios' names and findings never reach a student's files
// (test/harness/grade/platforms/platforms.test.ts).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { classCsv, csvColumnClash } from '../../../../harness/grade/class/class-csv.js';
import { CLASS_FILE, readClassReport, writeClassReport } from '../../../../harness/grade/class/class-data.js';
import { classHtml, mostFailed, scoreDistribution } from '../../../../harness/grade/class/class-html.js';
import { finishedData } from '../../../../harness/grade/platforms/grade-data.js';
import { gradescopeResults } from '../../../../harness/grade/platforms/gradescope.js';
import { submissionJunit } from '../../../../harness/grade/platforms/junit.js';
import { mergeClassReports } from '../../../../harness/grade/class/merge.js';
import type { Provenance } from '../../../../harness/grade/provenance.js';
import { dictReader, smallClass, smallRubric } from '../../../helpers/grade.js';

const rubric = smallRubric();

t.test('results.json: Gradescope schema; a test shown after the due date is not in the total a student sees now', async (t) => {
  const report = smallClass();
  const bob = report.submissions[1]!;
  const results = gradescopeResults(finishedData(bob, rubric, report.sealing, 12.4), 'student');
  t.same(Object.keys(results).sort(), [
    'execution_time',
    'extra_data',
    'output',
    'output_format',
    'score',
    'stdout_visibility',
    'test_name_format',
    'test_output_format',
    'tests',
    'visibility',
  ]);
  t.equal(results.score, 1);
  t.equal(results.execution_time, 12);
  t.same(
    results.tests.map((x) => [x.name, x.score, x.max_score, x.status, x.visibility]),
    [
      ['happy-path', 1, 1, 'passed', 'visible'],
      ['duplicate-delivery', 0, 2, 'failed', 'visible'],
      ['sigkill-storm', 0, 3, 'failed', 'after_due_date'],
    ],
  );
  t.match(results.tests[1]!.output, /^Failed \(2 of 3 runs passed; it scores only if all pass\): §3: a duplicate.*\n- seq 3 applied twice/);
  t.match(results.output, /Tests shown now: 1 \/ 3 points\.\n1 more test\(s\) \(3 points\) are shown after the due date/);
  t.notMatch(results.output, /sigkill-storm|secret finding|crash-safe|\b1 \/ 6\b/, 'the top-level output says nothing of the test not shown yet');
  t.notMatch(JSON.stringify(results), /NOT SEALED/);
  t.match(
    gradescopeResults(finishedData(bob, rubric, smallClass(false).sealing, 1), 'student').output,
    /^NOT SEALED: submissions ran without the sandbox \(sealed mode not available/,
  );
  const carol = gradescopeResults(finishedData(report.submissions[2]!, rubric, report.sealing, 0), 'student');
  t.match(carol.output, /Not graded: the build `make` failed/);
});

t.test('junit.xml: one case per rubric scenario', async (t) => {
  const report = smallClass(false);
  const xml = submissionJunit(report.submissions[1]!, rubric, report.sealing);
  t.match(xml, /tests="3" failures="2"/);
  t.match(xml, /<property name="score" value="1"\/>/);
  t.match(xml, /<property name="sealed" value="false"\/>/);
  t.match(xml, /<property name="warning" value="NOT SEALED/);
  t.match(xml, /<testcase name="sigkill-storm" classname="chaoslab.grade.sigkill-storm">\n {6}<failure message="§4: crash-safe"/);
  t.match(submissionJunit(report.submissions[2]!, rubric, report.sealing), /<property name="problem" value="the build/);
});

const provenance: Provenance = {
  chaoslab: '0.1.0 (abc1234)',
  lab: 'ledger',
  scenarioSetHash: 'a'.repeat(64),
  submissionHash: 'b'.repeat(64),
  seeds: { 'happy-path': [], 'duplicate-delivery': [7, 8, 9] },
  replay: 'chaoslab grade class --rubric rubrics/small.yaml --only "bob"',
};

t.test('grades.csv: the header first, nothing before it; status, sealed, scenarios, reason, provenance; sorted rows', async (t) => {
  const report = smallClass();
  report.submissions.reverse();
  report.submissions.find((s) => s.submission === 'bob')!.provenance = provenance;
  const text = classCsv(report);
  t.equal(
    text.split('\n')[0],
    'submission,status,score,max,sealed,happy-path,duplicate-delivery,sigkill-storm,reason,chaoslab,lab,scenario_set_sha256,submission_sha256,seeds,replay',
  );
  const { fields, rows } = dictReader(text);
  t.equal(fields[0], 'submission', 'DictReader takes the first line as the header');
  t.same(
    rows.map((r) => [r.submission, r.status, r.score, r.max, r.sealed, r['happy-path'], r['duplicate-delivery'], r['sigkill-storm']]),
    [
      ['alice', 'graded', '6', '6', 'yes', '1', '2', '3'],
      ['bob', 'graded', '1', '6', 'yes', '1', '0', '0'],
      ['carol', 'build-failed', '0', '6', 'yes', '0', '0', '0'],
    ],
  );
  t.equal(rows[2]!.reason, 'the build `make` failed (exit status 2); see build.log', 'why it was not graded');
  t.equal(rows[0]!.reason, '');
  t.match(rows[1], {
    chaoslab: '0.1.0 (abc1234)',
    lab: 'ledger',
    scenario_set_sha256: 'a'.repeat(64),
    submission_sha256: 'b'.repeat(64),
    replay: provenance.replay,
  });
  t.same(JSON.parse(rows[1]!.seeds!), provenance.seeds, 'the seeds as JSON');
  t.same([rows[0]!.chaoslab, rows[0]!.replay, rows[0]!.seeds], ['', '', ''], 'no provenance: empty cells');
  // Unsealed: a column, never a line before the header.
  const unsealed = dictReader(classCsv(smallClass(false)));
  t.same(
    unsealed.rows.map((r) => r.sealed),
    ['no', 'no', 'no'],
  );
  t.equal(unsealed.fields[0], 'submission');
});

t.test('grades.csv: hostile names and reasons stay one cell each and compute nothing', async (t) => {
  const report = smallClass();
  const names = ['a,"b"', 'line\nbreak', "=cmd|' /C calc'!A0"];
  report.submissions.forEach((s, i) => {
    s.submission = names[i]!;
  });
  report.submissions[2]!.notGraded!.reason = '+SUM(1,2) "quoted", and\na newline';
  report.submissions[1]!.provenance = { ...provenance, replay: '@cmd "x", y' };
  const text = classCsv(report);
  t.equal(text.split('\n').length, 5, 'a header, three rows, the final newline: no cell breaks a line');
  const { rows } = dictReader(text);
  t.same(
    rows.map((r) => r.submission),
    ["'=cmd|' /C calc'!A0", 'a,"b"', 'line\\nbreak'],
    'the formula shown as text, the comma and quotes kept, the newline visible',
  );
  t.equal(rows[0]!.reason, '\'+SUM(1,2) "quoted", and\\na newline');
  t.equal(rows[2]!.replay, '\'@cmd "x", y');
  t.ok(
    rows.every((r) => Object.keys(r).length === 15 && !('null' in r)),
    "every row has exactly the header's columns",
  );
});

t.test('grades.csv: a scenario named like a fixed column is refused', async (t) => {
  t.equal(csvColumnClash(['happy-path', 'gap']), undefined);
  t.match(csvColumnClash(['happy-path', 'status']), /scenario "status" would be a second "status" column of grades\.csv/);
});

t.test('index.html: most failed first, distribution, the table with findings on hover', async (t) => {
  const report = smallClass();
  // carol was never graded (her build failed): she fails no scenario and has no score to count.
  t.same(mostFailed(report), [
    { name: 'duplicate-delivery', failed: 1, visibility: 'visible' },
    { name: 'sigkill-storm', failed: 1, visibility: 'after_due_date' },
    { name: 'happy-path', failed: 0, visibility: 'visible' },
  ]);
  t.same(scoreDistribution(report), [
    { score: 1, count: 1 },
    { score: 6, count: 1 },
  ]);
  const page = classHtml(report);
  t.ok(page.indexOf('Scenarios failed most often') < page.indexOf('Distribution of graded scores'));
  t.match(page, /<p class="counts">2 graded, 1 not graded \(build-failed: 1\): not graded is not failing/);
  t.match(page, /failed by 1 of 2 graded/);
  t.match(page, /<td class="fail" title="§3: a duplicate is acknowledged, not applied\nseq 3 applied twice\nseq 3 applied twice \(again\)">✗ 2\/3<\/td>/);
  t.match(
    page,
    /<td class="sub">carol<div class="problem">the build `make` failed.*?<\/div><\/td><td>0 \/ 6<\/td><td>not graded: build-failed<\/td>(<td class="none" title="not run">–<\/td>){3}<\/tr>/,
  );
  t.match(page, /<td class="sub">alice<\/td><td>6 \/ 6<\/td><td>graded<\/td>/);
  t.notMatch(page, /Folders skipped/, 'none skipped, no section');
  t.match(page, /<td class="sub">alice<\/td><td colspan="6">no provenance recorded<\/td>/);
  t.notMatch(page, /NOT SEALED/);
  t.match(classHtml(smallClass(false)), /<p class="warn">NOT SEALED/);
  const quiet = smallClass();
  quiet.submissions = [quiet.submissions[0]!];
  t.match(classHtml(quiet), /No scenario failed/);
  const evil = smallClass();
  evil.submissions[0]!.submission = '<script>x</script>';
  t.notMatch(classHtml(evil), /<script>x/);
});

t.test("index.html: skipped folders, a wrong lab, and each grade's provenance, all inert", async (t) => {
  const report = smallClass();
  report.skipped = [
    { name: '.git', reason: 'its name starts with a dot' },
    { name: 'tab\there<img src=x>', reason: 'its name holds U+0009 (a tab)' },
  ];
  report.submissions[1]!.provenance = { ...provenance, replay: 'chaoslab grade "<b>bob</b>"\u001b[2J' };
  const dave = {
    ...report.submissions[2]!,
    submission: 'dave',
    notGraded: { kind: 'wrong-lab' as const, reason: 'dave/chaoslab.json: lab "feed", but this class is graded with the ledger rubric' },
  };
  report.submissions.push(dave);
  const page = classHtml(report);
  t.match(page, /<p class="counts">2 graded, 2 not graded \(build-failed: 1, wrong-lab: 1\).*; 2 folder\(s\) skipped/);
  t.match(
    page,
    /<p class="warn">1 manifest\(s\) name another lab than this rubric's \(the grader exited 2\): dave\/chaoslab\.json: lab &quot;feed&quot;, but this class is graded with the ledger rubric<\/p>/,
  );
  t.match(page, /<h2>Folders skipped<\/h2>\n<ul><li><code>\.git<\/code>: its name starts with a dot<\/li><li><code>tab\there&lt;img src=x&gt;<\/code>: /);
  t.match(
    page,
    `<td>0.1.0 (abc1234)</td><td>ledger</td><td><code>${'a'.repeat(64)}</code></td><td><code>${'b'.repeat(64)}</code></td><td>duplicate-delivery: 7 8 9</td>`,
  );
  t.match(page, '<code>chaoslab grade &quot;&lt;b&gt;bob&lt;/b&gt;&quot;\\x1b[2J</code>', 'the replay command inert: markup escaped, the escape shown');
  t.notMatch(page, /<img|\u001b/);
});

t.test('class.json round trip; merge: same rubric, no duplicates, sorted, unsealed wins', async (t) => {
  const dir = t.testdir();
  const whole = smallClass();
  whole.skipped = [{ name: '.git', reason: 'its name starts with a dot' }];
  writeClassReport(dir, whole);
  t.same(readClassReport(dir), whole);
  t.same(JSON.parse(readFileSync(join(dir, CLASS_FILE), 'utf8')).counts, {
    submissions: 3,
    graded: 2,
    notGraded: 1,
    byStatus: { graded: 2, 'build-failed': 1 },
    skipped: 1,
  });
  t.equal(readClassReport(dir).submissions[2]!.notGraded?.kind, 'build-failed');
  t.throws(() => readClassReport(join(dir, 'nope')), { message: /nope\/class\.json: not a grading output \(no class\.json\)/ });
  mkdirSync(join(dir, 'old'));
  writeClassReport(join(dir, 'old'), { ...whole, schema: 9 });
  t.throws(() => readClassReport(join(dir, 'old')), { message: /schema 9/ });

  const [a, b, c] = whole.submissions;
  const part = (subs: typeof whole.submissions, sealed = true, skipped: typeof whole.skipped = []) => ({ ...smallClass(sealed), submissions: subs, skipped });
  const merged = mergeClassReports([
    {
      dir: 's2',
      report: part([c!, a!], true, [
        { name: 'z', reason: 'not a folder' },
        { name: '.git', reason: 'dot' },
      ]),
    },
    { dir: 's1', report: part([b!], false, [{ name: '.git', reason: 'dot' }]) },
  ]);
  t.same(
    merged.skipped,
    [
      { name: '.git', reason: 'dot' },
      { name: 'z', reason: 'not a folder' },
    ],
    "every shard's skipped entries, each once, by name",
  );
  t.same(
    merged.submissions.map((s) => s.submission),
    ['alice', 'bob', 'carol'],
  );
  t.equal(merged.sealing.sealed, false);
  t.equal(classCsv(merged), classCsv({ ...whole, sealing: merged.sealing, skipped: merged.skipped }));
  t.throws(
    () =>
      mergeClassReports([
        { dir: 's1', report: part([a!]) },
        { dir: 's2', report: part([a!]) },
      ]),
    { message: 'submission "alice" is in both s1 and s2' },
  );
  t.throws(
    () =>
      mergeClassReports([
        { dir: 's1', report: part([a!]) },
        { dir: 's2', report: { ...part([b!]), lab: 'feed' } },
      ]),
    { message: /s2 was graded with another rubric than s1/ },
  );
  t.throws(() => mergeClassReports([]), { message: /at least one/ });
});
