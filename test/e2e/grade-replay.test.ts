// A grade line's replay command, run on its own, gives the same verdict: a deterministic mutant
// (gap-skip, Python) is graded through the real CLI; the replay command of its failing
// scenario is taken from the upload copy of results.json and run as staff would type it; the
// replay grades that one scenario of that one submission, with the same verdict and the same
// submission hash. Every platform file written on the way is valid by its specification.
import { execa } from 'execa';
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { STAFF_DIR } from '../../harness/grade/grade-submission.js';
import { STAFF_TEST_NAME } from '../../harness/grade/platforms/gradescope.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { chaoslab, cli, root } from '../helpers/cli.js';
import { fileTestdir } from '../helpers/fixture.js';
import { platformProblems } from '../helpers/platform-schemas.js';

t.setTimeout(300_000);
const sealFlags = (await probeSealing()).available ? [] : ['--unsealed'];

const dir = fileTestdir(t, import.meta.url, {
  class: { 'gap-skip-py': { 'chaoslab.yaml': `lab: ledger\ncommand: python3 ${join(root, 'consumer', 'ledger', 'mutants', 'gap-skip.py')}\n` } },
  'rubric.yaml': `lab: ledger
scenarios:
  - { name: happy-path, points: 1, feedback: "§3–§4: apply each EVENT, ACK after COMMIT" }
  - { name: gap, points: 2, visibility: after_due_date, feedback: "§3: a gap ends the session" }
`,
});
chmodSync(join(dir, 'class'), 0o700);

interface Test {
  name: string;
  score: number;
  status: string;
  extra_data?: { scenario?: string; replay?: string };
}
const read = (file: string) => readFileSync(file, 'utf8');

t.test("the failing scenario's replay command reproduces its verdict", async (t) => {
  const out = join(dir, 'out');
  const r = await chaoslab(['grade', join(dir, 'class'), '--rubric', join(dir, 'rubric.yaml'), '--out', out, ...sealFlags]);
  t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  const studentFile = join(out, 'gap-skip-py', 'results.json');
  const uploadFile = join(out, STAFF_DIR, 'gap-skip-py', 'results.json');
  t.same(platformProblems('gradescope', read(studentFile)), [], 'results.json by the specification');
  t.same(platformProblems('gradescope', read(uploadFile)), [], 'the upload copy too');
  t.same(platformProblems('prairielearn', read(join(out, 'gap-skip-py', 'prairielearn.json'))), [], 'prairielearn.json by its');
  const upload = JSON.parse(read(uploadFile)) as { score: number; tests: Test[]; extra_data: { chaoslab: { provenance: { submissionHash: string } } } };
  t.equal(upload.score, 1, 'gap-skip passes happy-path and fails gap');
  const gap = upload.tests.find((x) => x.extra_data?.scenario === 'gap')!;
  t.match(gap, { score: 0, status: 'failed', extra_data: { replay: /^chaoslab grade .* --only 'gap' / } });
  t.ok(upload.tests.some((x) => x.name === STAFF_TEST_NAME));

  // As staff type it, from a folder of their own: `chaoslab` is this checkout's CLI.
  const replay = await execa('bash', ['-c', `chaoslab() { node ${cli} "$@"; }\n${gap.extra_data!.replay!}`], { cwd: dir, reject: false, timeout: 240_000 });
  t.equal(replay.exitCode, 0, `${replay.stdout}\n${replay.stderr}`);
  const again = JSON.parse(read(join(dir, 'chaoslab-replay', STAFF_DIR, 'gap-skip-py', 'results.json'))) as typeof upload;
  const replayed = again.tests.filter((x) => x.extra_data?.scenario);
  t.same(
    replayed.map((x) => [x.extra_data!.scenario, x.score, x.status]),
    [['gap', 0, 'failed']],
    'the replay grades gap alone, with the same verdict',
  );
  t.equal(again.extra_data.chaoslab.provenance.submissionHash, upload.extra_data.chaoslab.provenance.submissionHash, 'the same submission files');
});
