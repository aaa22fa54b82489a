// Hostile submissions, as whole submissions with manifests, graded through the real CLI: sealed
// where this machine allows (root, as in CI), else --unsealed; then the non-root fallback (uid
// 65534, --unsealed) on the ones that attack the grader's processes and files. They hang
// ignoring SIGTERM, flood stdout with 100 MB, exit at once, send garbage, leave children behind
// (a subshell's, a double fork with setsid), start 200 children (a bounded fork bomb), change
// their own build, write a huge file, fail their build (leaving a child), corrupt their store
// between runs, read or tamper with the evidence, the control's database, the rubric and a
// hidden scenario, an earlier submission's and other runs' reports (`../../..` from its working
// directory too); a manifest that is a link to a root-only file; a build that reads another
// submission and connects to a local service of the host. For each, the test checks that the
// grader finishes (the hang is cut by --deadline), scores and explains in results.json, and
// leaves no process (by the output folder in its command line or environment, by each
// sleeper's own duration, and every process and Toxiproxy server each run's journal started),
// and no file outside the output folder.
import { execa } from 'execa';
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { type JournalEntry, readJournal } from '../../harness/record/journal.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { chaoslab, cli, root, survivors } from '../helpers/cli.js';
import { fileTestdir, processesNamingSettled, processesRunning } from '../helpers/fixture.js';
import { dictReader } from '../helpers/grade.js';

t.setTimeout(420_000);
const probe = await probeSealing();
const sealFlags = probe.available ? [] : ['--unsealed'];
const reference = join(root, 'consumer', 'ledger', 'python', 'client.py');
const hostile = (name: string) => join(root, 'test', 'fixtures', 'hostile', name);
// reruns: 0 — these tests are about hostile submissions, not re-runs (test/e2e/grade.test.ts):
// one run per scenario keeps them short and their outputs plain.
const HAPPY = 'lab: ledger\nreruns: 0\nscenarios:\n  - { name: happy-path, points: 1, feedback: "§3–§4: apply each EVENT, ACK after COMMIT" }\n';
// Where a huge file must not land: a sealed consumer's /tmp and /dev/shm are private tmpfs of its own,
// gone with it; the host's stay untouched.
const OUTSIDE = ['/tmp', '/dev/shm'].map((d) => join(d, 'chaoslab-grade-hostile-huge'));
for (const f of OUTSIDE) rmSync(f, { force: true });

// Every sleeper has a duration of its own: a survivor is found by its command line, whatever its
// environment. The huge file goes in the room (beside CHAOSLAB_DB), 8 MiB written from 1020 MiB
// on: past the 1 GiB RLIMIT_FSIZE of a sealed run without writing a gigabyte.
const SLEEPERS = ['sleep 6001', 'sleep 6002', 'sleep 6003', 'sleep 6004', 'sleep 6005', 'sleep 6006'];
const manifest = (command: string, build?: string) => ({
  'chaoslab.yaml': `lab: ledger\n${build ? `build: ${JSON.stringify(build)}\n` : ''}command: ${JSON.stringify(command)}\n`,
});
const HUGE = [
  'for f in /tmp/chaoslab-grade-hostile-huge /dev/shm/chaoslab-grade-hostile-huge ./huge; do',
  '  if dd if=/dev/zero of="$f" bs=1M count=1 2>/dev/null; then echo "WROTE $f" >&2; else echo "could not write $f" >&2; fi',
  'done',
  'exec dd if=/dev/zero of="$(dirname "$CHAOSLAB_DB")/huge" bs=1M seek=1020 count=8',
].join('\n');
const BROKEN_BUILD = 'setsid sleep 6006 </dev/null >/dev/null 2>&1 & echo compiling; echo "error: no compiler here" >&2; sleep 0.3; exit 7';
const hostileSubmissions = {
  hang: { ...manifest('bash hang.sh'), 'hang.sh': "trap '' TERM\nsleep 6001\n" },
  'leave-a-child': { ...manifest('bash child.sh'), 'child.sh': "(sleep 6002 &)\nsetsid bash -c 'sleep 6003 & exec sleep 6004' &\nexec python3 client.py\n" },
  // A bounded fork bomb: 200 children, then the real work.
  'many-children': { ...manifest('bash many.sh'), 'many.sh': 'for i in $(seq 200); do sleep 6005 & done\nexec python3 client.py\n' },
  'huge-file': { ...manifest('bash huge.sh'), 'huge.sh': `${HUGE}\n` },
  'broken-build': manifest('./consumer', BROKEN_BUILD),
};
const WITH_REFERENCE = ['leave-a-child', 'many-children', 'change-its-build'];

const dir = fileTestdir(t, import.meta.url, {
  class: {
    ...hostileSubmissions,
    flood: { ...manifest('bash flood.sh'), 'flood.sh': 'head -c 100000000 /dev/zero | tr "\\0" x\nexit 0\n' },
    'exit-at-once': manifest('true'),
    garbage: { ...manifest('bash garbage.sh'), 'garbage.sh': 'printf "GARBAGE\\n" > "/dev/tcp/127.0.0.1/$CHAOSLAB_PORT"\nexit 0\n' },
    'change-its-build': {
      ...manifest('bash tamper.sh'),
      'tamper.sh': 'echo changed > client.py 2>/dev/null; echo new > tampered.txt 2>/dev/null\nexec python3 client.py\n',
    },
  },
  'rubric.yaml': HAPPY,
});
for (const sub of WITH_REFERENCE) copyFileSync(reference, join(dir, 'class', sub, 'client.py'));
// Sealed, a class folder must be root's alone (the grader refuses one the sandbox uids can reach).
chmodSync(join(dir, 'class'), 0o700);

interface Results {
  score: number;
  execution_time: number;
  output: string;
  tests: { output: string; score: number }[];
}
const resultsOf = (out: string, sub: string) => JSON.parse(readFileSync(join(out, sub, 'results.json'), 'utf8')) as Results;
const listing = (d: string, except: string) =>
  readdirSync(d, { recursive: true })
    .map(String)
    .filter((p) => p !== except && !p.startsWith(`${except}/`))
    .sort();

/** Every run journal under <out>/.staff/<submission>/runs/<batch>/<run>/. */
function runJournals(out: string): string[] {
  const staff = join(out, '.staff');
  return readdirSync(staff).flatMap((sub) => {
    const runs = join(staff, sub, 'runs');
    if (!existsSync(runs)) return [];
    return readdirSync(runs)
      .filter((batch) => batch !== 'latest')
      .flatMap((batch) =>
        readdirSync(join(runs, batch))
          .map((run) => join(runs, batch, run, 'journal.jsonl'))
          .filter((f) => existsSync(f)),
      );
  });
}

/** A journal's entries; the lines that are none are left out (unsealed, forge-transcript.py appends some). */
const entriesOf = (file: string): JournalEntry[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        const e = JSON.parse(line) as JournalEntry | null;
        return e && typeof e === 'object' && typeof e.type === 'string' ? [e] : [];
      } catch {
        return [];
      }
    });

/** No process of the grading is left: by the output folder, by each sleeper, by each run's journal (its processes and its Toxiproxy). */
async function nothingRunning(t: Test, out: string): Promise<void> {
  t.same(await processesNamingSettled(out), [], 'no process names the output folder');
  t.same(SLEEPERS.flatMap(processesRunning), [], 'no sleeper of any submission is left');
  const journals = runJournals(out);
  t.ok(journals.length > 0, 'the runs kept their journals');
  t.same(
    journals.flatMap((j) => survivors(entriesOf(j)).map((s) => `${j}: ${s}`)),
    [],
    'every process and Toxiproxy server the runs started is gone',
  );
}

/** A deadline many times the submission's (15 s): it ends; this is no speed measurement. */
const ENDS_WITHIN_S = 90;

t.test('every hostile submission is scored and explained; nothing is left behind', async (t) => {
  const out = join(dir, 'out');
  const before = listing(dir, 'out');
  const r = await chaoslab(['grade', join(dir, 'class'), '--rubric', join(dir, 'rubric.yaml'), '--jobs', '2', '--deadline', '15', '--out', out, ...sealFlags]);
  t.equal(r.exitCode, 0, `grading completed\n${r.stdout}\n${r.stderr}`);
  const scored = (sub: string, score: number, why: RegExp) => {
    const res = resultsOf(out, sub);
    t.equal(res.score, score, `${sub}: ${score}`);
    t.match(res.tests[0]!.output, why, `${sub}: explained`);
    t.ok(res.execution_time < ENDS_WITHIN_S, `${sub}: graded in ${res.execution_time} s`);
    return res;
  };
  scored('hang', 0, /deadline passed/);
  scored('flood', 0, /^Failed: §3–§4.*\n- incarnation 1 never sent RESUME/);
  const staffBytes = (p: string): number => (statSync(p).isDirectory() ? readdirSync(p).reduce((n, f) => n + staffBytes(join(p, f)), 0) : statSync(p).size);
  t.ok(staffBytes(join(out, '.staff', 'flood')) < 20_000_000, 'its 100 MB of output were capped');
  scored('exit-at-once', 0, /never sent RESUME/);
  scored('garbage', 0, /^Failed: §3–§4.*\n- incarnation 1 never sent RESUME/);
  // They behaved once their children were away; the children are gone (nothingRunning below).
  scored('leave-a-child', 1, /^Passed\.$/);
  scored('many-children', 1, /^Passed\.$/);
  const broken = scored('broken-build', 0, /^Failed: .*\n- the build `setsid sleep 6006 .*` failed \(exit status 7\); see build\.log$/s);
  t.match(broken.output, /Not graded: the build .* failed \(exit status 7\)/);
  t.equal(readFileSync(join(out, 'broken-build', 'build.log'), 'utf8'), 'compiling\nerror: no compiler here\n');
  if (probe.available) {
    scored('change-its-build', 1, /^Passed\.$/);
    const build = join(out, '.staff', 'change-its-build', 'build');
    t.notOk(existsSync(join(build, 'tampered.txt')), 'its build is read-only: the write failed');
    t.equal(readFileSync(join(build, 'client.py'), 'utf8'), readFileSync(reference, 'utf8'), 'and the untouched client passed');
    // Killed by the 1 GiB RLIMIT_FSIZE, its file stopped there; its build is read-only; what it wrote to
    // /tmp and /dev/shm went to private ones that vanished with it (the host's hold nothing).
    scored('huge-file', 0, /killed by SIGXFSZ/);
    const [journal] = runJournals(join(out)).filter((j) => j.includes('/.staff/huge-file/'));
    t.equal(statSync(join(dirname(journal!), 'rooms', 'consumer', 'huge')).size, 1024 ** 3, 'the file stopped at the limit');
    const said = readFileSync(join(out, 'huge-file', 'reports', 'happy-path.html'), 'utf8');
    t.match(said, 'could not write ./huge');
    t.notMatch(said, 'WROTE ./huge');
    for (const f of OUTSIDE) t.notOk(existsSync(f), `nothing in ${f}`);
  } else {
    // Unsealed there is no file-size limit and no read-only /tmp (every output says NOT SEALED).
    scored('huge-file', 0, /never sent RESUME/);
    for (const f of OUTSIDE) rmSync(f, { force: true });
  }
  await nothingRunning(t, out);
  t.same(listing(dir, 'out'), before, 'nothing written outside the output folder');
  t.match(readFileSync(join(out, 'grades.csv'), 'utf8'), /^submission,status,score,max,sealed,happy-path,reason,/, 'the header first');
});

// Before the reference opens it: garbage over its store (an earlier incarnation's, in a restart)
// and over every earlier run's store it can name in its batch folder (were rooms ever shared or
// left open). ack-crash restarts it, so that run fails; happy-path's two runs each start in a
// fresh room, so both pass.
const CORRUPT = [
  'run=$(dirname "$(dirname "$(dirname "$CHAOSLAB_DB")")")',
  'for f in "$CHAOSLAB_DB" "$run"/../*/rooms/consumer/consumer.db; do',
  '  [ -e "$f" ] || continue',
  '  if printf "GARBAGE GARBAGE GARBAGE" | dd of="$f" conv=notrunc 2>/dev/null; then echo "corrupted $f" >&2; else echo "could not corrupt $f" >&2; fi',
  'done',
  'exec python3 client.py',
  '',
].join('\n');
const CORRUPT_RUBRIC = `lab: ledger
reruns: 0
scenarios:
  - { name: ack-crash, points: 2, feedback: "§4 and §5: resume from the committed cursor" }
  - { name: happy-path, points: 1, repeat: 2, rate: all, feedback: "§3–§4" }
`;

/** Grades the store-corrupting submission in `base` (one run at a time); `as` runs the grader as another user. */
async function gradeCorruptStore(t: Test, base: string, as: string[], flags: string[]): Promise<void> {
  const out = join(base, 'out');
  const sub = join(base, 'corrupt');
  const before = listing(base, 'out');
  const [file, ...args] = [...as, 'node', cli, 'grade', '--consumer', 'bash corrupt.sh', '--name', 'corrupt'];
  const r = await execa(file!, [...args, '--rubric', join(base, 'rubric.yaml'), '--jobs', '1', '--out', out, ...flags], {
    cwd: sub,
    env: { HOME: base },
    reject: false,
  });
  t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  const res = resultsOf(out, 'corrupt');
  t.equal(res.score, 1, 'ack-crash lost, happy-path scored');
  t.match(res.tests[0]!.output, /^Failed: §4 and §5.*\n- .*file is not a database/s, 'the restart found its store corrupt');
  t.equal(res.tests[1]!.output, 'Passed (2 of 2 runs passed; it scores only if all pass).', 'each later run started in a fresh room');
  await nothingRunning(t, out);
  t.same(listing(base, 'out'), before, 'nothing written outside the output folder');
}

const corruptBase = (t: Test) => {
  const base = t.testdir({ corrupt: { 'corrupt.sh': CORRUPT }, 'rubric.yaml': CORRUPT_RUBRIC });
  copyFileSync(reference, join(base, 'corrupt', 'client.py'));
  return base;
};

t.test('a submission that corrupts its store between runs loses only the run it corrupted', async (t) => {
  const base = corruptBase(t);
  await gradeCorruptStore(t, base, [], sealFlags);
  if (probe.available) {
    // Sealed, the earlier runs' stores were out of its reach: each is still a SQLite file.
    const stores = runJournals(join(base, 'out'))
      .map((j) => join(dirname(j), 'rooms', 'consumer', 'consumer.db'))
      .filter((f) => existsSync(f) && !f.includes('-ack-crash-'));
    t.equal(stores.length, 2);
    for (const f of stores) t.equal(readFileSync(f).subarray(0, 16).toString('latin1'), 'SQLite format 3\0', `${f} intact`);
  }
});

t.test(
  'sealed: the evidence, the control’s database, the rubric and a staff-only hidden scenario are out of a submission’s reach',
  { skip: probe.available ? false : `sealing is not available here: ${probe.reason}` },
  async (t) => {
    const base = t.testdir({
      staff: {},
      class: { 'a-reference': {}, 'build-snoop': {}, linked: {}, 'read-evidence': {}, forge: {}, snoop: {}, steal: {}, tamper: {} },
    });
    const staff = join(base, 'staff');
    const rubric = join(staff, 'rubric.yaml');
    chmodSync(join(base, 'class'), 0o700);
    // A manifest that is a link to a root-only file: followed by root, its command would be in results.json.
    writeFileSync(join(staff, 'secret.json'), '{"lab": "ledger", "command": "echo SECRET-b7e1"}');
    symlinkSync(join(staff, 'secret.json'), join(base, 'class', 'linked', 'chaoslab.json'));
    // A local service of the host (this test, in the root network namespace) that no build may reach.
    const knocks: Socket[] = [];
    const service = createServer((socket) => knocks.push(socket.end()));
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    t.teardown(() => service.close());
    const port = (service.address() as { port: number }).port;
    // The hidden scenario is a copy of gap under the staff's own folder (0700, root's).
    copyFileSync(join(root, 'scenarios', 'ledger', 'gap.yaml'), join(staff, 'gap.yaml'));
    writeFileSync(
      rubric,
      'lab: ledger\nreruns: 0\nscenarios:\n  - { name: gap, file: gap.yaml, points: 0, visibility: hidden, feedback: "§3" }\n  - { name: happy-path, points: 1, feedback: "§3–§4" }\n',
    );
    chmodSync(staff, 0o700);
    const sub = (name: string) => join(base, 'class', name);
    const python = (script: string) => `lab: ledger\ncommand: ${JSON.stringify(`python3 ${hostile(script)}`)}\n`;
    copyFileSync(reference, join(sub('a-reference'), 'client.py'));
    writeFileSync(join(sub('read-evidence'), 'chaoslab.yaml'), python('read-evidence.py'));
    writeFileSync(join(sub('forge'), 'chaoslab.yaml'), python('forge-transcript.py'));
    // Reads the control's database to copy it over its own.
    writeFileSync(join(sub('steal'), 'chaoslab.yaml'), python('steal-control.py'));
    // Appends a forged verdict to each file of its run folder, then tries to cut and remove the journal.
    writeFileSync(
      join(sub('tamper'), 'tamper.sh'),
      [
        'run=$(dirname "$(dirname "$(dirname "$CHAOSLAB_DB")")")',
        'for f in journal.jsonl control.db report.html summary.md junit.xml; do',
        `  if printf '{"type":"verdict","verdict":{"status":"pass","headline":"FORGED"}}\\n' >> "$run/$f" 2>/dev/null; then echo "TAMPERED $f" >&2; else echo "could not tamper with $f" >&2; fi`,
        'done',
        ': > "$run/journal.jsonl" 2>/dev/null && echo "TAMPERED: cut the journal" >&2',
        'rm -f "$run/journal.jsonl" 2>/dev/null && [ ! -e "$run/journal.jsonl" ] && echo "TAMPERED: removed the journal" >&2',
        'exit 0',
        '',
      ].join('\n'),
    );
    writeFileSync(join(sub('tamper'), 'chaoslab.yaml'), 'lab: ledger\ncommand: bash tamper.sh\n');
    const out = join(base, 'out');
    // Tries the rubric, the hidden scenario, the class outputs, an earlier submission's build,
    // its student files and its runs' reports (by the batch's `latest` link).
    const targets = [
      rubric,
      join(staff, 'gap.yaml'),
      join(out, 'class.json'),
      join(out, '.staff', 'a-reference', 'build', 'client.py'),
      join(out, 'a-reference', 'junit.xml'),
      join(out, '.staff', 'a-reference', 'runs', 'latest', 'summary.md'),
    ];
    writeFileSync(
      join(sub('snoop'), 'snoop.sh'),
      [
        `for f in ${targets.map((p) => `'${p}'`).join(' ')}; do if cat "$f" >/dev/null 2>&1; then echo "READ $f" >&2; else echo "could not read $f" >&2; fi; done`,
        // Its batch folder holds the hidden scenario's run folder, named after it.
        'run=$(dirname "$(dirname "$(dirname "$CHAOSLAB_DB")")")',
        'if ls "$run/.." >&2 2>/dev/null; then echo "LISTED the batch folder" >&2; else echo "could not list the batch folder" >&2; fi',
        // From its working directory (once <out>/.staff/<name>/build, where ../../.. was every student).
        'for d in .. ../.. ../../..; do if ls "$d" >&2 2>/dev/null; then echo "LISTED $d" >&2; else echo "could not list $d" >&2; fi; done',
        'exit 0',
        '',
      ].join('\n'),
    );
    writeFileSync(join(sub('snoop'), 'chaoslab.yaml'), 'lab: ledger\ncommand: bash snoop.sh\n');
    // Its build reads another submission (the original, and what the grader made of it) and
    // knocks on the host's service; it fails, so no run follows (its build.log says what it got).
    const otherFiles = [join(sub('a-reference'), 'client.py'), join(out, 'a-reference', 'results.json')];
    writeFileSync(
      join(sub('build-snoop'), 'build.sh'),
      [
        `for f in ${otherFiles.map((p) => `'${p}'`).join(' ')}; do if cat "$f" >/dev/null 2>&1; then echo "READ $f"; else echo "could not read $f"; fi; done`,
        'if ls .. >/dev/null 2>&1; then echo "LISTED the workspace"; else echo "could not list the workspace"; fi',
        `if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo "CONNECTED to the host"; else echo "could not connect to the host"; fi`,
        'exit 3',
        '',
      ].join('\n'),
    );
    writeFileSync(join(sub('build-snoop'), 'chaoslab.yaml'), 'lab: ledger\nbuild: bash build.sh\ncommand: ./consumer\n');

    const before = listing(base, 'out');
    const r = await chaoslab(['grade', join(base, 'class'), '--rubric', rubric, '--jobs', '2', '--out', out]);
    t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    const rows = dictReader(readFileSync(join(out, 'grades.csv'), 'utf8')).rows;
    t.same(
      rows.map((x) => [x.submission, x.score, x.max, x.gap, x['happy-path']].join(',')),
      [
        'a-reference,1,1,0,1',
        'build-snoop,0,1,0,0',
        'forge,0,1,0,0',
        'linked,0,1,0,0',
        'read-evidence,0,1,0,0',
        'snoop,0,1,0,0',
        'steal,0,1,0,0',
        'tamper,0,1,0,0',
      ],
    );
    t.equal(rows.find((x) => x.submission === 'linked')?.status, 'manifest', 'the linked manifest: not graded');
    t.equal(rows.find((x) => x.submission === 'a-reference')?.status, 'graded');
    t.match(resultsOf(out, 'linked').output, /Not graded: linked\/chaoslab\.json: is a symbolic link, not a file: it was not read/);
    for (const f of readdirSync(out, { recursive: true }).map((p) => join(out, String(p))))
      if (statSync(f).isFile()) t.notMatch(readFileSync(f, 'latin1'), /SECRET-b7e1/, `${f}: nothing of the linked file`);
    const built = readFileSync(join(out, 'build-snoop', 'build.log'), 'utf8');
    for (const f of otherFiles) t.match(built, `could not read ${f}`, `its build could not read ${f}`);
    t.match(built, 'could not list the workspace');
    t.match(built, 'could not connect to the host');
    t.notMatch(built, /READ \/|LISTED|CONNECTED/);
    t.equal(knocks.length, 0, 'the host service saw no connection');
    const report = (name: string) => readFileSync(join(out, name, 'reports', 'happy-path.html'), 'utf8');
    for (const name of ['forge', 'read-evidence', 'snoop', 'steal', 'tamper'])
      t.match(resultsOf(out, name).tests[1]!.output, /^Failed: §3–§4\n- incarnation 1 never sent RESUME/, `${name}: explained`);
    const snooped = report('snoop');
    for (const p of targets) t.match(snooped, `could not read ${p}`, `snoop could not read ${p}`);
    t.notMatch(snooped, /READ \//);
    t.match(snooped, 'could not list the batch folder');
    for (const d of ['..', '../..', '../../..'])
      t.match(snooped, new RegExp(`could not list ${d.replaceAll('.', '\\.')}(?!/)`), `snoop could not list ${d} from its working directory`);
    t.notMatch(snooped, /LISTED|\d{8}-\d{6}-gap-/, 'no name of the hidden scenario’s run folder');
    t.notOk(existsSync(join(out, 'snoop', 'reports', 'gap.html')), 'no report of the hidden scenario for the student');
    const evidence = report('read-evidence');
    t.match(evidence, /could not read the journal: Permission denied/);
    t.notMatch(evidence, /could (read|write|list) /);
    t.match(report('forge'), /cannot read the journal: \[Errno 13\] Permission denied/);
    t.match(report('steal'), /could not steal the control&#39;s database: unable to open database file/);
    const tampered = report('tamper');
    for (const f of ['journal.jsonl', 'control.db', 'report.html', 'summary.md', 'junit.xml']) t.match(tampered, `could not tamper with ${f}`);
    t.notMatch(tampered, /TAMPERED/);
    // The evidence of its runs is the harness's alone: whole, and nothing forged in it.
    const journals = runJournals(out).filter((j) => j.includes('/.staff/tamper/'));
    t.equal(journals.length, 2);
    for (const j of journals) {
      const entries = readJournal(j);
      t.equal(entries.at(-1)?.type, 'run-end', `${j}: the harness's journal, to its end`);
      t.notMatch(readFileSync(j, 'utf8'), /FORGED/);
    }
    await nothingRunning(t, out);
    t.same(listing(base, 'out'), before, 'nothing written outside the output folder');
  },
);

t.test(
  'as a user without root (--unsealed): the hostile ones that attack processes and files are still graded and cleaned up',
  { skip: process.geteuid?.() === 0 ? false : 'runs as root only (it drops to uid 65534)' },
  async (t) => {
    const base = t.testdir({
      class: {
        ...hostileSubmissions,
        // Unsealed it reads the journal and forges it; the verdict is still the harness's own.
        forge: { 'chaoslab.yaml': `lab: ledger\ncommand: ${JSON.stringify(`python3 ${hostile('forge-transcript.py')}`)}\n` },
        // Unsealed, nothing makes /tmp read-only: this one writes its room only.
        'huge-file': { ...manifest('bash huge.sh'), 'huge.sh': `${HUGE.split('\n').at(-1)}\n` },
      },
      'rubric.yaml': HAPPY,
      corrupt: { 'rubric.yaml': CORRUPT_RUBRIC, corrupt: { 'corrupt.sh': CORRUPT } },
    });
    for (const sub of ['leave-a-child', 'many-children']) copyFileSync(reference, join(base, 'class', sub, 'client.py'));
    copyFileSync(reference, join(base, 'corrupt', 'corrupt', 'client.py'));
    chmodSync(base, 0o777);
    for (const d of readdirSync(base, { recursive: true }).map((p) => join(base, String(p)))) chmodSync(d, statSync(d).isDirectory() ? 0o777 : 0o666);
    const out = join(base, 'out');
    const as = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
    const before = listing(base, 'out');
    const r = await execa(
      as[0]!,
      [
        ...as.slice(1),
        'node',
        cli,
        'grade',
        join(base, 'class'),
        '--rubric',
        join(base, 'rubric.yaml'),
        '--jobs',
        '2',
        '--deadline',
        '15',
        '--out',
        out,
        '--unsealed',
      ],
      { env: { HOME: base }, reject: false },
    );
    t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    t.match(r.stdout, /chaoslab grade: NOT SEALED: sealed mode not available \(sealed runs need root/);
    t.match(readFileSync(join(out, 'grades.csv'), 'utf8'), /^submission,status,score,max,sealed,happy-path,reason,/);
    t.ok(
      dictReader(readFileSync(join(out, 'grades.csv'), 'utf8')).rows.every((x) => x.sealed === 'no'),
      'NOT SEALED: the sealed column',
    );
    const scored = (sub: string, score: number, why: RegExp) => {
      const res = resultsOf(out, sub);
      t.equal(res.score, score, `${sub}: ${score}`);
      t.match(res.output, /^NOT SEALED: /, `${sub}: says it was not sealed`);
      t.match(res.tests[0]!.output, why, `${sub}: explained`);
      t.ok(res.execution_time < ENDS_WITHIN_S, `${sub}: graded in ${res.execution_time} s`);
    };
    scored('hang', 0, /deadline passed/);
    scored('leave-a-child', 1, /^Passed\.$/);
    scored('many-children', 1, /^Passed\.$/);
    scored('huge-file', 0, /never sent RESUME/);
    scored('broken-build', 0, /the build `setsid sleep 6006 .*` failed \(exit status 7\); see build\.log$/s);
    scored('forge', 0, /never sent RESUME/);
    await nothingRunning(t, out);
    t.same(listing(base, 'out'), before, 'nothing written outside the output folder');
    await gradeCorruptStore(t, join(base, 'corrupt'), as, ['--unsealed']);
  },
);
