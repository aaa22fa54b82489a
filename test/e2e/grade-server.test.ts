// chaoslab grade on a class of push servers, end to end: two submissions whose manifests name
// only a `server` — the Python reference server and its snapshot-then-subscribe mutant — graded
// through the real CLI with neither --lab nor --rubric: the manifests decide the lab (one says
// `lab: feed`, the other only names a server, which only the feed lab grades), and the lab's
// server rubric (rubrics/feed-server.yaml) is the one that fits the class. The reference gets full marks; the mutant loses at least the
// snapshot race's points (re-run, as the rubric's rate says, and still lost) with the lost
// events and the contract section named; grades.csv, class.json, results.json (Gradescope),
// junit.xml and PrairieLearn's results are written as for consumers; nothing is left running.
// Two of the rubric's scenarios (--only): the happy path and the race the mutant loses. That the
// reference servers pass every feed-server-* scenario is test/e2e/feed-server.test.ts's.
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadRubric } from '../../harness/grade/rubric.js';
import { labNames } from '../../harness/labs/registry.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { fileTestdir, processesNamingSettled } from '../helpers/fixture.js';
import { dictReader } from '../helpers/grade.js';
import { chaoslab, root } from '../helpers/cli.js';
import { platformProblems } from '../helpers/platform-schemas.js';

t.setTimeout(600_000);
const probe = await probeSealing();
const sealFlags = probe.available ? [] : ['--unsealed'];

const reference = `python3 ${join(root, 'publisher', 'feed', 'python', 'server.py')}`;
const mutant = `python3 ${join(root, 'publisher', 'feed', 'mutants', 'snapshot-then-subscribe.py')}`;
const dir = fileTestdir(t, import.meta.url, {
  class: {
    'ref-python': { 'chaoslab.yaml': `server: ${reference}\n` },
    'snapshot-then-subscribe-py': { 'chaoslab.json': JSON.stringify({ lab: 'feed', server: mutant }) },
  },
});
const classDir = join(dir, 'class');
// Root's alone: a sealed grading refuses a class folder the sandbox uids can pass through.
chmodSync(classDir, 0o700);

const ONLY = ['feed-server-happy-path', 'feed-server-snapshot-race'];

t.test('a class of servers is graded with the server rubric, in every output format', async (t) => {
  const out = join(dir, 'out');
  const only = ONLY.flatMap((name) => ['--only', name]);
  const result = await chaoslab(['grade', classDir, '--out', out, '--jobs', '2', ...only, ...sealFlags], { timeout: 540_000 });
  t.equal(result.exitCode, 0, `${result.stdout}\n${result.stderr}`);
  const whole = loadRubric(join(root, 'rubrics', 'feed-server.yaml'), labNames());
  const rubric = { ...whole, tests: whole.tests.filter((x) => ONLY.includes(x.name)) };
  t.equal(rubric.tests.length, ONLY.length, 'both are in the server rubric');
  const race = rubric.tests.find((x) => x.name === 'feed-server-snapshot-race')!;
  const max = rubric.tests.reduce((n, x) => n + x.points, 0);
  t.match(result.stdout, new RegExp(`rubric rubrics/feed-server\\.yaml \\(${rubric.tests.length} scenarios\\)`));
  t.match(result.stdout, new RegExp(`ref-python: ${max} / ${max}`));
  // The mutant loses the race's points for sure; at a high event rate (the slow reader's scene)
  // its snapshot-to-follow window is real, and it may lose rows there too.
  const mutantScore = Number(/snapshot-then-subscribe-py: ([0-9.]+) \/ /.exec(result.stdout)?.[1]);
  t.ok(mutantScore <= max - race.points, `the mutant scores at most ${max - race.points} of ${max} (got ${mutantScore})`);

  const csv = dictReader(readFileSync(join(out, 'grades.csv'), 'utf8'));
  for (const test of rubric.tests) t.ok(csv.fields.includes(test.name), `grades.csv has a column ${test.name}`);
  t.notOk(csv.fields.includes('feed-server-restart'), 'and none for a scenario not graded');
  t.notOk(csv.fields.includes('feed-happy-path'), 'no consumer scenario in a class of servers');
  const mutantRow = csv.rows.find((r) => r.submission === 'snapshot-then-subscribe-py')!;
  t.equal(Number(mutantRow['feed-server-snapshot-race']), 0);
  t.equal(Number(mutantRow['feed-server-happy-path']), rubric.tests.find((x) => x.name === 'feed-server-happy-path')!.points);

  const classJson = JSON.parse(readFileSync(join(out, 'class.json'), 'utf8'));
  t.equal(classJson.lab, 'feed');
  const graded = classJson.submissions.find((s: { submission: string }) => s.submission === 'snapshot-then-subscribe-py');
  t.match(graded.how, /chaoslab\.json: server `python3 .*snapshot-then-subscribe\.py`/);
  const raceScore = graded.scenarios.find((s: { name: string }) => s.name === 'feed-server-snapshot-race');
  t.match(raceScore, { status: 'failed', score: 0, runs: race.repeat + race.reruns, passed: 0 });
  t.match(raceScore.reasons.join(' '), /misses \d+ events? committed while the server was stopped after the snapshot/);

  const results = JSON.parse(readFileSync(join(out, 'snapshot-then-subscribe-py', 'results.json'), 'utf8'));
  t.equal(results.score, mutantScore, 'results.json says the score the console said');
  const failed = results.tests.find((x: { name: string }) => /feed-server-snapshot-race/.test(x.name));
  t.match(failed.output, /§3: start buffering the outbox before you read the snapshot/);
  t.match(readFileSync(join(out, 'snapshot-then-subscribe-py', 'junit.xml'), 'utf8'), /<testcase[^>]*name="feed-server-snapshot-race"[^>]*>\s*<failure/);
  for (const name of ['ref-python', 'snapshot-then-subscribe-py']) {
    t.same(platformProblems('gradescope', readFileSync(join(out, name, 'results.json'), 'utf8')), [], `${name}: results.json by Gradescope's specification`);
    t.same(platformProblems('prairielearn', readFileSync(join(out, name, 'prairielearn.json'), 'utf8')), [], `${name}: prairielearn.json by PrairieLearn's`);
  }
  t.same(await processesNamingSettled(classDir), [], 'no process of the class is left running');
});
