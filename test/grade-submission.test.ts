// One submission that cannot be graded — no command, another lab, a failed build, a program that
// is not there — scores 0 with the reason, and still gets its results.json and junit.xml; the
// staff folder is closed afterwards. (Submissions that run are graded in test/e2e/grade*.test.ts.)
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { type GradeSetup, gradeSubmission, STAFF_DIR } from '../harness/grade/grade-submission.js';
import { smallRubric } from './helpers/grade.js';

const dir = t.testdir({
  class: {
    empty: { 'README.md': 'nothing to run' },
    feedish: { 'chaoslab.yaml': 'lab: feed\ncommand: python3 client.py\n' },
    broken: { 'chaoslab.json': JSON.stringify({ build: 'echo no; exit 4', command: './consumer' }) },
    absent: { 'chaoslab.json': JSON.stringify({ command: './consumer --fast' }) },
    unknown: { 'chaoslab.json': JSON.stringify({ command: 'no-such-program-here x' }) },
  },
  out: {},
});
const setup: GradeSetup = {
  rubric: smallRubric(),
  scenarios: new Map(),
  sealing: { sealed: false, note: 'not sealed (test)' },
  jobs: 1,
  outDir: join(dir, 'out'),
  deadlineMs: 60_000,
  buildDeadlineMs: 60_000,
};

const cases: [string, RegExp][] = [
  ['empty', /^empty: no chaoslab\.json or chaoslab\.yaml, and none of client\.py/],
  ['feedish', /^the manifest names lab "feed", but this class is graded for the ledger lab$/],
  ['broken', /^the build `echo no; exit 4` failed \(exit status 4\); see build\.log$/],
  ['absent', /^the command `\.\/consumer --fast` cannot start: \.\/consumer not found$/],
  ['unknown', /^the command `no-such-program-here x` cannot start: no-such-program-here not found$/],
];

for (const [name, problem] of cases) {
  t.test(name, async (t) => {
    const graded = await gradeSubmission(setup, { name, folder: join(dir, 'class', name) });
    t.equal(graded.harnessError, false);
    t.match(graded.score, { submission: name, score: 0, max: 6, problem });
    const results = JSON.parse(readFileSync(join(dir, 'out', name, 'results.json'), 'utf8'));
    t.match(results, { score: 0, output: /^NOT SEALED: .*\nStarted with: .*\nNot graded: / });
    t.ok(existsSync(join(dir, 'out', name, 'junit.xml')));
    t.equal(statSync(join(dir, 'out', STAFF_DIR, name)).mode & 0o777, 0o700, 'the staff folder is closed');
  });
}

t.test('the build log is beside results.json', async (t) => {
  t.equal(readFileSync(join(dir, 'out', 'broken', 'build.log'), 'utf8'), 'no\n');
});
