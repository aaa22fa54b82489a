// chaoslab grade end to end: a small class of the project's own Python reference and two
// mutants (TypeScript, Python) as submissions (manifests in JSON and YAML, and none — the
// TypeScript reference is graded the same way in the batch e2e runs), plus one whose build
// fails, graded with a
// small rubric through the real CLI, Toxiproxy and processes: references get full marks, each
// mutant exactly the points of the scenarios it fails (a failure is re-run, and a deterministic
// bug still loses its points), the failing build 0 with its reason; a scenario shown after the
// due date is not in the always-visible output, and every platform file is valid by its
// specification; the class sharded 3 ways and merged
// gives the same grades.csv; nothing is left running; sealed, every output is closed to the
// sandbox uids (modes asserted) and the workspace is gone. A class folder the sandbox uids can
// reach and an --out they cannot are refused before grading. Then the fallback where sealing is
// unavailable (root without CAP_SYS_ADMIN, as in Gradescope's container): refused without
// --unsealed, and marked NOT SEALED everywhere with it; and the same as a user without root.
import { execa } from 'execa';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SEALED_WORKSPACES } from '../../harness/grade/build/workspace.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { fileTestdir, processesNamingSettled } from '../helpers/fixture.js';
import { dictReader } from '../helpers/grade.js';
import { chaoslab, cli, root } from '../helpers/cli.js';
import { platformProblems } from '../helpers/platform-schemas.js';

t.setTimeout(300_000);
const probe = await probeSealing();
// Sealed where this machine allows (as in CI); elsewhere the class is graded with --unsealed.
const sealFlags = probe.available ? [] : ['--unsealed'];

const RUBRIC = `lab: ledger
scenarios:
  - { name: happy-path, points: 1, feedback: "§3–§4: apply each EVENT, ACK after COMMIT" }
  - { name: duplicate-delivery, points: 2, repeat: 2, feedback: "§3: a duplicate is acknowledged, not applied" }
  - { name: gap, points: 1.5, visibility: after_due_date, feedback: "§3: a gap ends the session" }
`;
const mutant = (name: string, language: 'typescript' | 'python') =>
  language === 'python'
    ? `python3 ${join(root, 'consumer', 'ledger', 'mutants', `${name}.py`)}`
    : `node ${join(root, 'dist', 'consumer', 'ledger', 'mutants', `${name}.js`)}`;

const dir = fileTestdir(t, import.meta.url, {
  class: {
    'ref-python': {},
    'no-dedupe-py': { 'chaoslab.yaml': `lab: ledger\ncommand: ${mutant('no-dedupe', 'python')}\n` },
    'gap-skip-ts': { 'chaoslab.json': JSON.stringify({ lab: 'ledger', command: mutant('gap-skip', 'typescript') }) },
    'broken-build': { 'chaoslab.yaml': 'lab: ledger\nbuild: echo compiling; echo oops >&2; exit 3\ncommand: ./consumer\n' },
  },
  'rubric.yaml': RUBRIC,
});
// The Python reference without a manifest: graded by the client.py default.
copyFileSync(join(root, 'consumer', 'ledger', 'python', 'client.py'), join(dir, 'class', 'ref-python', 'client.py'));
const classDir = join(dir, 'class');
// Root's alone: a sealed grading refuses a class folder the sandbox uids can pass through.
chmodSync(classDir, 0o700);
const rubric = join(dir, 'rubric.yaml');
const before = readdirSync(classDir, { recursive: true }).sort();

const csvOf = (out: string) => readFileSync(join(out, 'grades.csv'), 'utf8');
/** grades.csv read as csv.DictReader does: per row the named columns (provenance, filled elsewhere, aside). */
const csvRows = (out: string, columns: string[]) => dictReader(csvOf(out)).rows.map((r) => columns.map((c) => r[c]));
const results = (out: string, sub: string) =>
  JSON.parse(readFileSync(join(out, sub, 'results.json'), 'utf8')) as {
    score: number;
    output: string;
    tests: { name: string; score: number; max_score: number; status: string; output: string; visibility: string }[];
  };

const whole = join(dir, 'whole');
const workspaces = () => (existsSync(SEALED_WORKSPACES) ? readdirSync(SEALED_WORKSPACES).sort() : []);
const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);
t.test('a class graded on one machine', async (t) => {
  const workspacesBefore = workspaces();
  const r = await chaoslab(['grade', classDir, '--rubric', rubric, '--jobs', '2', '--out', whole, ...sealFlags]);
  t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  t.match(r.stdout, `grades: ${join(whole, 'grades.csv')}, class report: ${join(whole, 'index.html')}`, 'an absolute --out: printed as given');
  if (probe.available) {
    t.match(r.stdout, /builds run without network/);
    // A new workspace of a grader still alive belongs to another test file grading beside this one
    // (named <pid>-<start>-<random>); this grader has exited.
    const alive = (name: string) => {
      try {
        return process.kill(Number(name.split('-')[0]), 0);
      } catch {
        return false;
      }
    };
    t.same(
      workspaces().filter((name) => !workspacesBefore.includes(name) && !alive(name)),
      [],
      'the grading workspace is gone',
    );
    // Passable, not listable: the output folder and the staff one; everything else closed.
    t.equal(mode(whole), '711');
    t.equal(mode(join(whole, '.staff')), '711');
    for (const f of [
      'grades.csv',
      'index.html',
      'class.json',
      'no-dedupe-py/results.json',
      'no-dedupe-py/junit.xml',
      'no-dedupe-py/reports/duplicate-delivery.html',
    ])
      t.equal(mode(join(whole, f)), '600', `${f}: 0600`);
    for (const d of ['no-dedupe-py', '.staff/no-dedupe-py', '.staff/no-dedupe-py/build']) t.equal(mode(join(whole, d)), '700', `${d}: 0700`);
    const runs = join(whole, '.staff', 'no-dedupe-py', 'runs');
    const batch = readdirSync(runs).find((b) => b !== 'latest')!;
    t.equal(mode(join(runs, batch)), '700', 'the batch folder is closed');
    const run = readdirSync(join(runs, batch)).find((d) => statSync(join(runs, batch, d)).isDirectory())!;
    t.equal(mode(join(runs, batch, run)), '700', 'a run folder is closed');
    for (const f of ['summary.md', 'report.html', 'junit.xml', 'journal.jsonl']) t.equal(mode(join(runs, batch, run, f)), '600', `${run}/${f}: 0600`);
  }
  t.match(csvOf(whole), /^submission,status,score,max,sealed,happy-path,duplicate-delivery,gap,reason,/, 'the header first, nothing before it');
  const sealed = probe.available ? 'yes' : 'no';
  t.same(
    csvRows(whole, ['submission', 'status', 'score', 'max', 'sealed', 'happy-path', 'duplicate-delivery', 'gap', 'reason']),
    [
      [
        'broken-build',
        'build-failed',
        '0',
        '4.5',
        sealed,
        '0',
        '0',
        '0',
        'the build `echo compiling; echo oops >&2; exit 3` failed (exit status 3); see build.log',
      ],
      ['gap-skip-ts', 'graded', '3', '4.5', sealed, '1', '2', '0', ''],
      ['no-dedupe-py', 'graded', '2.5', '4.5', sealed, '1', '0', '1.5', ''],
      ['ref-python', 'graded', '4.5', '4.5', sealed, '1', '2', '1.5', ''],
    ],
    'references full marks; each mutant exactly the points of the scenarios it fails; the broken build not graded',
  );
  t.match(results(whole, 'ref-python').output, /Started with: no manifest: the default for client\.py: `python3 client\.py`/);
  t.match(results(whole, 'gap-skip-ts').output, /Started with: chaoslab\.json: /);

  const broken = results(whole, 'broken-build');
  t.match(broken.output, /Not graded: the build `echo compiling; echo oops >&2; exit 3` failed \(exit status 3\); see build\.log/);
  t.equal(readFileSync(join(whole, 'broken-build', 'build.log'), 'utf8'), 'compiling\noops\n');

  const dedupe = results(whole, 'no-dedupe-py');
  t.same(
    dedupe.tests.map((x) => [x.name, x.score, x.max_score, x.status, x.visibility]),
    [
      ['happy-path', 1, 1, 'passed', 'visible'],
      ['duplicate-delivery', 0, 2, 'failed', 'visible'],
      ['gap', 1.5, 1.5, 'passed', 'after_due_date'],
    ],
  );
  // A deterministic bug survives the re-runs: the failure repeats, so it still costs the points.
  t.match(
    dedupe.tests[1]!.output,
    /^Failed \(0 of 4 runs passed, 2 of them re-runs after a failure; it loses its points only when most runs fail\): §3: a duplicate.*\n- .*seq 3 applied twice/s,
  );
  t.match(r.stdout, /no-dedupe-py: re-running 2 run\(s\): duplicate-delivery/);
  t.match(r.stdout, /no-dedupe-py: duplicate-delivery: 0 of 4 runs passed \(2 re-runs after a failure\): failed/);
  const classJson = JSON.parse(readFileSync(join(whole, 'class.json'), 'utf8')) as { submissions: { submission: string; scenarios: { name: string }[] }[] };
  t.match(classJson.submissions.find((s) => s.submission === 'no-dedupe-py')!.scenarios[1], {
    name: 'duplicate-delivery',
    runs: 4,
    passed: 0,
    reruns: 2,
    harnessErrors: 0,
    status: 'failed',
  });
  t.ok(existsSync(join(whole, 'no-dedupe-py', 'reports', 'duplicate-delivery.html')), 'the failing visible scenario’s report is beside results.json');

  // gap (shown after the due date) failed for gap-skip: Gradescope shows the test, its findings
  // and the total only after the due date; the top-level output, always shown, says nothing of it.
  const gapSkip = results(whole, 'gap-skip-ts');
  t.match(gapSkip.tests[2], {
    name: 'gap',
    score: 0,
    max_score: 1.5,
    status: 'failed',
    visibility: 'after_due_date',
    output: /^Failed \(0 of 3 runs passed, 2 of them re-runs after a failure; [^)]*\): §3: a gap ends the session\n- /,
  });
  t.match(gapSkip.output, /Tests shown now: 3 \/ 3 points\.\n1 more test\(s\) \(1\.5 points\) are shown after the due date/);
  t.notMatch(gapSkip.output.replace(/Started with: .*\n/, ''), /gap|4\.5/, 'the always-visible output reveals nothing of gap');
  t.same(readdirSync(join(whole, 'gap-skip-ts'), { recursive: true }).map(String).sort(), [
    'junit.xml',
    'prairielearn.json',
    'reports',
    join('reports', 'gap.html'),
    'results.json',
  ]);
  for (const sub of ['ref-python', 'no-dedupe-py', 'gap-skip-ts', 'broken-build']) {
    t.same(platformProblems('gradescope', readFileSync(join(whole, sub, 'results.json'), 'utf8')), [], `${sub}: results.json by Gradescope's specification`);
    t.same(platformProblems('gradescope', readFileSync(join(whole, '.staff', sub, 'results.json'), 'utf8')), [], `${sub}: the upload copy too`);
    t.same(platformProblems('prairielearn', readFileSync(join(whole, sub, 'prairielearn.json'), 'utf8')), [], `${sub}: prairielearn.json by PrairieLearn's`);
  }
  const page = readFileSync(join(whole, 'index.html'), 'utf8');
  t.match(
    page,
    /Scenarios failed most often<\/h2>\n<ol><li><b>duplicate-delivery<\/b> \(visible\): failed by 1 of 3 graded<\/li><li><b>gap<\/b> \(after_due_date\): failed by 1 of 3 graded/,
  );
  t.match(page, /<p class="counts">3 graded, 1 not graded \(build-failed: 1\)/, 'the failed build is not graded, not failing');

  t.same(readdirSync(classDir, { recursive: true }).sort(), before, 'the submissions themselves are untouched');
  t.same(await processesNamingSettled(whole), [], 'no process of the grading is left');
});

t.test('sharded 3 ways and merged: the same grades.csv', async (t) => {
  const shards = [1, 2, 3].map((i) => join(dir, `shard-${i}`));
  for (const [i, out] of shards.entries()) {
    const r = await chaoslab(['grade', classDir, '--rubric', rubric, '--jobs', '2', '--shard', `${i + 1}/3`, '--out', out, ...sealFlags]);
    t.equal(r.exitCode, 0, r.stderr);
  }
  const merged = join(dir, 'merged');
  const m = await chaoslab(['merge-reports', ...shards, '--out', merged]);
  t.equal(m.exitCode, 0, m.stderr);
  t.match(m.stdout, `: ${join(merged, 'grades.csv')}, ${join(merged, 'index.html')}`, 'an absolute --out: its paths printed absolute, as given');
  t.equal(csvOf(merged), csvOf(whole), 'byte for byte (and the same scores when repeated)');
  t.ok(existsSync(join(merged, 'ref-python', 'results.json')), "each submission's folder is copied");
  const twice = await chaoslab(['merge-reports', shards[0]!, merged, '--out', join(dir, 'twice')]);
  t.equal(twice.exitCode, 2);
  t.match(twice.stderr, /chaoslab: submission ".+" is in both /);
  t.same(await processesNamingSettled(dir), []);
});

t.test('a manifest naming another lab: the others graded, then exit 2 naming it; skipped folders listed; --lab against the rubric', async (t) => {
  const base = t.testdir({
    mixed: { good: {}, wrong: { 'chaoslab.json': JSON.stringify({ lab: 'feed', command: 'python3 client.py' }) }, '.hidden': {}, 'tab\tname': {} },
    'one.yaml': 'lab: ledger\nscenarios:\n  - { name: happy-path, points: 1, feedback: "§3" }\n',
  });
  const mixed = join(base, 'mixed');
  for (const sub of ['good', 'wrong']) copyFileSync(join(root, 'consumer', 'ledger', 'python', 'client.py'), join(mixed, sub, 'client.py'));
  chmodSync(mixed, 0o700);
  const out = join(base, 'out');
  const r = await chaoslab(['grade', mixed, '--rubric', join(base, 'one.yaml'), '--out', out, ...sealFlags]);
  t.equal(r.exitCode, 2, `${r.stdout}\n${r.stderr}`);
  t.match(r.stdout, 'chaoslab grade: skipped ".hidden": its name starts with a dot');
  t.match(r.stdout, 'chaoslab grade: skipped "tab\\tname": its name holds U+0009 (a tab)', 'the tab shown, not typed');
  t.match(r.stdout, 'chaoslab grade: wrong/chaoslab.json: lab "feed", but this class is graded with the ledger rubric');
  t.match(r.stdout, /1 manifest\(s\) name another lab than the rubric's: .* \(exit 2\)/);
  t.same(
    csvRows(out, ['submission', 'status', 'score', 'reason']),
    [
      ['good', 'graded', '1', ''],
      ['wrong', 'wrong-lab', '0', 'wrong/chaoslab.json: lab "feed", but this class is graded with the ledger rubric'],
    ],
    'the good submission graded all the same',
  );
  const json = JSON.parse(readFileSync(join(out, 'class.json'), 'utf8'));
  t.same(
    json.skipped.map((s: { name: string }) => s.name),
    ['.hidden', 'tab\tname'],
  );
  t.match(json.counts, { submissions: 2, graded: 1, notGraded: 1, byStatus: { 'wrong-lab': 1 }, skipped: 2 });
  const page = readFileSync(join(out, 'index.html'), 'utf8');
  t.match(page, /<h2>Folders skipped<\/h2>\n<ul><li><code>\.hidden<\/code>/);
  t.match(page, /<p class="warn">1 manifest\(s\) name another lab/);

  const disagree = await chaoslab(['grade', mixed, '--rubric', join(base, 'one.yaml'), '--lab', 'feed', '--out', join(base, 'never')]);
  t.equal(disagree.exitCode, 2);
  t.match(disagree.stderr, /chaoslab: --lab feed, but the rubric .*one\.yaml is for the ledger lab/);
  t.notOk(existsSync(join(base, 'never')), 'refused before anything is made');
  t.same(await processesNamingSettled(out), []);
});

t.test(
  'sealed: a class folder the sandbox uids can reach, and an --out they cannot, are refused before grading',
  { skip: probe.available ? false : 'sealing is not available here' },
  async (t) => {
    const open = t.testdir({ solo: { 'client.py': '' } });
    chmodSync(open, 0o755);
    const refusedOpen = await chaoslab(['grade', open, '--rubric', rubric, '--out', join(dir, 'never')]);
    t.equal(refusedOpen.exitCode, 2);
    t.match(refusedOpen.stderr, `chaoslab: refusing to grade here: the class folder ${open} can be reached by the sandbox uids`);
    t.match(refusedOpen.stderr, `(chmod 700 ${open})`);
    t.notOk(existsSync(join(dir, 'never')), 'nothing made');
    // Issue 29: an --out under a mktemp -d folder (0700) would score every student 0.
    const closed = mkdtempSync(join(tmpdir(), 'chaoslab-out-'));
    t.teardown(() => rmSync(closed, { recursive: true, force: true }));
    const refusedOut = await chaoslab(['grade', classDir, '--rubric', rubric, '--out', join(closed, 'out')]);
    t.equal(refusedOut.exitCode, 2);
    t.match(
      refusedOut.stderr,
      `chaoslab: refusing to grade here: uid 61000 cannot reach the output folder ${join(closed, 'out')}: ${closed} is not searchable`,
    );
    t.same(readdirSync(closed), [], 'nothing graded, nothing left');
  },
);

t.test('where sealing is unavailable: refused without --unsealed; with it, every output says NOT SEALED', async (t) => {
  // Root without CAP_SYS_ADMIN, as in Gradescope's container: the probe fails there.
  const asGradescope = probe.available ? ['setpriv', '--bounding-set=-sys_admin', 'node'] : ['node'];
  const one = join(dir, 'one');
  const single = join(dir, 'single');
  writeFileSync(join(dir, 'one-rubric.yaml'), 'lab: ledger\nscenarios:\n  - { name: happy-path, points: 1, feedback: "§3" }\n');
  const grade = (extra: string[]) =>
    execa(
      asGradescope[0]!,
      [
        ...asGradescope.slice(1),
        cli,
        'grade',
        '--consumer',
        'python3 client.py',
        '--name',
        'solo',
        '--rubric',
        join(dir, 'one-rubric.yaml'),
        '--out',
        one,
        ...extra,
      ],
      {
        cwd: join(classDir, 'ref-python'),
        env: {},
        reject: false,
      },
    );
  const refused = await grade([]);
  t.equal(refused.exitCode, 2);
  t.match(refused.stderr, /chaoslab: refusing to grade untrusted code unsealed: .* give --unsealed/);
  t.notOk(existsSync(join(one, 'solo')), 'nothing graded');
  const r = await grade(['--unsealed']);
  t.equal(r.exitCode, 0, r.stderr);
  t.match(results(one, 'solo'), { score: 1, output: /^NOT SEALED: / });
  t.match(readFileSync(join(one, 'solo', 'junit.xml'), 'utf8'), /<property name="sealed" value="false"\/>/);
  t.same(csvRows(one, ['submission', 'status', 'score', 'max', 'sealed', 'happy-path']), [['solo', 'graded', '1', '1', 'no', '1']], 'unsealed: a column');
  t.match(readFileSync(join(one, 'index.html'), 'utf8'), /<p class="warn">NOT SEALED/);
  t.notOk(existsSync(single));
});

t.test(
  'as a user without root: refused without --unsealed, graded and marked with it',
  { skip: process.geteuid?.() === 0 ? false : 'runs as root only (it drops to uid 65534)' },
  async (t) => {
    const base = t.testdir({ solo: {}, 'rubric.yaml': 'lab: ledger\nscenarios:\n  - { name: happy-path, points: 1, feedback: "§3" }\n' });
    copyFileSync(join(root, 'consumer', 'ledger', 'python', 'client.py'), join(base, 'solo', 'client.py'));
    chmodSync(base, 0o777);
    const out = join(base, 'out');
    const grade = (extra: string[]) =>
      execa(
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', 'node', cli, 'grade', base, '--rubric', join(base, 'rubric.yaml'), '--out', out, ...extra],
        {
          env: { HOME: base },
          reject: false,
        },
      );
    const refused = await grade([]);
    t.equal(refused.exitCode, 2);
    t.match(refused.stderr, /refusing to grade untrusted code unsealed: sealed mode not available \(sealed runs need root/);
    const r = await grade(['--unsealed']);
    t.equal(r.exitCode, 0, r.stderr);
    t.same(csvRows(out, ['submission', 'status', 'score', 'sealed']), [['solo', 'graded', '1', 'no']]);
    t.same(await processesNamingSettled(out), []);
  },
);
