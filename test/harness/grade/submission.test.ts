// One submission that cannot be graded — no command, another lab, a failed build, a program that
// is not there, a manifest that is a link or a FIFO, a FIFO in its tree — scores 0 with the
// reason, is marked not graded with the kind of reason (status.ts), and still gets its
// results.json (valid by Gradescope's specification), prairielearn.json and junit.xml; the staff
// folder is closed afterwards.
// (Submissions that run are graded in test/e2e/grade*.test.ts.)
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { type GradeSetup, gradeSubmission, STAFF_DIR } from '../../../harness/grade/grade-submission.js';
import { openWorkspace } from '../../../harness/grade/build/workspace.js';
import { smallRubric } from '../../helpers/grade.js';
import { platformProblems } from '../../helpers/platform-schemas.js';

const dir = t.testdir({
  class: {
    empty: { 'README.md': 'nothing to run' },
    feedish: { 'chaoslab.yaml': 'lab: feed\ncommand: python3 client.py\n' },
    broken: { 'chaoslab.json': JSON.stringify({ build: 'echo no; exit 4', command: './consumer' }) },
    absent: { 'chaoslab.json': JSON.stringify({ command: './consumer --fast' }) },
    unknown: { 'chaoslab.json': JSON.stringify({ command: 'no-such-program-here x' }) },
    linked: {},
    piped: {},
    'fifo-inside': { 'chaoslab.json': JSON.stringify({ command: 'true' }), src: {} },
  },
  out: {},
  // Only its owner may read it: root, when the grader is root.
  'secret.txt': '{"command": "SECRET-7f3a9 from a file the student cannot read"}',
});
chmodSync(join(dir, 'secret.txt'), 0o600);
symlinkSync(join(dir, 'secret.txt'), join(dir, 'class', 'linked', 'chaoslab.json'));
execFileSync('mkfifo', [join(dir, 'class', 'piped', 'chaoslab.yaml')]);
execFileSync('mkfifo', [join(dir, 'class', 'fifo-inside', 'src', 'pipe')]);
const workspace = openWorkspace(false);
t.teardown(() => workspace.remove());
const setup: GradeSetup = {
  rubric: smallRubric(),
  scenarios: new Map(),
  sealing: { sealed: false, note: 'not sealed (test)' },
  jobs: 1,
  outDir: join(dir, 'out'),
  deadlineMs: 60_000,
  buildDeadlineMs: 60_000,
  workspace,
};

const cases: [string, RegExp, string][] = [
  ['empty', /^empty: no chaoslab\.json or chaoslab\.yaml, and none of client\.py/, 'manifest'],
  // The manifest named by its folder and file: the grader lists it at the end and exits 2.
  ['feedish', /^feedish\/chaoslab\.yaml: lab "feed", but this class is graded with the ledger rubric$/, 'wrong-lab'],
  ['broken', /^the build `echo no; exit 4` failed \(exit status 4\); see build\.log$/, 'build-failed'],
  ['absent', /^the command `\.\/consumer --fast` cannot start: \.\/consumer not found$/, 'cannot-start'],
  ['unknown', /^the command `no-such-program-here x` cannot start: no-such-program-here not found$/, 'cannot-start'],
  // Never followed, never blocked on: named with what it is, its content never read.
  ['linked', /^linked\/chaoslab\.json: is a symbolic link, not a file: it was not read$/, 'manifest'],
  ['piped', /^piped\/chaoslab\.yaml: is a named pipe \(FIFO\), not a file: it was not read$/, 'manifest'],
  ['fifo-inside', /^fifo-inside\/src\/pipe: is a named pipe \(FIFO\): a submission holds files, folders and links only$/, 'files'],
];

for (const [name, problem, kind] of cases) {
  t.test(name, async (t) => {
    const graded = await gradeSubmission(setup, { name, folder: join(dir, 'class', name) });
    t.equal(graded.harnessError, false);
    t.match(graded.score, { submission: name, score: 0, max: 6, problem, notGraded: { kind, reason: problem } });
    const results = JSON.parse(readFileSync(join(dir, 'out', name, 'results.json'), 'utf8'));
    t.match(results, { score: 0, output: /^NOT SEALED: .*\nStarted with: .*\nNot graded: / });
    t.ok(existsSync(join(dir, 'out', name, 'junit.xml')));
    // Each file by its platform's specification: the student's, the upload copy, PrairieLearn's.
    for (const file of [join(dir, 'out', name, 'results.json'), join(dir, 'out', STAFF_DIR, name, 'results.json')])
      t.same(platformProblems('gradescope', readFileSync(file, 'utf8')), [], file);
    const pl = readFileSync(join(dir, 'out', name, 'prairielearn.json'), 'utf8');
    t.same(platformProblems('prairielearn', pl), []);
    t.match(JSON.parse(pl), { gradable: false, format_errors: [problem] }, 'not gradable on PrairieLearn: no attempt lost');
    t.equal(statSync(join(dir, 'out', STAFF_DIR, name)).mode & 0o777, 0o700, 'the staff folder is closed');
  });
}

t.test("a linked manifest's target is in no output", async (t) => {
  const out = join(dir, 'out');
  for (const file of readdirSync(out, { recursive: true }).map((f) => join(out, String(f))))
    if (statSync(file).isFile()) t.notMatch(readFileSync(file, 'utf8'), /SECRET-7f3a9/, `${file}: nothing of the linked file`);
});

t.test('the build log is beside results.json', async (t) => {
  t.equal(readFileSync(join(dir, 'out', 'broken', 'build.log'), 'utf8'), 'no\n');
});
