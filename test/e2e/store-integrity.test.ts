// Issue 28, part 1: the checker reads only what the consumer itself could have written, runs
// none of its code, and reads within bounds. Each attack is a hostile consumer
// (test/fixtures/hostile/store-tamper.py: a real consumer, then something else left at
// CHAOSLAB_DB) against the real CLI, sealed; each fails with the finding that says what the store
// was, quickly, and nothing the store pointed at reaches any output. Skips where this machine
// cannot seal (not root, no namespaces).
import Database from 'better-sqlite3';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { chaoslab, onlyRun, root, survivors } from '../helpers/cli.js';

t.setTimeout(300_000);
const probe = await probeSealing();
const sealedOnly = probe.available ? false : `sealing is not available here: ${probe.reason}`;

const tamper = (mode: string, consumer = 'node dist/consumer/ledger/typescript/client.js') =>
  `python3 ${join(root, 'test', 'fixtures', 'hostile', 'store-tamper.py')} ${mode} -- ${consumer}`;

async function sealedRun(t: Test, scenario: string, consumer: string, extra: string[] = []) {
  const reports = t.testdir();
  const started = Date.now();
  const result = await chaoslab(['run', scenario, '--seal', '--reports', reports, '--consumer', consumer, ...extra], { timeout: 120_000 });
  const seconds = (Date.now() - started) / 1000;
  const run = onlyRun(reports);
  t.same(survivors(run.journal), [], 'no consumer, control or toxiproxy-server process left');
  const verdict = run.journal.find((e) => e.type === 'verdict');
  return { result, seconds, ...run, verdict: verdict?.type === 'verdict' ? verdict.verdict : undefined };
}

/** Every output of a run, as text: the console, summary.md, report.html, junit.xml and the journal. */
function everyOutput(run: { dir: string }, result: { stdout: string; stderr: string }): Record<string, string> {
  const file = (name: string) => readFileSync(join(run.dir, name), 'utf8');
  return {
    console: result.stdout + result.stderr,
    'summary.md': file('summary.md'),
    'report.html': file('report.html'),
    'junit.xml': file('junit.xml'),
    'journal.jsonl': file('journal.jsonl'),
  };
}

t.test('a double-counting consumer that leaves a symlink to the control store fails for the link, not PASS', { skip: sealedOnly }, async (t) => {
  const { result, verdict } = await sealedRun(t, 'duplicate-delivery', tamper('symlink ../../control.db', 'node dist/consumer/ledger/mutants/no-dedupe.js'));
  t.equal(result.exitCode, 1, `FAIL\n${result.stdout}`);
  t.match(verdict, {
    status: 'fail',
    headline: /^consumer\.db is a symbolic link \(to \.\.\/\.\.\/control\.db\): the harness reads only a regular file that the consumer itself wrote/,
  });
  t.same(
    verdict?.findings.map((f) => f.code),
    ['store-refused'],
    'one finding: nothing else is claimed of a store that was not read',
  );
  t.match(result.stdout, /consumer\.db is a symbolic link \(to \.\.\/\.\.\/control\.db\)/);
});

t.test('the feed lab: a store left as a symlink to the control store fails for the link', { skip: sealedOnly }, async (t) => {
  const { result, verdict } = await sealedRun(t, 'feed-happy-path', tamper('early-symlink ../../control.db', 'node dist/consumer/feed/typescript/client.js'));
  t.equal(result.exitCode, 1, `FAIL\n${result.stdout}`);
  t.match(verdict, { headline: /^consumer\.db is a symbolic link \(to \.\.\/\.\.\/control\.db\): the harness reads only a regular file/ });
  t.same(
    verdict?.findings.map((f) => f.code),
    ['store-refused'],
    'one finding',
  );
});

t.test('a symlink to a root-only database: its values reach no output', { skip: sealedOnly }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaoslab-secret-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755); // only the file's own mode keeps the consumer's uid out
  const secret = join(dir, 'secret.db');
  const db = new Database(secret);
  db.exec('CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER, total INTEGER); CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER)');
  db.exec('INSERT INTO checkpoint VALUES (1, 4, 987654321); INSERT INTO ledger VALUES (4, 987654321)');
  db.close();
  chmodSync(secret, 0o600);
  const { result, verdict, ...run } = await sealedRun(t, 'ack-crash', tamper(`symlink ${dir} secret.db`));
  t.equal(result.exitCode, 1);
  t.match(verdict, { findings: [{ code: 'store-refused', text: /consumer\.db is a symbolic link/ }] });
  for (const [name, text] of Object.entries(everyOutput(run, result))) t.notMatch(text, /987654321/, `${name}: no value of the root-only file`);
});

t.test('a named pipe for a store fails at once, no hang', { skip: sealedOnly }, async (t) => {
  const { result, verdict, seconds } = await sealedRun(t, 'ack-crash', tamper('fifo'));
  t.equal(result.exitCode, 1);
  t.match(verdict, { headline: /^consumer\.db is a named pipe \(FIFO\): the harness reads only a regular file/, findings: [{ code: 'store-refused' }] });
  t.ok(seconds < 60, `the verdict in ${seconds.toFixed(1)} s`);
});

t.test('a view bomb in place of checkpoint fails at once, never run', { skip: sealedOnly }, async (t) => {
  const { result, verdict, seconds } = await sealedRun(t, 'ack-crash', tamper('view-bomb'));
  t.equal(result.exitCode, 1);
  t.match(verdict, { headline: /^consumer\.db is not plain tables: checkpoint is a view: the harness reads plain tables only/ });
  t.ok(seconds < 60, `the verdict in ${seconds.toFixed(1)} s`);
});

t.test('a store over --store-limit fails with its size', { skip: sealedOnly }, async (t) => {
  const { result, verdict, journal } = await sealedRun(t, 'ack-crash', tamper('grow 300000'), ['--store-limit', '200KiB']);
  t.equal(result.exitCode, 1);
  t.match(verdict, { headline: /^consumer\.db is too large: store is 3\d\d KiB, the limit is 200 KiB: the harness reads a store only within its limit/ });
  t.match(journal[0], { type: 'run-start', reproduce: { command: /--store-limit 204800/ } }, 'the re-run command keeps the limit');
  const reads = journal.filter((e) => e.type === 'store-read' && e.role === 'consumer');
  t.ok(
    reads.every((e) => e.type === 'store-read' && JSON.stringify(e.store).length < 600),
    'a refused read is journaled as its refusal only',
  );
});
