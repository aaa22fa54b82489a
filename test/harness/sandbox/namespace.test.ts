// A run's network namespace: its own loopback, commands run inside it, and nothing left behind
// — not after destroy(), not when the harness process is SIGKILLed.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { createRunNamespace, type RunNamespace } from '../../../harness/sandbox/namespace.js';
import { isAlive, namespaceOf } from '../../../harness/sandbox/proc.js';
import { requireTool } from '../../../harness/sandbox/tools.js';
import { runTsChild, sandboxModule, sealingSkip, stillAlive, waitFor } from '../../helpers/sandbox.js';

const skip = await sealingSkip();
t.teardown(runCleanups);

t.test('a namespace with its own loopback', { skip: skip ?? false }, async (t) => {
  const ns = await createRunNamespace({ label: 'test' });
  t.teardown(() => ns.destroy());
  t.not(ns.id, namespaceOf('self', 'net'), 'not the host’s namespace');
  t.equal(namespaceOf(ns.holderPid, 'net'), ns.id);
  t.same(ns.processes(), [ns.holderPid], 'only the holder is inside');
  t.ok(ns.alive());

  const addresses = await ns.exec([requireTool('ip'), '-br', 'addr', 'show', 'lo']);
  t.match(addresses.stdout, /^lo\s+UNKNOWN\s+127\.0\.0\.1\/8 ::1\/128/, 'lo is up with 127.0.0.1 and ::1');
  const inside = await ns.exec(['/usr/bin/readlink', '/proc/self/ns/net']);
  t.equal(inside.stdout.trim(), ns.id, 'exec runs inside');
  t.match(ns.enterArgv(['true']), [/nsenter$/, `--net=/proc/${ns.holderPid}/ns/net`, '--', 'true']);
  t.match(ns.enterArgv(['true'], { dieWithParent: true }), [/setpriv$/, '--pdeathsig', 'KILL', '--', /nsenter$/]);

  // the host's loopback is another one: a host listener is not reachable from inside, even as root
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  const reach = await ns.exec([
    process.execPath,
    '-e',
    `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })`,
  ]);
  t.equal(reach.stdout.trim(), 'ECONNREFUSED', 'the host’s 127.0.0.1 is not the namespace’s');
});

t.test('destroy kills everything inside, escaped or not, and is idempotent', { skip: skip ?? false }, async (t) => {
  const ns = await createRunNamespace({ label: 'destroy' });
  const argv = ns.enterArgv([requireTool('sh'), '-c', 'sleep 1000 & setsid sh -c "sleep 1000 & sleep 1000" & env -i setsid sleep 1000 & echo started; wait']);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  t.teardown(() => child.kill('SIGKILL'));
  await waitFor('five processes inside', () => ns.processes().length >= 6);
  const inside = ns.processes();
  t.ok(inside.length >= 6, `inside: ${inside.length} processes (the holder, sh, four sleeps and a setsid sh)`);
  const result = await ns.destroy();
  t.ok(result.killed >= 5, `killed ${result.killed}`);
  t.same(result.leftover, [], 'nothing left in the namespace');
  t.same(stillAlive(inside), [], 'every process that was inside is gone');
  t.notOk(ns.alive());
  t.throws(() => ns.enterArgv(['true']), /is gone/);
  t.same(await ns.destroy(), result, 'a second destroy is the first one');
});

t.test('the holder and what runs inside die with the harness (SIGKILLed)', { skip: skip ?? false }, async (t) => {
  const child = runTsChild(
    [
      `const { createRunNamespace } = await import(${sandboxModule('namespace')});`,
      `const { spawn } = await import('node:child_process');`,
      `const ns = await createRunNamespace({ label: 'orphan' });`,
      `const argv = ns.enterArgv(['/usr/bin/sleep', '1000'], { dieWithParent: true });`,
      `const sleeper = spawn(argv[0], argv.slice(1), { stdio: 'ignore' });`,
      `setTimeout(() => console.log(JSON.stringify({ id: ns.id, holder: ns.holderPid, sleeper: sleeper.pid })), 300);`,
      `setInterval(() => {}, 1000);`,
    ].join('\n'),
  );
  await waitFor('the child to report', () => child.stdout().includes('}'), 20_000);
  const { id, holder, sleeper } = JSON.parse(child.stdout()) as { id: string; holder: number; sleeper: number };
  t.ok(isAlive(holder) && isAlive(sleeper), 'holder and sleeper run');
  t.equal(namespaceOf(sleeper, 'net'), id, 'the sleeper is inside');
  child.child.kill('SIGKILL');
  await child.done;
  // Waited for by pid: once empty, the namespace's id may already be another one's.
  await waitFor('the holder and the sleeper to die', () => !isAlive(holder) && !isAlive(sleeper));
  t.notOk(isAlive(holder), 'the holder died with the harness');
  t.notOk(isAlive(sleeper), 'so did the process inside');
});

t.test('a harness that exits without destroying leaves nothing either', { skip: skip ?? false }, async (t) => {
  const child = runTsChild(
    [
      `const { createRunNamespace } = await import(${sandboxModule('namespace')});`,
      `const ns = await createRunNamespace({ label: 'exit' });`,
      `console.log(JSON.stringify({ id: ns.id, holder: ns.holderPid }));`,
      `process.exit(0);`,
    ].join('\n'),
  );
  const ran = await child.done;
  t.equal(ran.code, 0, ran.stderr);
  const { holder } = JSON.parse(ran.stdout) as { holder: number };
  await waitFor('the holder to die', () => !isAlive(holder));
  t.notOk(isAlive(holder), 'the holder is gone');
});

t.test('a holder that does not get ready in time is killed, and the error says so', { skip: skip ?? false }, async (t) => {
  // 1 ms is a race the holder usually loses; on a busy machine it can win (its "ready" is read
  // before the timer starts): then that namespace is destroyed and the race run again.
  let error: Error | undefined;
  for (let attempt = 0; attempt < 20 && !error; attempt++) {
    error = await createRunNamespace({ label: 'hasty', readyTimeoutMs: 1 }).then(
      async (ns) => {
        await ns.destroy();
        return undefined;
      },
      (e: Error) => e,
    );
  }
  t.match(error?.message, /^network namespace for hasty: no "ready" within 1 ms \(holder pid \d+ killed\)/);
  const holder = Number(/holder pid (\d+)/.exec(error?.message ?? '')?.[1]);
  await waitFor('the holder to go', () => !isAlive(holder));
  t.pass('no holder left');
});

t.test('a namespace whose holder is gone finds nothing by its id, which the kernel gives to the next namespace made', { skip: skip ?? false }, async (t) => {
  // Two harnesses (or two jobs) on one machine: run A's namespace is freed, run B's gets its
  // inode number, and A's destroy() must not then kill B's holder (seen as "the holder exited"
  // in B, a sealed run that could not be set up).
  const a = await createRunNamespace({ label: 'freed' });
  process.kill(a.holderPid, 'SIGKILL');
  await waitFor('the freed holder to go', () => !isAlive(a.holderPid));
  const made: RunNamespace[] = [];
  let b: RunNamespace | undefined;
  // The id allocator hands out the lowest free number: the next namespace made here usually
  // gets A's, unless another process on the machine makes one first.
  for (let i = 0; i < 20 && !b; i++) {
    const ns = await createRunNamespace({ label: `after-${i}` });
    made.push(ns);
    if (ns.id === a.id) b = ns;
  }
  t.teardown(() => Promise.all(made.map((ns) => ns.destroy())));
  t.same(a.processes(), [], 'a namespace without its holder lists no process');
  t.same(await a.destroy(), { killed: 0, leftover: [] }, 'and its destroy kills nothing');
  for (const ns of made) t.ok(ns.alive(), `${ns.id === a.id ? 'the namespace that got its id' : 'a namespace made after it'} is untouched`);
  if (b) t.same(b.processes(), [b.holderPid], `the kernel gave ${a.id} to a new namespace, whose holder is still there`);
  else t.comment(`no namespace made here got ${a.id} back (another process made one first)`);
});
