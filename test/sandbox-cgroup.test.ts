// Per-process cgroup v1 groups: where they go, limits written, counters read, removal with
// processes still inside, and the sweep of groups a dead harness left.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chaoslabParent, controllerMount, controllerUsable, createProcessCgroup, ownGroup, sweepStaleCgroups } from '../harness/sandbox/cgroup.js';
import { isAlive } from '../harness/sandbox/proc.js';
import { ownCgroupsLeft } from './helpers/sandbox.js';

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
  t.same(cgroup.procsFiles, [join(cgroup.dirs.pids!, 'cgroup.procs'), join(cgroup.dirs.memory!, 'cgroup.procs')]);
  t.same(cgroup.stats(), { pidsCurrent: 0, pidsDenied: 0, memoryPeakBytes: 0, memoryLimitHits: 0, oomKills: 0 }, 'an empty group');

  // a process moved in by hand stays until remove() kills it
  const sleeper = spawn('/bin/sleep', ['1000'], { stdio: 'ignore' });
  for (const file of cgroup.procsFiles) writeFileSync(file, String(sleeper.pid));
  t.same(cgroup.pids(), [sleeper.pid]);
  t.equal(cgroup.stats().pidsCurrent, 1);
  t.equal(await cgroup.remove(), true, 'removed');
  t.notOk(isAlive(sleeper.pid!), 'after killing what was inside');
  t.notOk(existsSync(cgroup.dirs.pids!));
  t.equal(await cgroup.remove(), true, 'idempotent');
  t.same(cgroup.pids(), []);
  t.same(cgroup.stats(), {}, 'nothing to read once removed');

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
