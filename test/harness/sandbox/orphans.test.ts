// Nothing outlives the harness: a harness process SIGKILLed in the middle of a sealed run leaves
// no consumer, no init, no namespace holder (parent-death signals all the way down), and the
// cgroup folders it made are swept by the next harness. A harness whose parent dies stops
// cleanly (exitWithParent).
import t from 'tap';
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { sweepStaleCgroups } from '../../../harness/sandbox/cgroup.js';
import { isAlive } from '../../../harness/sandbox/proc.js';
import { dieWithParentCommand, exitWithParent, writeDieWithParentWrapper } from '../../../harness/sandbox/orphan.js';
import { findTool, runTool } from '../../../harness/sandbox/tools.js';
import { leaseUid } from '../../../harness/sandbox/uids.js';
import { processesOfUid, runTsChild, sandboxModule, sealingSkip, stillAlive, waitFor } from '../../helpers/sandbox.js';
import { tsLoaderArgs } from '../../helpers/ts-loader-args.js';

const skip = await sealingSkip();
t.teardown(runCleanups);
const work = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-orphans-')));
chmodSync(work, 0o755);
t.teardown(() => rmSync(work, { recursive: true, force: true }));

t.test('a SIGKILLed harness leaves no sealed process, no namespace; its cgroups are swept', { skip: skip ?? false }, async (t) => {
  const lease = leaseUid(40);
  t.teardown(() => lease.release());
  const child = runTsChild(
    [
      `const { createRunNamespace } = await import(${sandboxModule('namespace')});`,
      `const { installFirewall } = await import(${sandboxModule('firewall')});`,
      `const { confinedArgv, sealedTree } = await import(${sandboxModule('confine')});`,
      `const { createProcessCgroup } = await import(${sandboxModule('cgroup')});`,
      `const { spawn } = await import('node:child_process');`,
      `const ns = await createRunNamespace({ label: 'orphans' });`,
      `await installFirewall(ns, [{ uid: ${lease.uid}, allowTcpPorts: [] }]);`,
      `const cgroup = createProcessCgroup('orphan', { pids: 64, memoryBytes: 256 * 1024 * 1024 });`,
      `const argv = confinedArgv({ command: 'env -i setsid sleep 1000 & (sleep 1001 &); exec sleep 1002', uid: ${lease.uid}, home: ${JSON.stringify(work)}, netnsPath: ns.path, cgroup });`,
      `const launcher = spawn(argv[0], argv.slice(1), { stdio: 'ignore', cwd: ${JSON.stringify(work)} });`,
      // The three sleeps, not the subshell or a setsid that fork them and exit (a member gone by the check: clean54).
      `const { readFileSync } = await import('node:fs');`,
      `const comm = (pid) => { try { return readFileSync('/proc/' + pid + '/comm', 'utf8').trim(); } catch { return ''; } };`,
      `const report = () => { const tree = sealedTree(launcher.pid); const sleeps = tree.members.filter((pid) => comm(pid) === 'sleep'); if (sleeps.length < 3) return setTimeout(report, 20);`,
      `  console.log(JSON.stringify({ ns: ns.id, holder: ns.holderPid, launcher: launcher.pid, tree: { init: tree.init, members: sleeps }, cgroups: Object.values(cgroup.dirs) })); };`,
      `report();`,
      `setInterval(() => {}, 1000);`,
    ].join('\n'),
  );
  await waitFor('the sealed run to start', () => child.stdout().includes('}'), 20_000);
  const info = JSON.parse(child.stdout()) as { ns: string; holder: number; launcher: number; tree: { init: number; members: number[] }; cgroups: string[] };
  const all = [info.holder, info.launcher, info.tree.init, ...info.tree.members];
  t.same(stillAlive(all), all, `running: holder, launcher, tini and ${info.tree.members.length} members`);
  t.ok(info.cgroups.length > 0 && info.cgroups.every((dir) => existsSync(dir)), 'its cgroups exist');

  child.child.kill('SIGKILL');
  await child.done;
  await waitFor('everything to die', () => stillAlive(all).length === 0, 5000).catch(() => {});
  t.same(stillAlive(all), [], 'holder, launcher, tini and every member died with the harness');
  t.same(processesOfUid(lease.uid), [], `no process of uid ${lease.uid}`);
  t.ok(
    info.cgroups.every((dir) => existsSync(dir)),
    'the dead harness could not remove its cgroups…',
  );
  t.ok((await sweepStaleCgroups()) >= info.cgroups.length, '…the next harness sweeps them');
  t.ok(
    info.cgroups.every((dir) => !existsSync(dir)),
    'gone',
  );
});

t.test('exitWithParent: the harness cleans up and exits when its parent dies', async (t) => {
  const marker = join(work, 'cleaned');
  const sh = findTool('sh')!;
  // sh is the harness's parent; it starts the harness in the background and waits
  const loader = tsLoaderArgs();
  const code = [
    `const { exitWithParent } = await import(${sandboxModule('orphan')});`,
    `const { writeFileSync } = await import('node:fs');`,
    `exitWithParent(() => writeFileSync(${JSON.stringify(marker)}, String(process.pid)), { intervalMs: 50 });`,
    `console.log('watching');`,
    `setInterval(() => {}, 1000);`,
  ].join('\n');
  const parent = runTsChild('', {
    prefix: [sh, '-c', `"${process.execPath}" ${loader.map((a) => `'${a}'`).join(' ')} --input-type=module -e "$1" & echo "harness $!"; wait`, 'sh', code],
  });
  await waitFor('the harness to watch', () => parent.stdout().includes('watching'), 20_000);
  const harness = Number(/harness (\d+)/.exec(parent.stdout())?.[1]);
  t.ok(isAlive(harness), `the harness (pid ${harness}) runs`);
  parent.child.kill('SIGKILL'); // its parent dies without telling it
  await waitFor('the cleanup', () => existsSync(marker), 5000);
  t.equal(readFileSync(marker, 'utf8'), String(harness), 'the cleanup ran in the harness');
  await waitFor('the harness to exit', () => !isAlive(harness), 5000);
  t.pass('and it exited');
});

t.test('exitWithParent: nothing happens while the parent lives; stop() ends the watch', async (t) => {
  let fired = false;
  const watch = exitWithParent(
    () => {
      fired = true;
    },
    { intervalMs: 5 },
  );
  await new Promise((resolve) => setTimeout(resolve, 30));
  watch.stop();
  t.notOk(fired, 'the parent is alive: no cleanup');
  exitWithParent(() => {}).stop(); // default interval
});

t.test('dieWithParentCommand and the wrapper script', async (t) => {
  const command = dieWithParentCommand(`echo "it's here"`);
  t.match(command, /setpriv --pdeathsig KILL -- \S*bash -c 'echo "it'\\''s here"'$/);
  const wrapper = writeDieWithParentWrapper('/bin/echo', join(work, 'echo-wrapper'));
  t.equal(statSync(wrapper).mode & 0o777, 0o700);
  const ran = await runTool([wrapper, 'a b', "c'd"]);
  t.equal(ran.stdout, "a b c'd\n", 'the arguments pass through unchanged');
  const viaShell = await runTool([findTool('bash')!, '-c', command]);
  t.equal(viaShell.stdout, "it's here\n");
});
