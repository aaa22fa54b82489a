// The server under test sealed like a consumer (docs/sandbox.md, "The server under test"): the
// reference server passes feed-server-snapshot-race sealed, as a uid of its own (not the
// consumers', not the harness's), in its own room, its firewall refusing nothing. A hostile
// server that tries to write, truncate, delete or replace the outbox, read the evidence, reach
// Toxiproxy's API and the probe's proxy, leave a daemon and ignore SIGTERM: every attempt fails,
// the run ends (FAIL, naming what it tried), the outbox and the journal are intact, the probe's
// store matches the chain, and nothing of it is left running. Skips where this machine cannot
// seal (not root, no namespaces, no nftables or tini). The worker runs from dist/: build first.
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { loadScenario } from '../../../../../harness/catalogue/load.js';
import { type JournalEntry, readJournal } from '../../../../../harness/record/journal.js';
import { runScenario } from '../../../../../harness/run/runner.js';
import { probeSealing } from '../../../../../harness/sandbox/probe.js';
import { UID_BASE, UID_SLOTS } from '../../../../../harness/sandbox/uids.js';
import { survivors } from '../../../../helpers/cli.js';

t.setTimeout(600_000);
const probe = await probeSealing();
const skip = probe.available ? false : `sealing is not available here: ${probe.reason}`;

const ROOT = join(import.meta.dirname, '../../../../..');
const scenario = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-server-snapshot-race.yaml'));
const HOSTILE = `python3 ${join(ROOT, 'test', 'fixtures', 'hostile', 'server-hostile.py')}`;
/** The hostile server's daemon's arguments. */
const DAEMON = 'sleep 3131.31';

/** Processes of `uid` whose environment names `runDir`, or whose command line is the hostile's daemon. */
function leftovers(uid: number, runDir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const owner = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (cmdline === DAEMON || (owner === uid && readFileSync(`/proc/${pid}/environ`, 'utf8').includes(runDir))) out.push(`${pid} ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const sealedRun = async (t: Test, server?: string, reportsDir = t.testdir()) => {
  const journal: JournalEntry[] = [];
  const result = await runScenario({
    scenario,
    cwd: ROOT,
    reportsDir,
    seal: 'on',
    ...(server ? { serverCommand: server } : {}),
    onJournal: (entry) => journal.push(entry),
  });
  const started = journal.find((e) => e.type === 'process-start' && e.role === 'server');
  const serverUid = started?.type === 'process-start' ? started.sealed?.uid : undefined;
  const consumerSeal = journal.find((e) => e.type === 'seal' && e.role === undefined);
  const serverSeal = journal.find((e) => e.type === 'seal' && e.role === 'server');
  t.ok(serverUid !== undefined && serverUid >= UID_BASE && serverUid < UID_BASE + UID_SLOTS, `the server ran sealed as a slot uid (${serverUid})`);
  t.not(serverUid, consumerSeal?.type === 'seal' ? consumerSeal.uid : undefined, "not the consumers' (the probes') uid");
  t.not(serverUid, process.getuid?.(), "not the harness's");
  t.equal(serverSeal?.type === 'seal' && serverSeal.uid, serverUid, "the server's firewall counters are its uid's");
  t.notOk(
    journal.some((e) => e.type === 'process-start' && e.role === 'control' && e.sealed),
    'the probe is the harness’s trusted reference, not sealed',
  );
  t.same(survivors(journal), [], 'no server, probe or toxiproxy process left');
  t.same(leftovers(serverUid ?? -1, result.runDir), [], "no process of the server's uid left, no daemon");
  t.match(
    journal.filter((e) => e.type === 'leftovers' && e.uid === serverUid),
    [{ when: 'before' }, { when: 'after', found: [] }],
    "its uid's leftovers looked for before and after",
  );
  return { result, journal, serverSeal };
};

t.test('the reference server passes the snapshot race sealed', { skip }, async (t) => {
  const { result, journal, serverSeal } = await sealedRun(t);
  t.equal(result.status, 'pass', `${result.verdict?.headline ?? result.error}\n${JSON.stringify(result.verdict?.findings, null, 1)}`);
  t.match(serverSeal, { allowed: { packets: Number }, rejected: { packets: 0 } }, 'its firewall refused nothing');
  t.ok(serverSeal?.type === 'seal' && serverSeal.allowed.packets > 0, 'and let its answers through');
  t.match(
    journal.find((e) => e.type === 'room' && e.name === 'server'),
    { full: false },
    'its room, journaled',
  );
  t.match(
    journal.find((e) => e.type === 'run-start'),
    { sealing: /sealed/ },
  );
});

t.test('a run folder under /tmp: the outbox is bound back read-only under the private /tmp', { skip }, async (t) => {
  // The server's /tmp is a fresh tmpfs of its own (confine.ts): the run folder there is covered.
  const reports = mkdtempSync(join(tmpdir(), 'chaoslab-server-seal-'));
  chmodSync(reports, 0o755);
  t.teardown(() => rmSync(reports, { recursive: true, force: true }));
  const { result } = await sealedRun(t, undefined, reports);
  t.equal(result.status, 'pass', `${result.verdict?.headline ?? result.error}\n${JSON.stringify(result.verdict?.findings, null, 1)}`);
});

t.test('a hostile server changes nothing, reaches nothing, leaves nothing', { skip }, async (t) => {
  const { result, journal } = await sealedRun(t, HOSTILE);
  t.equal(result.status, 'fail', result.verdict?.headline ?? result.error ?? '');
  const codes = result.verdict?.findings.map((f) => f.code) ?? [];
  t.ok(codes.includes('server-reached-out'), `the firewall's refusals are a finding: ${codes.join(', ')}`);
  t.match(
    result.verdict?.findings.find((f) => f.code === 'server-reached-out')?.text,
    /the server under test tried to reach out: the sealed run's firewall refused \d+ packets/,
  );
  t.notOk(
    codes.some((c) => c.startsWith('lost') || c === 'wrong-balance' || c.startsWith('probe-')),
    'the probe got the whole chain from the outbox: nothing was lost or changed',
  );
  const exit = journal.find((e) => e.type === 'process-exit' && e.role === 'server');
  t.match(exit, { killedBy: 'harness' }, 'it ignored SIGTERM and was killed');
  const stderr = exit?.type === 'process-exit' ? exit.stderrTail : '';
  const attacks = stderr.split('\n').filter((line) => line.startsWith('ATTACK '));
  t.same(
    attacks.filter((line) => /: DONE/.test(line)),
    [],
    'no attack worked',
  );
  for (const what of ['outbox sql write', 'outbox append', 'outbox truncate', 'wal append', 'shm append', 'outbox delete', 'outbox symlink', 'journal read'])
    t.ok(
      attacks.some((line) => line.startsWith(`ATTACK ${what}: refused`)),
      `${what}: refused`,
    );
  const ports = /ATTACK ports seen listening: \[([\d, ]*)\]/.exec(stderr)?.[1]?.split(', ') ?? [];
  t.ok(ports.length >= 2, `it saw Toxiproxy's API and the probe's proxy listening (${ports.join(', ')})`);
  for (const port of ports)
    t.ok(
      attacks.some((line) => line.startsWith(`ATTACK connect 127.0.0.1:${port}: refused`)),
      `port ${port}: refused`,
    );

  // The evidence: the outbox is still the harness's file, whole; the journal reads back.
  const outbox = join(result.runDir, 'outbox.db');
  const st = lstatSync(outbox);
  t.ok(st.isFile() && st.uid === 0, 'the outbox is still a regular file of root’s');
  const db = new Database(outbox, { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  t.ok((db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n > 0, 'its rows are there');
  t.ok(
    readJournal(join(result.runDir, 'journal.jsonl')).some((e) => e.type === 'verdict'),
    'the journal file reads back to its verdict',
  );
});

t.test("a server that locks the outbox against the harness's writer: a FAIL naming it, not an ERROR", { skip }, async (t) => {
  const locker = `python3 ${join(ROOT, 'test', 'fixtures', 'hostile', 'server-lock-outbox.py')}`;
  const { result, journal } = await sealedRun(t, locker);
  const started = journal.find((e) => e.type === 'process-start' && e.role === 'server');
  const uid = started?.type === 'process-start' ? started.sealed?.uid : undefined;
  t.equal(result.status, 'fail', result.verdict?.headline ?? result.error ?? '');
  t.same(
    result.verdict?.findings.map((f) => f.code),
    ['outbox-locked'],
    'the lock is the finding, not what the probe then missed',
  );
  t.match(
    result.verdict?.headline,
    new RegExp(`the writer's own lock bytes were held by: pid \\d+ \\(python3, uid ${uid}\\): POSIX READ on outbox\\.db-shm bytes 120-127`),
  );
  const locked = journal.find((e) => e.type === 'outbox-locked');
  t.ok(
    locked?.type === 'outbox-locked' && locked.holders.some((h) => h.uid === uid && h.file.endsWith('outbox.db-shm') && h.range === '120-127'),
    `journaled with who held which bytes: ${JSON.stringify(locked)}`,
  );
  const db = new Database(join(result.runDir, 'outbox.db'), { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'the outbox is whole');
});
