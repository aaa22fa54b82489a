// A submission's build: once, with a deadline, its output kept (capped) in build.log; then the
// tree read-only. Sealed (as root where sealing works): as the slot's uid, without network
// unless asked, and nothing it started outlives it.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { makeReadOnly, runBuild } from '../../../../harness/grade/build/build.js';
import { isAlive, listPids, uidOf } from '../../../../harness/sandbox/proc.js';
import { leaseUid } from '../../../../harness/sandbox/uids.js';
import { sealingSkip } from '../../../helpers/sandbox.js';

t.test('unsealed: a build that succeeds, one that fails, one past its deadline', async (t) => {
  const dir = t.testdir({ src: { 'main.sh': 'echo hi' } });
  const log = join(dir, 'build.log');
  const ok = await runBuild({ command: 'echo built > out.txt; echo to-stderr >&2', dir: join(dir, 'src'), deadlineMs: 60_000, logFile: log });
  t.same(ok, { ok: true });
  t.equal(readFileSync(join(dir, 'src', 'out.txt'), 'utf8'), 'built\n', 'ran in the submission folder');
  t.equal(readFileSync(log, 'utf8'), 'to-stderr\n');
  const failed = await runBuild({ command: 'echo no compiler; exit 3', dir: join(dir, 'src'), deadlineMs: 60_000, logFile: log });
  t.same(failed, { ok: false, reason: 'the build `echo no compiler; exit 3` failed (exit status 3); see build.log' });
  t.equal(readFileSync(log, 'utf8'), 'no compiler\n');
  const slow = await runBuild({ command: 'echo $$ > pid; exec sleep 600', dir: join(dir, 'src'), deadlineMs: 300, logFile: log });
  t.match(slow, { ok: false, reason: /did not finish within its deadline/ });
  t.notOk(isAlive(Number(readFileSync(join(dir, 'src', 'pid'), 'utf8'))), 'the build was killed');
});

t.test('unsealed: a child the build left behind, even in a session of its own, is killed when the build ends', async (t) => {
  const dir = t.testdir({ src: {} });
  const r = await runBuild({
    command: "setsid sh -c 'echo $$ > child; exec sleep 600' </dev/null >/dev/null 2>&1 & while [ ! -s child ]; do sleep 0.05; done; echo built",
    dir: join(dir, 'src'),
    deadlineMs: 60_000,
    logFile: join(dir, 'build.log'),
  });
  t.same(r, { ok: true });
  t.equal(readFileSync(join(dir, 'build.log'), 'utf8'), 'built\n');
  t.notOk(isAlive(Number(readFileSync(join(dir, 'src', 'child'), 'utf8'))), 'the setsid child is gone');
});

t.test('an interrupt stops the build at once', async (t) => {
  const dir = t.testdir({ src: {} });
  const stop = new AbortController();
  const building = runBuild({
    command: 'echo $$ > pid; exec sleep 600',
    dir: join(dir, 'src'),
    deadlineMs: 600_000,
    logFile: join(dir, 'build.log'),
    signal: stop.signal,
  });
  // Aborted once the build has started (its pid file written).
  while (!existsSync(join(dir, 'src', 'pid')) || readFileSync(join(dir, 'src', 'pid'), 'utf8') === '') await new Promise((r) => setTimeout(r, 20));
  stop.abort();
  t.same(await building, { ok: false, reason: 'the build `echo $$ > pid; exec sleep 600` was stopped: grading was interrupted' });
  t.notOk(isAlive(Number(readFileSync(join(dir, 'src', 'pid'), 'utf8'))));
});

t.test('a flood of output is capped', async (t) => {
  const dir = t.testdir({ src: {} });
  const log = join(dir, 'build.log');
  t.same(await runBuild({ command: 'head -c 5000000 /dev/zero | tr "\\0" x', dir: join(dir, 'src'), deadlineMs: 60_000, logFile: log }), { ok: true });
  t.ok(statSync(log).size < 200_000, 'build.log holds the head and the tail only');
  t.match(readFileSync(log, 'utf8'), /bytes not kept/);
});

t.test('makeReadOnly: no write bits, executables stay executable, links untouched', async (t) => {
  const dir = t.testdir({ tree: { 'a.txt': 'a', sub: { 'run.sh': 'echo' } }, outside: 'keep' });
  const { chmodSync, symlinkSync } = await import('node:fs');
  chmodSync(join(dir, 'tree', 'sub', 'run.sh'), 0o775);
  symlinkSync(join(dir, 'outside'), join(dir, 'tree', 'link'));
  chmodSync(join(dir, 'outside'), 0o666);
  makeReadOnly(join(dir, 'tree'));
  const mode = (p: string) => statSync(join(dir, p)).mode & 0o7777;
  t.equal(mode('tree'), 0o555);
  t.equal(mode('tree/sub'), 0o555);
  t.equal(mode('tree/a.txt'), 0o444);
  t.equal(mode('tree/sub/run.sh'), 0o555);
  t.equal(mode('outside'), 0o666, 'a link is never followed');
  // Writable again, so the fixture can be removed when not running as root.
  for (const p of ['tree', 'tree/sub']) chmodSync(join(dir, p), 0o755);
});

const skip = await sealingSkip();
t.test('sealed: as the slot uid, in its own PID namespace; what it started dies with it', { skip: skip ?? false }, async (t) => {
  const dir = t.testdir({ src: { 'in.txt': 'x' } });
  const { chmodSync } = await import('node:fs');
  chmodSync(dir, 0o755);
  const lease = leaseUid(0);
  t.teardown(() => lease.release());
  const log = join(dir, 'build.log');
  const built = await runBuild({
    command: 'id -u > uid.txt; echo $$ > ns-pid.txt; (setsid sleep 600 & echo $! > child.txt); cat /etc/shadow 2>&1 | head -1',
    dir: join(dir, 'src'),
    deadlineMs: 60_000,
    uid: lease.uid,
    logFile: log,
  });
  t.same(built, { ok: true });
  t.equal(readFileSync(join(dir, 'src', 'uid.txt'), 'utf8').trim(), String(lease.uid));
  // The sandbox's own mounts (private /tmp and the like) take the namespace's first pids.
  t.ok(Number(readFileSync(join(dir, 'src', 'ns-pid.txt'), 'utf8')) < 30, 'a low pid: its own PID namespace');
  t.match(readFileSync(log, 'utf8'), /Permission denied/, 'not root');
  makeReadOnly(join(dir, 'src'));
  t.equal(statSync(join(dir, 'src', 'uid.txt')).uid, 0, 'handed back to root');
  t.ok(existsSync(join(dir, 'src', 'child.txt')), 'the build started a setsid child');
  t.same(
    listPids().filter((pid) => uidOf(pid) === lease.uid),
    [],
    'no process of the build uid is left',
  );
});

t.test("sealed: no network but its own loopback; with network: true, the host's", { skip: skip ?? false }, async (t) => {
  const dir = t.testdir({ src: {} });
  const { chmodSync } = await import('node:fs');
  chmodSync(dir, 0o755);
  let knocks = 0;
  const service = createServer((socket) => {
    knocks++;
    socket.end();
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  t.teardown(() => service.close());
  const port = (service.address() as { port: number }).port;
  const lease = leaseUid(0);
  t.teardown(() => lease.release());
  const knock = `if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo CONNECTED; else echo refused; fi`;
  const build = (network: boolean) =>
    runBuild({ command: knock, dir: join(dir, 'src'), deadlineMs: 60_000, uid: lease.uid, logFile: join(dir, 'build.log'), network });
  t.same(await build(false), { ok: true });
  t.equal(readFileSync(join(dir, 'build.log'), 'utf8'), 'refused\n', 'the host service is out of reach');
  t.equal(knocks, 0);
  t.same(await build(true), { ok: true });
  t.equal(readFileSync(join(dir, 'build.log'), 'utf8'), 'CONNECTED\n', 'with the host network it is reached');
  t.equal(knocks, 1);
});

t.test("a build's environment: Node's headers for node-gyp, the caches staff named, offline only without network", async (t) => {
  const { buildEnv, nodePrefix } = await import('../../../../harness/grade/build/build-env.js');
  const home = '/srv/build/copy';
  const here = buildEnv({ network: false, home, from: {} });
  t.same(here, { env: { npm_config_nodedir: nodePrefix() }, notes: [] }, 'the installed Node has its headers here');
  t.ok(existsSync(join(nodePrefix(), 'include', 'node', 'node.h')));
  const none = buildEnv({ network: false, home, from: {}, prefix: t.testdir({}) });
  t.same(none.env, {});
  t.match(none.notes, [/Node's headers were not found in .*include\/node.*node-gyp cannot build a native addon without a network/]);
  const caches = { CHAOSLAB_NPM_CACHE: '/srv/caches/npm', CHAOSLAB_GOMODCACHE: '/srv/caches/gomod', CHAOSLAB_PIP_WHEELS: '/tmp/wheels' };
  const offline = buildEnv({ network: false, home, from: caches });
  t.same(offline.env, {
    npm_config_nodedir: nodePrefix(),
    npm_config_cache: '/srv/caches/npm',
    npm_config_logs_dir: '/srv/build/copy/.npm/_logs',
    npm_config_offline: 'true',
    GOMODCACHE: '/srv/caches/gomod',
    GOPROXY: 'off',
    PIP_FIND_LINKS: '/tmp/wheels',
    PIP_NO_INDEX: '1',
  });
  t.match(offline.notes.at(-1), /CHAOSLAB_PIP_WHEELS=\/tmp\/wheels is out of a sealed build's reach/, 'a cache under /tmp: said');
  const online = buildEnv({ network: true, home, from: caches });
  t.notOk('npm_config_offline' in online.env || 'GOPROXY' in online.env || 'PIP_NO_INDEX' in online.env, 'with network: caches, not offline');
});

t.test('sealed: the build sees the headers, joins its own cgroups, and its log is kept for staff', { skip: skip ?? false }, async (t) => {
  const dir = t.testdir({ src: {} });
  const { chmodSync } = await import('node:fs');
  chmodSync(dir, 0o755);
  const lease = leaseUid(0);
  t.teardown(() => lease.release());
  const built = await runBuild({
    command: 'test -r "$npm_config_nodedir/include/node/node.h" && echo "headers in $npm_config_nodedir"; grep -c /chaoslab/ /proc/self/cgroup',
    dir: join(dir, 'src'),
    deadlineMs: 60_000,
    uid: lease.uid,
    logFile: join(dir, 'build.log'),
    staffLogFile: join(dir, 'staff-build.log'),
  });
  t.same(built, { ok: true });
  const log = readFileSync(join(dir, 'build.log'), 'utf8');
  t.match(log, /^headers in \/\S+\n2\n$/, 'the headers, and a pids and a memory group');
  t.equal(readFileSync(join(dir, 'staff-build.log'), 'utf8'), log, 'the same log for staff');
});
