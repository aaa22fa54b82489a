// Per-process cgroups: where they go, limits written, counters read, removal with processes
// still inside, and the sweep of groups a dead harness left; on this machine's hierarchy (v1
// here), and the v2 layout on a fake tree.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CgroupHost,
  chaoslabParent,
  controllerMount,
  controllerUsable,
  createProcessCgroup,
  ownGroup,
  sweepStaleCgroups,
} from '../../../harness/sandbox/cgroup.js';
import { placeFor } from '../../../harness/sandbox/cgroup-where.js';
import { isAlive } from '../../../harness/sandbox/proc.js';
import { ownCgroupsLeft } from '../../helpers/sandbox.js';

const pidsUsable = controllerUsable('pids');
const memoryUsable = controllerUsable('memory');
const skip = process.geteuid?.() !== 0 ? 'needs root' : !pidsUsable.ok ? pidsUsable.reason : !memoryUsable.ok ? memoryUsable.reason : false;

t.test('where the groups go', async (t) => {
  const mount = controllerMount('pids');
  const group = ownGroup('pids');
  if (mount === undefined || group === undefined) {
    t.equal(chaoslabParent('pids'), undefined, 'no v1 pids controller: no parent');
    t.notOk(controllerUsable('pids').ok);
    return;
  }
  t.match(mount, /^\/sys\/fs\/cgroup\//);
  t.match(group, /^\//);
  t.equal(chaoslabParent('pids'), join(mount, group, 'chaoslab'), 'under this process’s own group');
});

t.test('limits, counters, removal with a process inside', { skip }, async (t) => {
  const cgroup = createProcessCgroup('unit test/ä', { pids: 7, memoryBytes: 32 * 1024 * 1024 });
  t.match(cgroup.name, new RegExp(`^${process.pid}-\\d+-\\d+-unit_test__$`), 'named after this harness, label made safe');
  t.equal(readFileSync(join(cgroup.dirs.pids!, 'pids.max'), 'utf8').trim(), '7');
  t.equal(Number(readFileSync(join(cgroup.dirs.memory!, 'memory.limit_in_bytes'), 'utf8')), 32 * 1024 * 1024);
  t.same(cgroup.joinFiles, [join(cgroup.dirs.pids!, 'tasks'), join(cgroup.dirs.memory!, 'tasks')], 'v1: a starting shell moves its one thread');
  t.same(
    cgroup.stats(),
    { pidsCurrent: 0, pidsDenied: 0, pidsLimit: 7, memoryPeakBytes: 0, memoryLimitHits: 0, oomKills: 0, memoryLimitBytes: 32 * 1024 * 1024 },
    'an empty group, and its limits',
  );

  // a process moved in by hand stays until remove() kills it
  const sleeper = spawn('/bin/sleep', ['1000'], { stdio: 'ignore' });
  for (const file of cgroup.joinFiles) writeFileSync(file, String(sleeper.pid));
  t.same(cgroup.pids(), [sleeper.pid]);
  t.equal(cgroup.stats().pidsCurrent, 1);
  t.equal(await cgroup.remove(), true, 'removed');
  t.notOk(isAlive(sleeper.pid!), 'after killing what was inside');
  t.notOk(existsSync(cgroup.dirs.pids!));
  t.equal(await cgroup.remove(), true, 'idempotent');
  t.same(cgroup.pids(), []);
  t.same(cgroup.stats(), { pidsLimit: 7, memoryLimitBytes: 32 * 1024 * 1024 }, 'nothing to read once removed, only the limits it had');

  const pidsOnly = createProcessCgroup('pids-only', { pids: 5 }, ['pids']);
  t.same(Object.keys(pidsOnly.dirs), ['pids']);
  await pidsOnly.remove();

  t.throws(() => createProcessCgroup('bad', { pids: -5 }), /cgroup .*bad/, 'an invalid limit: an error');
  t.same(
    ownCgroupsLeft().filter((dir) => dir.endsWith('-bad')),
    [],
    'and nothing half-made is left',
  );
});

t.test('the sweep removes only groups of harnesses that are gone', { skip }, async (t) => {
  const dead = spawn('true');
  await new Promise((resolve) => dead.once('exit', resolve));
  const parent = chaoslabParent('pids')!;
  const stale = join(parent, `${dead.pid}-12345-1-stale`);
  const foreign = join(parent, 'not-ours');
  mkdirSync(stale);
  mkdirSync(foreign, { recursive: true });
  const mine = createProcessCgroup('mine', { pids: 5 }, ['pids']);
  t.teardown(async () => {
    await mine.remove();
    rmdirSync(foreign);
  });
  const swept = await sweepStaleCgroups(['pids']);
  t.ok(swept >= 1, `swept ${swept}`);
  t.notOk(existsSync(stale), 'the dead harness’s group is gone');
  t.ok(existsSync(mine.dirs.pids!), 'a live harness’s group stays');
  t.ok(existsSync(foreign), 'a folder not named like ours stays');
});

// This machine mounts the controllers on cgroup v1 (its cgroup2 mount has none). So the v2 path
// is shown on plain folders described as a v2 mount: this proves where groups go, which files
// are written and how the counters are read; not that a real v2 kernel accepts the writes.
t.test('cgroup v2 layout on a fake tree (plain folders, not a kernel cgroup): placement, subtree_control, limits, counters', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'chaoslab-fake-cgroup2-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const own = join(root, 'system.slice', 'grader.service');
  mkdirSync(own, { recursive: true });
  writeFileSync(join(own, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  writeFileSync(join(own, 'cgroup.subtree_control'), '\n');
  const host: CgroupHost = {
    mountinfo: () => `35 24 0:30 / ${root} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n`,
    selfCgroup: () => '0::/system.slice/grader.service\n',
  };
  t.same(placeFor('memory', host), { version: 2, own, parent: join(own, 'chaoslab') }, 'under the harness’s own v2 group');
  t.equal(controllerMount('memory', host), undefined, 'no v1 mount');

  const cgroup = createProcessCgroup('v2 test', { pids: 9, memoryBytes: 64 * 1024 * 1024 }, ['pids', 'memory'], host);
  const dir = join(own, 'chaoslab', cgroup.name);
  t.same(cgroup.dirs, { pids: dir, memory: dir }, 'one folder for both controllers');
  t.same(cgroup.joinFiles, [join(dir, 'cgroup.procs')], 'one cgroup.procs to join');
  t.equal(readFileSync(join(own, 'cgroup.subtree_control'), 'utf8'), '+pids +memory', 'controllers enabled in the harness’s group');
  t.equal(readFileSync(join(own, 'chaoslab', 'cgroup.subtree_control'), 'utf8'), '+pids +memory', 'and in chaoslab/');
  t.equal(readFileSync(join(dir, 'memory.max'), 'utf8'), String(64 * 1024 * 1024), 'memory.max');
  t.equal(readFileSync(join(dir, 'pids.max'), 'utf8'), '9', 'pids.max');
  t.notOk(existsSync(join(dir, 'memory.limit_in_bytes')), 'no v1 file');

  // The counters, as a v2 kernel writes them after an OOM kill and two refused forks.
  writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n');
  writeFileSync(join(dir, 'memory.peak'), `${64 * 1024 * 1024}\n`);
  writeFileSync(join(dir, 'pids.events'), 'max 2\n');
  writeFileSync(join(dir, 'pids.current'), '3\n');
  t.same(cgroup.stats(), {
    pidsCurrent: 3,
    pidsDenied: 2,
    pidsLimit: 9,
    memoryPeakBytes: 64 * 1024 * 1024,
    memoryLimitHits: 12,
    oomKills: 1,
    memoryLimitBytes: 64 * 1024 * 1024,
  });

  // Already enabled: not written again.
  writeFileSync(join(own, 'cgroup.subtree_control'), 'memory pids\n');
  createProcessCgroup('again', { pids: 9 }, ['pids', 'memory'], host);
  t.equal(readFileSync(join(own, 'cgroup.subtree_control'), 'utf8'), 'memory pids\n');

  // A controller not delegated to the harness's group: not usable, and the reason says why.
  writeFileSync(join(own, 'cgroup.controllers'), 'cpu pids\n');
  t.match(placeFor('memory', host), { reason: /memory controller is not delegated to .*grader\.service/ });
  t.same(Object.keys(createProcessCgroup('pids only', { pids: 9 }, ['pids', 'memory'], host).dirs), ['pids'], 'pids only');

  // subtree_control cannot be written (EBUSY on a real kernel: a group holding processes): an error naming the file.
  writeFileSync(join(own, 'cgroup.controllers'), 'memory pids\n');
  rmSync(join(own, 'cgroup.subtree_control'));
  mkdirSync(join(own, 'cgroup.subtree_control'));
  t.throws(
    () => createProcessCgroup('busy', { pids: 9 }, ['pids', 'memory'], host),
    /cannot enable the .*controller in .*grader\.service\/cgroup\.subtree_control/,
  );
  const usable = controllerUsable('memory', host);
  t.match(usable, { ok: false, reason: /cannot create a cgroup v2 memory group under .*: cannot enable the memory controller/ });
});
