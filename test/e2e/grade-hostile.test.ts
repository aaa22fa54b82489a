// Hostile submissions, as whole submissions with manifests, graded through the real CLI (sealed
// where this machine allows, else --unsealed): one that hangs before connecting (and ignores
// SIGTERM), one that floods stdout with 100 MB, one that starts 200 children (a bounded fork
// bomb), one that exits at once, one that sends garbage instead of its first message, one that
// leaves a setsid'd double-forked child behind and then behaves, one that tries to change its
// own build. For each, the grader finishes (the hang is
// cut by --deadline), scores and explains; no process naming the output folder is left, and
// nothing is written outside it.
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { fileTestdir, processesNaming } from '../helpers/fixture.js';
import { chaoslab, root } from '../helpers/cli.js';

t.setTimeout(300_000);
const probe = await probeSealing();
const sealFlags = probe.available ? [] : ['--unsealed'];

const manifest = (command: string) => ({ 'chaoslab.yaml': `lab: ledger\ncommand: ${JSON.stringify(command)}\n` });
const dir = fileTestdir(t, import.meta.url, {
  class: {
    hang: { ...manifest('bash hang.sh'), 'hang.sh': "trap '' TERM\nsleep 600\n" },
    flood: { ...manifest('bash flood.sh'), 'flood.sh': 'head -c 100000000 /dev/zero | tr "\\0" x\nexit 0\n' },
    'exit-at-once': manifest('true'),
    garbage: { ...manifest('bash garbage.sh'), 'garbage.sh': 'printf "GARBAGE\\n" > "/dev/tcp/127.0.0.1/$CHAOSLAB_PORT"\nexit 0\n' },
    'leave-a-child': { ...manifest('bash child.sh'), 'child.sh': "setsid bash -c 'sleep 600 & sleep 600' &\nexec python3 client.py\n" },
    // A bounded fork bomb: 200 children, then the real work.
    'many-children': { ...manifest('bash many.sh'), 'many.sh': 'for i in $(seq 200); do sleep 600 & done\nexec python3 client.py\n' },
    'change-its-build': {
      ...manifest('bash tamper.sh'),
      'tamper.sh': 'echo changed > client.py 2>/dev/null; echo new > tampered.txt 2>/dev/null\nexec python3 client.py\n',
    },
  },
  'rubric.yaml': 'lab: ledger\nscenarios:\n  - { name: happy-path, points: 1, feedback: "§3–§4: apply each EVENT, ACK after COMMIT" }\n',
});
for (const sub of ['leave-a-child', 'many-children', 'change-its-build'])
  copyFileSync(join(root, 'consumer', 'ledger', 'python', 'client.py'), join(dir, 'class', sub, 'client.py'));

t.test('every hostile submission is scored and explained; nothing is left behind', async (t) => {
  const out = join(dir, 'out');
  const classDir = join(dir, 'class');
  const before = readdirSync(dir, { recursive: true }).map(String).sort();
  const r = await chaoslab(['grade', classDir, '--rubric', join(dir, 'rubric.yaml'), '--jobs', '2', '--deadline', '15', '--out', out, ...sealFlags]);
  t.equal(r.exitCode, 0, `grading completed\n${r.stdout}\n${r.stderr}`);
  const result = (sub: string) => JSON.parse(readFileSync(join(out, sub, 'results.json'), 'utf8')) as { score: number; tests: { output: string }[] };
  const failed = (sub: string, why: RegExp) => {
    const res = result(sub);
    t.equal(res.score, 0, `${sub}: 0`);
    t.match(res.tests[0]!.output, why, `${sub}: explained`);
  };
  failed('hang', /deadline passed/);
  failed('flood', /^Failed: §3–§4/);
  failed('exit-at-once', /never sent RESUME/);
  failed('garbage', /^Failed: §3–§4/);
  // It behaved once its child was away: whatever its score, the child is gone (checked below).
  t.ok(existsSync(join(out, 'leave-a-child', 'results.json')));
  t.ok(existsSync(join(out, 'many-children', 'results.json')));
  if (probe.available) {
    t.equal(result('change-its-build').score, 1, 'its build is read-only: the write failed and the untouched client passed');
    const build = join(out, '.staff', 'change-its-build', 'build');
    t.notOk(existsSync(join(build, 'tampered.txt')));
    t.equal(readFileSync(join(build, 'client.py'), 'utf8'), readFileSync(join(root, 'consumer', 'ledger', 'python', 'client.py'), 'utf8'));
  }
  t.same(processesNaming(out), [], 'no process of any submission is left');
  const after = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((p) => p !== 'out' && !p.startsWith('out/'))
    .sort();
  t.same(after, before, 'nothing written outside the output folder');
  t.match(readFileSync(join(out, 'grades.csv'), 'utf8'), /^(# NOT SEALED.*\n)?submission,score,max,happy-path\n/);
});

t.test(
  'sealed: the evidence, the rubric and a staff-only hidden scenario are out of a submission’s reach',
  { skip: probe.available ? false : `sealing is not available here: ${probe.reason}` },
  async (t) => {
    const base = t.testdir({ staff: {}, class: { 'a-reference': {}, 'read-evidence': {}, forge: {}, snoop: {} } });
    const staff = join(base, 'staff');
    const rubric = join(staff, 'rubric.yaml');
    // The hidden scenario is a copy of gap under the staff's own folder (0700, root's).
    copyFileSync(join(root, 'scenarios', 'ledger', 'gap.yaml'), join(staff, 'gap.yaml'));
    writeFileSync(
      rubric,
      'lab: ledger\nscenarios:\n  - { name: happy-path, points: 1, feedback: "§3–§4" }\n  - { name: gap, file: gap.yaml, points: 1, visibility: hidden, feedback: "§3" }\n',
    );
    chmodSync(staff, 0o700);
    const sub = (name: string) => join(base, 'class', name);
    copyFileSync(join(root, 'consumer', 'ledger', 'python', 'client.py'), join(sub('a-reference'), 'client.py'));
    writeFileSync(
      join(sub('read-evidence'), 'chaoslab.yaml'),
      `lab: ledger\ncommand: ${JSON.stringify(`python3 ${join(root, 'test', 'fixtures', 'hostile', 'read-evidence.py')}`)}\n`,
    );
    writeFileSync(
      join(sub('forge'), 'chaoslab.yaml'),
      `lab: ledger\ncommand: ${JSON.stringify(`python3 ${join(root, 'test', 'fixtures', 'hostile', 'forge-transcript.py')}`)}\n`,
    );
    const out = join(base, 'out');
    // Tries the rubric, the hidden scenario, the class outputs and an earlier submission's build.
    const targets = [rubric, join(staff, 'gap.yaml'), join(out, 'class.json'), join(out, '.staff', 'a-reference', 'build', 'client.py')];
    writeFileSync(
      join(sub('snoop'), 'snoop.sh'),
      `for f in ${targets.map((p) => `'${p}'`).join(' ')}; do if cat "$f" >/dev/null 2>&1; then echo "READ $f" >&2; else echo "could not read $f" >&2; fi; done\nexit 0\n`,
    );
    writeFileSync(join(sub('snoop'), 'chaoslab.yaml'), 'lab: ledger\ncommand: bash snoop.sh\n');

    const r = await chaoslab(['grade', join(base, 'class'), '--rubric', rubric, '--jobs', '2', '--out', out]);
    t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    t.equal(
      readFileSync(join(out, 'grades.csv'), 'utf8'),
      'submission,score,max,happy-path,gap\na-reference,2,2,1,1\nforge,0,2,0,0\nread-evidence,0,2,0,0\nsnoop,0,2,0,0\n',
    );
    const snooped = readFileSync(join(out, 'snoop', 'reports', 'happy-path.html'), 'utf8');
    for (const p of targets) t.match(snooped, `could not read ${p}`, `snoop could not read ${p}`);
    t.notMatch(snooped, /READ \//);
    t.notOk(existsSync(join(out, 'snoop', 'reports', 'gap.html')), 'no report of the hidden scenario for the student');
    const evidence = readFileSync(join(out, 'read-evidence', 'reports', 'happy-path.html'), 'utf8');
    t.match(evidence, /could not read the journal: Permission denied/);
    t.notMatch(evidence, /could (read|write|list) /);
    t.same(processesNaming(out), []);
  },
);
