// The stability check's comparison (harness/grade/validity/stability.ts): the same class graded N
// times is stable only when every submission got the same score on every attempt; a differing
// score fails it, a not-graded attempt leaves it unjudged. Fed class reports, not gradings.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import type { ClassReport } from '../../../../harness/grade/class/class-data.js';
import { scoreSubmission } from '../../../../harness/grade/score.js';
import { compareAttempts, HOG, renderStabilityTable, stabilityExitStatus, writeStability } from '../../../../harness/grade/validity/stability.js';
import { smallClass, smallRubric } from '../../../helpers/grade.js';

const submissions = [
  { name: 'alice', kind: 'reference' as const },
  { name: 'bob', kind: 'mutant' as const },
  { name: 'carol', kind: 'mutant' as const },
];

/** smallClass() with bob's hidden sigkill-storm passing this time (a mutant caught only sometimes). */
function bobLucky(): ClassReport {
  const report = smallClass();
  const pass = { status: 'pass' as const, reasons: [] };
  const bob = scoreSubmission(
    'bob',
    smallRubric(),
    new Map([
      ['happy-path', [pass]],
      ['duplicate-delivery', [pass, { status: 'fail' as const, reasons: ['seq 3 applied twice'] }, pass]],
      ['sigkill-storm', [pass]],
    ]),
    'x',
  );
  report.submissions[1] = bob;
  return report;
}

t.test('the same scores on every attempt: stable (exit 0)', async (t) => {
  const s = compareAttempts({ lab: 'ledger', submissions, attempts: [smallClass(), smallClass(), smallClass()], hogs: 1 });
  t.equal(s.verdict, 'stable');
  t.equal(stabilityExitStatus(s), 0);
  t.same(
    s.rows.map((r) => [r.submission, r.totals, r.identical]),
    [
      ['alice', [6, 6, 6], true],
      ['bob', [1, 1, 1], true],
      ['carol', [0, 0, 0], true],
    ],
  );
  t.match(renderStabilityTable(s), /STABLE — 3 submissions graded 3 times beside 1 CPU hog\(s\)/);
});

t.test('one attempt scores a submission differently: not stable (exit 1), naming it and the scenario', async (t) => {
  const s = compareAttempts({ lab: 'ledger', submissions, attempts: [smallClass(), bobLucky(), smallClass()] });
  t.equal(s.verdict, 'not stable');
  t.equal(stabilityExitStatus(s), 1);
  t.match(s.rows[1], { submission: 'bob', totals: [1, 4, 1], identical: false, differing: ['sigkill-storm'] });
  t.ok(s.rows[0]!.identical && s.rows[2]!.identical);
  const table = renderStabilityTable(s);
  t.match(table, /bob\s+mutant\s+1\s+4\s+1\s+NO \(sigkill-storm\)/);
  t.match(table, /NOT STABLE — .*scores differ for bob/);
});

t.test('an attempt that did not grade a submission, or left a scenario not graded: not judged (exit 2)', async (t) => {
  const notGraded = smallClass();
  notGraded.submissions[0]!.scenarios[2] = { ...notGraded.submissions[0]!.scenarios[2]!, status: 'not graded', score: 0, harnessError: true };
  notGraded.submissions[0]!.score = 3;
  const s = compareAttempts({ lab: 'ledger', submissions, attempts: [smallClass(), notGraded] });
  t.equal(s.verdict, 'not judged');
  t.equal(stabilityExitStatus(s), 2);
  t.match(s.rows[0], { identical: false, notGraded: [2] });
  const missing = compareAttempts({ lab: 'ledger', submissions, attempts: [smallClass(), undefined] });
  t.equal(missing.verdict, 'not judged');
  t.match(renderStabilityTable(missing), /alice\s+reference\s+6\s+–/);
  // A difference between judged attempts outweighs an unjudged one.
  t.equal(compareAttempts({ lab: 'ledger', submissions, attempts: [smallClass(), bobLucky(), undefined] }).verdict, 'not stable');
});

t.test('stability.md and stability.json hold the table', async (t) => {
  const dir = t.testdir();
  const s = compareAttempts({ lab: 'ledger', submissions, attempts: [smallClass(), bobLucky()] });
  writeStability(dir, s, ['rubric rubrics/small.yaml']);
  t.same(JSON.parse(readFileSync(join(dir, 'stability.json'), 'utf8')), s);
  const md = readFileSync(join(dir, 'stability.md'), 'utf8');
  t.match(md, /\| submission \| kind \| #1 \| #2 \| same \|/);
  t.match(md, /\| bob \| mutant \| 1 \| 4 \| \*\*no\*\* \(sigkill-storm\) \|/);
  t.match(md, /- rubric rubrics\/small\.yaml/);
});

t.test('a hog ends when the check that started it is killed (SIGKILL fires no exit handler)', async (t) => {
  // bash starts the hog, says its pid, and is killed with SIGKILL: the hog, reparented, must end.
  const started = spawnSync('bash', ['-c', 'node -e "$1" $$ </dev/null >/dev/null 2>&1 & echo $!; kill -KILL $$', 'parent', HOG], { encoding: 'utf8' });
  const pid = Number(started.stdout.trim());
  t.ok(pid > 0, `the hog's pid (${started.stdout.trim()})`);
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  // Bounded wait, not a timing assertion: a round of its loop is well under a second.
  for (let i = 0; i < 300 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(pid, 'SIGKILL');
  t.notOk(alive(), 'the hog is gone');
});
