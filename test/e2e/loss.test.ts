// Packet loss through the CLI: sealed, a short loss scenario passes with its counters in the
// report; where runs are not sealed (`--no-seal`, or a non-root user whose probe fails) the same
// scenario is SKIPPED with the reason, exit 0, and nothing of it ran.
import t from 'tap';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { checkAccess } from '../../harness/sandbox/room.js';
import { findTool } from '../../harness/sandbox/tools.js';
import { leaseUid } from '../../harness/sandbox/uids.js';
import { chaoslab, cli, onlyRun, root } from '../helpers/cli.js';
import { sealingSkip } from '../helpers/sandbox.js';

t.setTimeout(600_000);
const skip = await sealingSkip();

t.test('sealed: lossy-link passes under real loss, the report shows the counters within bounds', { skip }, async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'lossy-link', '--seal', '--reports', reports]);
  t.equal(result.exitCode, 0, `passes\n${result.stdout.slice(-2000)}`);
  const { dir, journal } = onlyRun(reports);
  const loss = journal.find((e) => e.type === 'loss');
  t.match(loss, { type: 'loss', name: 'lossy-link', percent: 10 });
  t.ok(loss?.type === 'loss' && loss.dropped.packets > 0, 'packets were dropped');
  const summary = readFileSync(join(dir, 'summary.md'), 'utf8');
  t.match(summary, /## Packet loss \(nftables counters\)/);
  t.match(summary, /\| lossy-link \| 10 % \| \d+ \| \d+ \| \d+ \| \d+\.\d % \| \d+\.\d % – \d+\.\d % \|/);
});

t.test('--no-seal: SKIPPED with the reason, exit 0, in --json too', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'lossy-link', '--no-seal', '--json', '--reports', reports]);
  t.equal(result.exitCode, 0, 'a skip is no failure');
  const doc = JSON.parse(result.stdout) as { status: string; counts: Record<string, number>; runs: { status: string; headline: string }[] };
  t.equal(doc.status, 'skipped');
  t.equal(doc.counts.skipped, 1);
  const [run] = doc.runs;
  t.equal(run!.status, 'skipped');
  t.match(run!.headline, /packet loss \(fault lossy-link\) needs a sealed run .*sealed mode off \(asked\)/);
  t.match(result.stderr, /SKIPPED {2}lossy-link/);
  const { journal } = onlyRun(reports);
  t.notOk(
    journal.some((e) => e.type === 'process-start' || e.type === 'toxiproxy'),
    'never run without its loss',
  );
});

t.test(
  "as a non-root user, where the probe fails: SKIPPED with the probe's reason, exit 0",
  { skip: process.geteuid?.() === 0 ? false : 'needs root to become another user' },
  async (t) => {
    const lease = leaseUid(0);
    t.teardown(() => lease.release());
    const unreadable = [root, process.execPath].map((p) => checkAccess(p, lease.uid, lease.gid, 'read')).find(Boolean);
    if (unreadable) return t.plan(0, `the project is not readable by uid ${lease.uid}: ${unreadable.message}`);
    const reports = mkdtempSync(join(tmpdir(), 'chaoslab-loss-'));
    chmodSync(reports, 0o777);
    t.teardown(() => rmSync(reports, { recursive: true, force: true }));
    const setpriv = findTool('setpriv')!;
    const result = await execa(
      setpriv,
      [`--reuid=${lease.uid}`, `--regid=${lease.gid}`, '--clear-groups', '--', process.execPath, cli, 'run', 'lossy-link', '--json', '--reports', reports],
      { cwd: root, env: { HOME: reports, PATH: process.env.PATH ?? '/usr/bin:/bin' }, reject: false, timeout: 120_000 },
    );
    t.equal(result.exitCode, 0, `exit 0 (${result.stderr.slice(-1000)})`);
    const [run] = (JSON.parse(result.stdout) as { runs: { status: string; headline: string }[] }).runs;
    t.equal(run!.status, 'skipped');
    t.match(run!.headline, new RegExp(`needs a sealed run .*sealed runs need root .*running as uid ${lease.uid}`));
  },
);
