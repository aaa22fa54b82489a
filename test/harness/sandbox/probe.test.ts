// The sealing probe: it tries the real thing, caches its answer, and says "not available" with a
// reason a person can act on — as a non-root user, and as root without CAP_SYS_ADMIN (a
// restricted container such as Gradescope's).
import t from 'tap';
import { decideSealing, probeSealing, type SealingProbe, sealModeFromEnv } from '../../../harness/sandbox/probe.js';
import { checkAccess } from '../../../harness/sandbox/room.js';
import { findTool } from '../../../harness/sandbox/tools.js';
import { leaseUid } from '../../../harness/sandbox/uids.js';
import { root, runTsChild, sandboxModule } from '../../helpers/sandbox.js';
import { tsLoaderFiles } from '../../helpers/ts-loader-args.js';

const probe = await probeSealing();
t.comment(`probe here: ${probe.available ? 'sealing available' : `not available: ${probe.reason}`} (${probe.tookMs} ms)`);
t.comment(`cgroups: pids=${probe.cgroups.pids ?? 'none'} memory=${probe.cgroups.memory ?? 'none'} ${probe.cgroups.notes.join('; ')}`);

const isRoot = process.geteuid?.() === 0;

t.test('the answer is computed once per process and is consistent', async (t) => {
  t.equal(await probeSealing(), probe, 'the second call returns the cached answer');
  t.type(probe.available, 'boolean');
  if (probe.available) {
    t.equal(probe.reason, undefined, 'no reason when available');
    t.ok(isRoot, 'only root can seal');
  } else {
    t.match(probe.reason, /\S/, 'a reason when not available');
  }
  const fresh = await probeSealing({ fresh: true });
  t.not(fresh, probe, 'fresh asks again');
  t.equal(fresh.available, probe.available, 'and gets the same answer');
});

t.test('as root with namespaces: sealing is available', { skip: isRoot ? false : 'not root here' }, async (t) => {
  if (!probe.available) {
    // root that cannot seal (a restricted container): the reason must say why
    t.match(probe.reason, /CAP_|failed|missing/, `root but not available: ${probe.reason}`);
    return;
  }
  t.ok(probe.tools.nft && probe.tools.tini && probe.tools.unshare && probe.tools.setpriv, 'found the programs');
  t.ok(probe.ipv6, 'the namespace loopback has ::1');
});

/** The child needs to read the project (and the test loader) as the other uid. */
function unreadableForUid(uid: number): string | undefined {
  for (const path of [root, process.execPath, ...tsLoaderFiles()]) {
    const problem = checkAccess(path, uid, uid, 'read');
    if (problem) return problem.message;
  }
  return undefined;
}

t.test('as a non-root user: not available, saying so', { skip: isRoot ? false : 'needs root to become another user' }, async (t) => {
  const lease = leaseUid(0);
  t.teardown(() => lease.release());
  const unreadable = unreadableForUid(lease.uid);
  if (unreadable) return t.plan(0, `the project is not readable by uid ${lease.uid}: ${unreadable}`);
  const setpriv = findTool('setpriv')!;
  const child = runTsChild(`const { probeSealing } = await import(${sandboxModule('probe')}); console.log(JSON.stringify(await probeSealing()));`, {
    prefix: [setpriv, `--reuid=${lease.uid}`, `--regid=${lease.uid}`, '--clear-groups', '--'],
  });
  const ran = await child.done;
  t.equal(ran.code, 0, `the child ran (${ran.stderr.slice(0, 500)})`);
  const answer = JSON.parse(ran.stdout) as SealingProbe;
  t.equal(answer.available, false);
  t.match(answer.reason, new RegExp(`need root.*uid ${lease.uid}`));
});

t.test('as root without CAP_SYS_ADMIN (a restricted container): not available, naming the capability', { skip: isRoot ? false : 'needs root' }, async (t) => {
  const setpriv = findTool('setpriv')!;
  // dropping it from the bounding set removes it from what the exec'd node gets
  const child = runTsChild(`const { probeSealing } = await import(${sandboxModule('probe')}); console.log(JSON.stringify(await probeSealing()));`, {
    prefix: [setpriv, '--bounding-set=-sys_admin', '--'],
  });
  const ran = await child.done;
  t.equal(ran.code, 0, `the child ran (${ran.stderr.slice(0, 500)})`);
  const answer = JSON.parse(ran.stdout) as SealingProbe;
  t.equal(answer.available, false);
  t.match(answer.reason, /CAP_SYS_ADMIN/);
});

t.test('decideSealing: auto follows the probe, on insists, off never seals', async (t) => {
  const yes: SealingProbe = { available: true, tools: {}, cgroups: { notes: [] }, ipv6: true, tookMs: 1 };
  const partial: SealingProbe = { ...yes, cgroups: { notes: ['no cgroup v1 memory controller mounted: sealed consumers run without a memory cap'] } };
  const no: SealingProbe = { available: false, reason: 'running as uid 1000', tools: {}, cgroups: { notes: [] }, ipv6: false, tookMs: 1 };
  t.equal(decideSealing('auto', yes).sealed, true);
  t.match(decideSealing('auto', partial).note, /without a memory cap/);
  t.equal(decideSealing('auto', no).sealed, false);
  t.match(decideSealing('auto', no).note, /not available \(running as uid 1000\).*around the proxy/);
  t.equal(decideSealing('on', yes).sealed, true);
  t.throws(() => decideSealing('on', no), /asked for but is not available: running as uid 1000/);
  t.equal(decideSealing('off', yes).sealed, false);
  t.equal(sealModeFromEnv(undefined), 'auto');
  t.equal(sealModeFromEnv(''), 'auto');
  t.equal(sealModeFromEnv('ON'), 'on');
  t.equal(sealModeFromEnv('0'), 'off');
  t.throws(() => sealModeFromEnv('maybe'), /on, off or auto/);
});
