// The Gradescope example's run_autograder, run as written against a local /autograder tree
// (AUTOGRADER=<tmp>, CHAOSLAB=<this checkout>): the project's Python feed reference as the
// submission, with a chaoslab.json manifest, and course.conf naming the feed lab. It gets the
// rubric's points (sealed where this machine allows: run_autograder grades sealed wherever the
// probe succeeds); /autograder/results holds results.json and nothing else; the deadline and the
// job count come from course.conf's timeout and the machine. A manifest of another lab is told so,
// a course.conf without a lab is an error for staff, and a SIGTERM in the middle of grading (as a
// timeout would) still leaves a valid results.json with the test that had finished.
import { execa } from 'execa';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { root } from '../helpers/cli.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { processesNamingSettled } from '../helpers/fixture.js';

t.setTimeout(240_000);
const sealable = (await probeSealing()).available;
import { platformProblems } from '../helpers/platform-schemas.js';

const runAutograder = join(root, 'examples', 'grading', 'gradescope', 'run_autograder');

interface Results {
  score: number;
  output: string;
  tests?: { name: string; score?: number; max_score?: number; status: string; visibility: string; output?: string }[];
}

/** A fresh /autograder: source/course.conf (+ rubric.yaml), and the feed reference as the submission. */
function autograder(t: Test, conf: string, manifest: object, rubric?: string): string {
  // Passable for the sandbox uids (sealed consumers keep their database in a room under the output).
  const dir = mkdtempSync(join(tmpdir(), 'chaoslab-autograder-'));
  chmodSync(dir, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'source'));
  mkdirSync(join(dir, 'submission'));
  mkdirSync(join(dir, 'tmp'));
  writeFileSync(join(dir, 'source', 'course.conf'), conf);
  if (rubric) writeFileSync(join(dir, 'source', 'rubric.yaml'), rubric);
  // client.py and the package beside it (its parts); a stray __pycache__ is not the submission's.
  cpSync(join(root, 'consumer', 'feed', 'python'), join(dir, 'submission'), { recursive: true, filter: (src) => !src.endsWith('__pycache__') });
  writeFileSync(join(dir, 'submission', 'chaoslab.json'), JSON.stringify(manifest));
  return dir;
}
const env = (dir: string, extra: Record<string, string> = {}) => ({
  AUTOGRADER: dir,
  CHAOSLAB: root,
  PATH: process.env.PATH!,
  TMPDIR: join(dir, 'tmp'),
  ...extra,
});
const resultsOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'results', 'results.json'), 'utf8')) as Results;
const FEED = { lab: 'feed', command: 'python3 client.py' };
const ONE_SCENARIO = 'lab: feed\nscenarios:\n  - { name: feed-happy-path, points: 2, visibility: visible, feedback: "§2–§4" }\n';

t.test('a feed submission gets the rubric’s points; the deadline follows the timeout, the grader counts the container’s processors', async (t) => {
  const dir = autograder(t, 'lab=feed\ntimeout=600\nrubric=rubric.yaml\n', FEED, ONE_SCENARIO);
  const r = await execa('bash', [runAutograder], { env: env(dir), reject: false, timeout: 200_000 });
  t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  // 600 s: stop at 600 − (30 + 30 + 15) = 525 s; build 600/4 = 150 s; runs 525 − 150 − 15 = 360 s.
  const line = r.stdout.match(/lab feed, timeout 600s: grading stops at 525s \(build 150s, runs 360s\), (\d+) processor\(s\)/);
  t.ok(line, `the derived limits\n${r.stdout}`);
  if (sealable) t.notMatch(r.stdout, /NOT SEALED/, 'sealed where this machine allows');
  else t.match(r.stdout, /NOT SEALED/);
  const processors = Number(line?.[1]);
  t.ok(processors >= 1 && processors <= availableParallelism(), `${processors} processor(s) counted of ${availableParallelism()}`);
  // The grader's own default follows them: processors × the rubric's jobs_per_processor, at most its one run.
  t.match(r.stdout, `1 run(s) at a time (by default: ${processors} processor(s) (--processors), at most the rubric's runs)`);
  const results = resultsOf(dir);
  t.equal(results.score, 2, results.output);
  t.same(
    results.tests?.filter((x) => x.visibility !== 'hidden').map((x) => [x.name, x.status, x.score, x.max_score]),
    [['feed-happy-path', 'passed', 2, 2]],
  );
  const staffOnly = results.tests?.filter((x) => x.visibility === 'hidden') ?? [];
  t.same(
    staffOnly.map((x) => x.score ?? 0),
    [0],
    'the upload copy: one staff-only test, carrying no points',
  );
  t.match(staffOnly[0]?.output ?? '', /replay feed-happy-path \(passed\): .*chaoslab.* grade .*--only '?feed-happy-path/, 'it holds the replay commands');
  t.same(platformProblems('gradescope', readFileSync(join(dir, 'results', 'results.json'), 'utf8')), [], "valid by Gradescope's specification");
  t.match(
    r.stdout,
    /--- for staff: every test's result ---\npassed feed-happy-path \(visible\) 2\/2, 1 of 1 run\(s\) passed/,
    'staff see each test in the output',
  );
  t.same(readdirSync(join(dir, 'results')), ['results.json'], 'nothing but results.json is written where Gradescope reads');
  t.ok(existsSync(join(dir, 'chaoslab-out', '.staff', 'submission')), 'the staff part stays in chaoslab-out');
  t.same(readdirSync(join(dir, 'tmp')), [], 'its class folder is gone');
  t.same(await processesNamingSettled(dir), [], 'nothing left running');
});

t.test('a manifest of another lab is told so and not graded', async (t) => {
  const dir = autograder(t, 'lab=feed\n', { ...FEED, lab: 'ledger' });
  const r = await execa('bash', [runAutograder], { env: env(dir), reject: false, timeout: 60_000 });
  t.equal(r.exitCode, 0, r.stderr);
  t.match(r.stdout, /manifest names another lab/);
  const results = resultsOf(dir);
  t.equal(results.score, 0);
  t.match(results.output, /your chaoslab\.json names the lab "ledger", but this assignment is the feed lab/);
  t.notOk(existsSync(join(dir, 'chaoslab-out')), 'nothing was graded');
});

t.test('course set-up mistakes are staff’s errors, and the student is told to ask', async (t) => {
  for (const [conf, error] of [
    ['timeout=600\n', /no 'lab=' line/],
    ['lab=feed\ntimeout=100\n', /timeout=100 leaves -?\d+ s for the runs/],
    ['lab=feed\nrubric=rubric.yaml\n', /the rubric .*rubric\.yaml is for the ledger lab, but course\.conf says lab=feed/],
    ['lab=feed\ntimeot=600\n', /unknown setting 'timeot'/],
  ] as const) {
    const dir = autograder(t, conf, FEED, 'lab: ledger\nscenarios:\n  - { name: happy-path, points: 1, feedback: x }\n');
    const r = await execa('bash', [runAutograder], { env: env(dir), reject: false, timeout: 60_000 });
    t.equal(r.exitCode, 1, JSON.stringify(conf));
    t.match(r.stdout, /ERROR \(course set-up\)/);
    t.match(r.stdout, error);
    const results = resultsOf(dir);
    t.equal(results.score, 0);
    t.match(results.output, /not set up correctly.*tell the course staff/);
  }
});

t.test('stopped in the middle (SIGTERM, as at a timeout): results.json is valid and holds the finished test', async (t) => {
  // Unsealed, as on Gradescope; one job, so the runs go one after the other, the longer script
  // first (feed-cut-30s: 2.5 s, feed-happy-path: 2.1 s): feed-happy-path is still running when the
  // signal comes right after feed-cut-30s passed.
  const rubric = `${ONE_SCENARIO}  - { name: feed-cut-30s, points: 2, visibility: visible, feedback: "§6" }\n`;
  const dir = autograder(t, 'lab=feed\nrubric=rubric.yaml\njobs=1\n', FEED, rubric);
  // No forced kill after the signal: what is tested is run_autograder's own stop.
  const child = execa('bash', [runAutograder], {
    env: env(dir, { CHAOSLAB_SEAL: 'off' }),
    reject: false,
    timeout: 200_000,
    forceKillAfterDelay: false,
  });
  let seen = '';
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (/feed-cut-30s: pass/.test(seen)) resolve();
    });
    void child.finally(() => resolve());
  });
  child.kill('SIGTERM');
  const r = await child;
  t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  t.match(r.stdout, /SIGTERM: stopping chaoslab grade; publishing what finished/);
  // The staff section alone, so that a failure shows it (not the grader's log before it).
  const staff = r.stdout.slice(r.stdout.indexOf('--- for staff'));
  // The stopped run is interrupted, or never started; a run that failed or met a harness error as
  // the signal came counts differently, and still says why.
  t.match(staff, /(FAILED|NOT GRADED) feed-happy-path \(visible\) 0\/2, 0 of \d+ run\(s\) passed\n {4}\S/, 'staff see why the stopped test failed');
  t.match(r.stdout, /chaoslab grade exited 143/, 'the grader stopped on the signal, and run_autograder finished after it');
  const results = resultsOf(dir);
  t.match(results.output, /NOT SEALED/);
  const finished = results.tests?.find((x) => x.name === 'feed-cut-30s');
  t.same([finished?.status, finished?.score], ['passed', 2], 'the finished test is there, with its points');
  t.same(await processesNamingSettled(dir), [], 'nothing left running');
});
