// The attacks that sealing stops, as hostile consumers against the real CLI in sealed mode: each
// must fail or be contained, with the finding named, and nothing left behind (no process of the
// slot uids, no namespace holder). Unsealed, the one thing still caught is going around the proxy,
// through /proc. Skips with the probe's reason where this machine cannot seal (not root, no
// namespaces, no nftables or tini).
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { readJournal } from '../../harness/record/journal.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { UID_BASE, UID_SLOTS } from '../../harness/sandbox/uids.js';
import { chaoslab, onlyRun, root, survivors } from '../helpers/cli.js';

t.setTimeout(600_000);
const probe = await probeSealing();
const sealedOnly = probe.available ? false : `sealing is not available here: ${probe.reason}`;

const hostile = (name: string) => join(root, 'test', 'fixtures', 'hostile', name);

/**
 * Processes of `uids` still running whose environment names `runDir` (this run's leftovers: the
 * uid is released at the end of the run, and another harness may take it at once).
 */
function leftovers(uids: Set<number>, runDir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (uids.has(uid) && readFileSync(`/proc/${pid}/environ`, 'utf8').includes(runDir))
        out.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function sealedRun(t: Test, scenario: string, consumer: string, extra: string[] = []) {
  const reports = t.testdir();
  const result = await chaoslab(['run', scenario, '--seal', '--reports', reports, '--consumer', consumer, ...extra]);
  const run = onlyRun(reports);
  const consumerErr = run.journal.flatMap((e) => (e.type === 'process-exit' && e.role === 'consumer' ? [e.stderrTail] : [])).join('');
  t.same(survivors(run.journal), [], 'no consumer, control or toxiproxy-server process left');
  const uids = new Set(run.journal.flatMap((e) => (e.type === 'process-start' && e.sealed ? [e.sealed.uid] : [])));
  t.ok(
    [...uids].every((uid) => uid >= UID_BASE && uid < UID_BASE + UID_SLOTS),
    `slot uids ${[...uids].join(', ')}`,
  );
  t.same(leftovers(uids, run.dir), [], "no process of the run's uid left (daemons died with the PID namespace)");
  return { result, ...run, consumerErr };
}

t.test('sealed: the run says it was sealed, and an honest consumer still passes', { skip: sealedOnly }, async (t) => {
  const { result, journal } = await sealedRun(t, 'ack-crash', 'python3 consumer/ledger/python/client.py');
  t.equal(result.exitCode, 0, result.stdout);
  t.match(journal[0], { type: 'run-start', sealing: /^sealed mode on/ });
  t.match(
    journal.find((e) => e.type === 'process-start' && e.role === 'consumer'),
    { sealed: { uid: Number } },
  );
});

t.test("sealed: earlier runs' reports are closed to a later consumer (modes asserted)", { skip: sealedOnly }, async (t) => {
  const reports = t.testdir();
  const honest = await chaoslab(['run', 'happy-path', '--seal', '--reports', reports, '--consumer', 'python3 consumer/ledger/python/client.py']);
  t.equal(honest.exitCode, 0, honest.stdout);
  const { dir } = onlyRun(reports);
  const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);
  t.equal(mode(reports), '711', 'the reports folder: passable, not listable');
  t.equal(mode(dir), '700', 'a finished run folder is closed');
  for (const f of ['summary.md', 'report.html', 'junit.xml', 'journal.jsonl', 'control.db']) t.equal(mode(join(dir, f)), '600', `${f}: 0600`);
  t.equal(statSync(join(dir, 'rooms', 'consumer')).uid, 0, 'its room was handed back');
  // A later consumer (the same slot uid) reads every report of the reports folder it can name.
  const later = await chaoslab(['run', 'happy-path', '--seal', '--reports', reports, '--consumer', `bash ${hostile('read-reports.sh')} ${reports}`]);
  t.equal(later.exitCode, 1, later.stdout);
  const journal = readJournal(join(reports, 'latest', 'journal.jsonl'));
  const err = journal.flatMap((e) => (e.type === 'process-exit' && e.role === 'consumer' ? [e.stderrTail] : [])).join('');
  for (const f of ['*/summary.md', 'latest/summary.md', 'latest/report.html', 'latest/junit.xml']) t.match(err, `could not read ${reports}/${f}`);
  t.match(err, 'could not list the reports folder');
  t.notMatch(err, /READ |LISTED/, 'nothing of an earlier run was reached');
});

t.test('sealed: the run plan, the journal and the control database are out of reach', { skip: sealedOnly }, async (t) => {
  const { result, consumerErr } = await sealedRun(t, 'ack-crash', `python3 ${hostile('read-evidence.py')}`);
  t.equal(result.exitCode, 1);
  t.match(consumerErr, /could not read the journal: Permission denied/);
  t.match(consumerErr, /could not write the control database: (Permission denied|No such file or directory)/);
  t.match(consumerErr, /could not list the run folder: Permission denied/);
  t.notMatch(consumerErr, /^could (read|write|list)/m, 'nothing was reached');
});

t.test('sealed: a forged transcript and verdict cannot even be written', { skip: sealedOnly }, async (t) => {
  const { result, consumerErr } = await sealedRun(t, 'ack-crash', `python3 ${hostile('forge-transcript.py')}`);
  t.equal(result.exitCode, 1);
  t.match(result.stdout, /FAIL {2}ack-crash/);
  t.match(consumerErr, /cannot read the journal: .*Permission denied/);
});

t.test("sealed: stealing the control's database fails; the mutant is caught for its reason", { skip: sealedOnly }, async (t) => {
  const { result } = await sealedRun(t, 'duplicate-delivery', `node dist/consumer/ledger/mutants/no-dedupe.js; python3 ${hostile('steal-control.py')}`);
  t.equal(result.exitCode, 1);
  t.match(result.stdout, /seq 3 applied twice/);
});

t.test('sealed: knocking on other ports is refused by the firewall and reported', { skip: sealedOnly }, async (t) => {
  const { result, journal, consumerErr } = await sealedRun(t, 'ack-crash', `python3 ${hostile('knock-around.py')}`);
  t.equal(result.exitCode, 1, 'FAIL, although the consumer then did its job through the proxy');
  t.match(consumerErr, /127\.0\.0\.1:8474: Connection refused/);
  t.match(consumerErr, /::1:8474: Connection refused/);
  t.match(
    journal.find((e) => e.type === 'seal'),
    { rejected: { packets: Number } },
  );
  t.match(
    journal.find((e) => e.type === 'verdict'),
    { verdict: { findings: [{ code: 'around-proxy' }] } },
  );
  t.match(result.stdout, /tried to connect around the proxy/);
});

t.test('sealed: daemons, double forks, SIGSTOP and SIGKILL to the parent are contained', { skip: sealedOnly }, async (t) => {
  const { result, journal } = await sealedRun(t, 'ack-crash', hostile('escape.sh'));
  t.equal(result.exitCode, 0, `the harness was neither stopped nor killed, and judged the run\n${result.stdout}`);
  t.match(journal.at(-1), { type: 'run-end', status: 'pass' });
});

t.test('unsealed: a consumer that goes around the proxy is caught through /proc', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'slow-link', '--no-seal', '--reports', reports, '--consumer', hostile('bypass.sh')]);
  const { journal } = onlyRun(reports);
  t.equal(result.exitCode, 1, 'slow-link would have passed: the fault never reached the consumer');
  t.match(result.stdout, /consumer incarnation 1 connected around the proxy: the connection came from pid \d+ \(python3\), not from Toxiproxy/);
  t.match(journal[0], { type: 'run-start', sealing: /^sealed mode off \(asked\)/ });
  t.match(
    journal.find((e) => e.type === 'wire' && e.kind === 'open' && e.owner?.role === 'consumer'),
    { peer: { via: 'direct', comm: 'python3' } },
  );
  t.same(survivors(journal), []);
});

t.test('sealed: a command the consumer uid cannot start fails the run at once, naming why', { skip: sealedOnly }, async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'ack-crash', '--seal', '--reports', reports, '--consumer', 'no-such-consumer-binary']);
  t.equal(result.exitCode, 1, 'the consumer failed (exit 1), not the harness');
  t.match(
    result.stdout,
    /your command could not be started: it runs sealed as uid \d+, which cannot reach what it needs: no-such-consumer-binary is not found/,
  );
  const { journal } = onlyRun(reports);
  t.notOk(
    journal.some((e) => e.type === 'process-start'),
    'nothing was started',
  );
  t.match(
    journal.find((e) => e.type === 'verdict'),
    { verdict: { status: 'fail', findings: [{ code: 'cannot-start' }] } },
  );
});

t.test('sealed: an output folder the consumer uid cannot pass is refused before any run, with its reason', { skip: sealedOnly }, async (t) => {
  // A mktemp -d folder (0700) above --out: the store, read with the consumer's uid, would be
  // unreadable, and an honest consumer would FAIL (SQLITE_CANTOPEN). Refused instead, as grade does.
  const closed = mkdtempSync(join(tmpdir(), 'chaoslab-out-'));
  t.teardown(() => rmSync(closed, { recursive: true, force: true }));
  for (const args of [
    ['run', 'ack-crash'],
    ['run', 'ack-crash', 'ack-lost', '--jobs', '2'],
    ['chaos', '--runs', '1'],
  ]) {
    const result = await chaoslab([...args, '--seal', '--reports', join(closed, 'out')]);
    t.equal(result.exitCode, 2, `${args.join(' ')}: exit 2`);
    t.match(
      result.stderr,
      `chaoslab: refusing to run sealed here: uid 61000 cannot reach the output folder ${join(closed, 'out')}`,
      `${args.join(' ')}: names the folder`,
    );
    t.match(result.stderr, `${closed} is not searchable by it (owner 0:0, mode 0700)`);
    t.match(result.stderr, 'or run with --no-seal');
    t.notOk(
      readdirSync(closed, { recursive: true }).some((f) => String(f).endsWith('journal.jsonl')),
      'no run was started',
    );
  }
  const unsealed = await chaoslab(['run', 'ack-crash', '--no-seal', '--reports', join(closed, 'out')]);
  t.equal(unsealed.exitCode, 0, 'unsealed, the same folder serves: the harness reads as itself');
});

/** Processes whose working folder is `dir` (a place the CLI opened there and left: its worker, Toxiproxy, namespace holder). */
function runningIn(dir: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === dir ? [`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')}`] : [];
      } catch {
        return []; // gone meanwhile, or not ours to read
      }
    });
}

t.test('sealed: a run command line that never runs closes the place its entry point opened early', { skip: sealedOnly }, async (t) => {
  // The entry point opens the first run's namespace and worker before the command line is
  // parsed (harness/run/early-place.ts); a usage error must not leave them, nor hang.
  const cwd = t.testdir();
  const bad = await chaoslab(['run', 'ack-crash', '--seal', '--no-such-option'], { cwd, timeout: 60_000 });
  t.equal(bad.exitCode, 2, bad.stderr);
  t.match(bad.stderr, "unknown option '--no-such-option'");
  const unknown = await chaoslab(['run', 'no-such-scenario', '--seal'], { cwd, timeout: 60_000 });
  t.equal(unknown.exitCode, 2, unknown.stderr);
  t.same(runningIn(cwd), [], 'no worker, Toxiproxy or namespace holder left running in its folder');
});
