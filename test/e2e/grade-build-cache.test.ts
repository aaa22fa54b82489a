// The build cache end to end: one ledger submission (the Python reference, "built" into bin/ by
// its manifest) graded twice with the same --build-cache (sealed where this machine allows): the
// first grading builds and keeps the build, the second finds it by the submission's hash and
// does not build (its consumer runs from the cached output, and passes); both say so, in the
// console and in class.json. A --build-cache in the class folder is refused.
import { chmodSync, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { chaoslab, root } from '../helpers/cli.js';
import { fileTestdir } from '../helpers/fixture.js';

t.setTimeout(240_000);
const sealFlags = (await probeSealing()).available ? [] : ['--unsealed'];

const dir = fileTestdir(t, import.meta.url, {
  class: { reference: { 'chaoslab.yaml': 'lab: ledger\nbuild: mkdir bin && cp client.py bin/consumer.py && echo built\ncommand: python3 bin/consumer.py\n' } },
});
copyFileSync(join(root, 'consumer', 'ledger', 'python', 'client.py'), join(dir, 'class', 'reference', 'client.py'));
// Root's alone: a sealed grading refuses a class folder the sandbox uids can pass through.
chmodSync(join(dir, 'class'), 0o700);
const cache = join(dir, 'cache');

const grade = (out: string) => chaoslab(['grade', join(dir, 'class'), '--only', 'happy-path', '--build-cache', cache, '--out', join(dir, out), ...sealFlags]);
const submissionOf = (out: string) =>
  (JSON.parse(readFileSync(join(dir, out, 'class.json'), 'utf8')) as { submissions: { score: number; build?: { cached: boolean; key?: string } }[] })
    .submissions[0]!;

t.test('graded twice: built once, then taken from the cache', async (t) => {
  const first = await grade('first');
  t.equal(first.exitCode, 0, `${first.stdout}\n${first.stderr}`);
  t.match(first.stdout, `chaoslab grade: build cache ${cache}`);
  t.match(first.stdout, /reference: build: \d+\.\d s\n/, 'the first grading builds, and says how long it took');
  const built = submissionOf('first');
  t.equal(built.score, 2);
  t.match(built.build, { cached: false, key: /^sha256:[0-9a-f]{64}$/ });

  const second = await grade('second');
  t.equal(second.exitCode, 0, `${second.stdout}\n${second.stderr}`);
  const short = built.build!.key!.slice('sha256:'.length, 'sha256:'.length + 12);
  t.match(second.stdout, `reference: build: cached (sha256 ${short}…)`, 'the second finds it by the same key');
  const cached = submissionOf('second');
  t.same([cached.score, cached.build], [2, { cached: true, key: built.build!.key, buildMs: (built.build as { buildMs?: number }).buildMs }]);
  t.match(
    readFileSync(join(dir, 'second', 'reference', 'build.log'), 'utf8'),
    /^chaoslab: build cached \(sha256:[0-9a-f]{64}\): the output of an identical build \(\d+\.\d s\), reused; its log follows\n(.*\n)*built\n$/,
    "the student's build.log says so, with the first build's log",
  );
  t.ok(existsSync(join(dir, 'second', '.staff', 'reference', 'build', 'bin', 'consumer.py')), "the cached output is the copy's");
});

t.test('a --build-cache in the class folder is refused before grading', async (t) => {
  const inside = join(dir, 'class', 'cache');
  const r = await chaoslab(['grade', join(dir, 'class'), '--build-cache', inside, '--out', join(dir, 'refused'), ...sealFlags]);
  t.equal(r.exitCode, 2);
  t.match(r.stderr, `--build-cache ${inside}: is in the class folder ${join(dir, 'class')}: give one outside it (or --no-build-cache)`);
  t.notOk(existsSync(inside), 'nothing made there');
  t.notOk(existsSync(join(dir, 'refused')), 'nor the output folder');
});
