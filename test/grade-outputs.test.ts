// What grading writes: results.json (Gradescope), junit.xml, grades.csv, index.html, and the
// merge of shards. Hidden scenarios' names and findings never reach a student's files
// (test/grade-platforms.test.ts).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { classCsv, CSV_UNSEALED } from '../harness/grade/class-csv.js';
import { readClassReport, writeClassReport } from '../harness/grade/class-data.js';
import { classHtml, mostFailed, scoreDistribution } from '../harness/grade/class-html.js';
import { finishedData } from '../harness/grade/grade-data.js';
import { gradescopeResults } from '../harness/grade/gradescope.js';
import { submissionJunit } from '../harness/grade/junit.js';
import { mergeClassReports } from '../harness/grade/merge.js';
import { smallClass, smallRubric } from './helpers/grade.js';

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

t.test('grades.csv: sorted rows, one column per scenario; unsealed says so first', async (t) => {
  const report = smallClass();
  report.submissions.reverse();
  t.equal(classCsv(report), 'submission,score,max,happy-path,duplicate-delivery,sigkill-storm\nalice,6,6,1,2,3\nbob,1,6,1,0,0\ncarol,0,6,0,0,0\n');
  t.equal(classCsv(smallClass(false)).split('\n')[0], CSV_UNSEALED);
  const odd = smallClass();
  odd.submissions[0]!.submission = 'a,"b"';
  t.match(classCsv(odd), /\n"a,""b""",6,6/);
});

t.test('index.html: most failed first, distribution, the table with findings on hover', async (t) => {
  const report = smallClass();
  t.same(mostFailed(report), [
    { name: 'duplicate-delivery', failed: 2, visibility: 'visible' },
    { name: 'sigkill-storm', failed: 2, visibility: 'after_due_date' },
    { name: 'happy-path', failed: 1, visibility: 'visible' },
  ]);
  t.same(scoreDistribution(report), [
    { score: 0, count: 1 },
    { score: 1, count: 1 },
    { score: 6, count: 1 },
  ]);
  const page = classHtml(report);
  t.ok(page.indexOf('Scenarios failed most often') < page.indexOf('Distribution of scores'));
  t.match(page, /<td class="fail" title="§3: a duplicate is acknowledged, not applied\nseq 3 applied twice\nseq 3 applied twice \(again\)">✗ 2\/3<\/td>/);
  t.match(page, /<div class="problem">the build `make` failed/);
  t.notMatch(page, /NOT SEALED/);
  t.match(classHtml(smallClass(false)), /<p class="warn">NOT SEALED/);
  const quiet = smallClass();
  quiet.submissions = [quiet.submissions[0]!];
  t.match(classHtml(quiet), /No scenario failed/);
  const evil = smallClass();
  evil.submissions[0]!.submission = '<script>x</script>';
  t.notMatch(classHtml(evil), /<script>x/);
});

t.test('class.json round trip; merge: same rubric, no duplicates, sorted, unsealed wins', async (t) => {
  const dir = t.testdir();
  const whole = smallClass();
  writeClassReport(dir, whole);
  t.same(readClassReport(dir), whole);
  t.throws(() => readClassReport(join(dir, 'nope')), { message: /nope\/class\.json: not a grading output \(no class\.json\)/ });
  mkdirSync(join(dir, 'old'));
  writeClassReport(join(dir, 'old'), { ...whole, schema: 9 });
  t.throws(() => readClassReport(join(dir, 'old')), { message: /schema 9/ });

  const [a, b, c] = whole.submissions;
  const part = (subs: typeof whole.submissions, sealed = true) => ({ ...smallClass(sealed), submissions: subs });
  const merged = mergeClassReports([
    { dir: 's2', report: part([c!, a!]) },
    { dir: 's1', report: part([b!], false) },
  ]);
  t.same(
    merged.submissions.map((s) => s.submission),
    ['alice', 'bob', 'carol'],
  );
  t.equal(merged.sealing.sealed, false);
  t.equal(classCsv(merged), classCsv({ ...whole, sealing: merged.sealing }));
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
