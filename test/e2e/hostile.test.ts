// A consumer under test is untrusted code. Each attack a student who wants the points could try
// runs here as a hostile consumer against the real CLI, unsealed (`--no-seal`: the weakest
// setting, as on a machine without root); each must fail or be contained, with nothing left
// behind. The same attacks sealed are in test/e2e/sealed.test.ts.
import { execa } from 'execa';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chaoslab, onlyRun, root, survivors } from '../helpers/cli.js';

t.setTimeout(600_000);

const hostile = (name: string) => join(root, 'test', 'fixtures', 'hostile', name);

t.test('forged transcript and forged verdict: judged from what the harness saw, not from the file', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'ack-crash', '--no-seal', '--reports', reports, '--consumer', `python3 ${hostile('forge-transcript.py')}`]);
  t.equal(result.exitCode, 1, `FAIL, not PASS\n${result.stdout}\n${result.stderr}`);
  t.match(result.stdout, /FAIL {2}ack-crash/);
  t.match(result.stdout, /incarnation 1 never sent RESUME to the publisher/);
  // The journal file now holds a line that is no entry: read it as text, not with readJournal.
  const dir = join(reports, readdirSync(reports).find((d) => d !== 'latest')!);
  const file = readFileSync(join(dir, 'journal.jsonl'), 'utf8');
  t.match(file, /"headline": ?"forged"/, 'the forgery is in the file (this run was not sealed) …');
  t.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /— FAIL/, '… and no report believed it');
  t.match(readFileSync(join(dir, 'report.html'), 'utf8'), /data-status="fail"/);
  const reRender = await chaoslab(['report', dir]);
  t.equal(reRender.exitCode, 2, 're-rendering the tampered file is refused');
  t.match(reRender.stderr, /journal\.jsonl:\d+: not a journal entry .*: null/, 'naming the line');
});

t.test('the harness killed by its consumer: toxiproxy-server and the consumer die with it', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'happy-path', '--no-seal', '--reports', reports, '--consumer', hostile('kill-parent.sh')]);
  t.equal(result.signal, 'SIGKILL', 'the harness was killed (an unsealed consumer runs as the same user)');
  const { journal } = onlyRun(reports);
  await new Promise((r) => setTimeout(r, 500));
  t.same(
    survivors(journal).filter((s) => !s.startsWith('control')),
    [],
    'no toxiproxy-server and no consumer process left (the kernel killed them with the harness)',
  );
});

t.test('a 10 MB line without LF: the journal keeps a bounded part and counts the rest', async (t) => {
  const dir = t.testdir({
    reports: {},
    'flood.py': [
      'import os, socket',
      "s = socket.create_connection((os.environ['CHAOSLAB_HOST'], int(os.environ['CHAOSLAB_PORT'])))",
      'try:',
      "    s.sendall(b'x' * 10_000_000)",
      'except OSError:',
      '    pass',
      '',
    ].join('\n'),
  });
  const reports = join(dir, 'reports');
  const result = await chaoslab(['run', 'ack-crash', '--reports', reports, '--consumer', `python3 ${join(dir, 'flood.py')}`]);
  t.equal(result.exitCode, 1);
  const run = onlyRun(reports);
  const size = readFileSync(join(run.dir, 'journal.jsonl')).length;
  t.ok(size < 9 * 1024 * 1024, `journal ${size} bytes, under the per-connection bound`);
  const lines = run.journal.filter((e) => e.type === 'wire' && e.kind === 'recv');
  t.ok(
    lines.every((e) => e.type === 'wire' && 'line' in e && e.line.length <= 4096),
    'every journaled line is at most 4096 characters',
  );
  t.ok(
    lines.some((e) => e.type === 'wire' && (e.truncated ?? 0) > 0),
    'and says how much was cut',
  );
});

t.test('scenario files are size-capped before parsing', async (t) => {
  const dir = t.testdir();
  const file = join(dir, 'huge.yaml');
  writeFileSync(file, `name: huge\ndescription: x\nevents:\n  deltas: [${Array.from({ length: 400_000 }, () => '-1000').join(', ')}]\n`);
  const result = await chaoslab(['validate', file]);
  t.equal(result.exitCode, 2);
  t.match(result.stderr, /huge\.yaml:1:1: the file is \d+ bytes; a scenario file may have at most 1048576/);
});

t.test('a reports folder that cannot be made is a clear error, at once', async (t) => {
  const result = await chaoslab(['run', 'ack-crash', '--reports', '/proc/x'], { timeout: 30_000 });
  t.equal(result.exitCode, 2);
  t.match(result.stderr, /cannot create the reports folder \/proc\/x: \/proc\/x: ENOENT/);
  t.ok((result.durationMs ?? 0) < 20_000, 'at once, not after a spin');
});

t.test('make passes NAME and CONSUMER as data, not as shell code', async (t) => {
  const dir = t.testdir();
  const marker = join(dir, 'injected');
  const result = await execa('make', ['--no-print-directory', 'scenario', `NAME=x"; touch ${marker}; : "`], { cwd: root, reject: false, env: { CI: '' } });
  t.not(result.exitCode, 0);
  t.match(result.stderr, /unknown scenario "x"; touch /);
  t.same(readdirSync(dir), [], 'the injected command did not run');
});

t.test('a consumer stopped at its hook with its store locked: the harness says it ran past its hook', async (t) => {
  const reports = t.testdir();
  const consumer = `python3 ${hostile('stop-holding-lock.py')}`;
  const result = await chaoslab(['run', 'mid-transaction-visibility', '--no-seal', '--reports', reports, '--consumer', consumer]);
  t.equal(result.exitCode, 1, `FAIL\n${result.stdout}\n${result.stderr}`);
  const { journal } = onlyRun(reports);
  t.same(survivors(journal), [], 'nothing left running');
  const verdict = journal.find((e) => e.type === 'verdict');
  const findings = verdict?.type === 'verdict' ? verdict.verdict.findings : [];
  const locked = findings.find((f) => f.code === 'unreadable-mid-run');
  t.match(
    locked?.text,
    /^while incarnation 1 was stopped, the store was locked for writing \(a transaction still open\) while the process was stopped at its hook: the process ran past its hook/,
  );
  t.match(locked?.text, /\[database is locked \(SQLITE_BUSY\)\]$/, "SQLite's words kept as evidence");
  t.match(result.stdout, /the process ran past its hook/, 'the console says it too');
});
