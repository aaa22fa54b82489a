// Reference consumers (compiled TS and Python) as real processes: the fault hook
// (raise/exit/stop at apply/ack), the environment check, and the per-await timeout.
import t from 'tap';
import net from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EnvError, parseEnv } from '../../../consumer/ledger/typescript/ledger-client.js';
import { type EnvParsers, parserVerdicts } from '../../helpers/env-parsers.js';
import {
  EMPTY,
  contractEnv,
  forEachConsumer,
  lockstep,
  readStore,
  runConsumer,
  startConsumer,
  startServer,
  waitForState,
  windowed,
} from '../../helpers/consumer-rig.js';

/** The Python reference's folder (client.py's). */
const PYTHON_LEDGER_DIR = join(import.meta.dirname, '..', '..', '..', 'consumer', 'ledger', 'python');

forEachConsumer(t, 'raise@apply:1 rolls back (independent read: pre-event state), exit non-zero', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 5\n', 'EVENT 1 3\nEVENT 2 1\n'], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db, fault: 'raise@apply:1' }).exit;
  await server.scripts();
  t.not(exit.code, 0);
  t.equal(exit.code, 1, `recommended code for an injected raise; ${exit.stderr}`);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  // total had already changed when the fault fired: only a real ROLLBACK restores it.
  t.same(readStore(db), { last: 0, total: 5, ledger: [[0, 5]] });
});

forEachConsumer(t, 'raise@ack:1: 1 is committed, not ACKed, exit non-zero', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 5\n', 'EVENT 1 3\n'], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db, fault: 'raise@ack:1' }).exit;
  await server.scripts();
  t.equal(exit.code, 1, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db), {
    last: 1,
    total: 8,
    ledger: [
      [0, 5],
      [1, 3],
    ],
  });
});

forEachConsumer(t, 'exit@ack:1: exit 86, 1 committed, no ACK 1', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 4\n', 'EVENT 1 -9\n'], 'wait'));
  const exit = await runConsumer(t, c, { port: server.port, db, fault: 'exit@ack:1' }).exit;
  await server.scripts();
  t.equal(exit.code, 86, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0']);
  t.same(readStore(db), {
    last: 1,
    total: -5,
    ledger: [
      [0, 4],
      [1, -9],
    ],
  });
});

forEachConsumer(t, 'exit@apply:1: exit 86 mid-transaction, nothing of 1 survives, the next process resumes from 0', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, async (conn, i) => {
    if (i === 0) return lockstep(['EVENT 0 4\n', 'EVENT 1 -9\n'], 'wait')(conn, i);
    return lockstep(['EVENT 1 -9\n'])(conn, i);
  });
  const first = await runConsumer(t, c, { port: server.port, db, fault: 'exit@apply:1' }).exit;
  t.equal(first.code, 86, first.stderr);
  t.same(readStore(db), { last: 0, total: 4, ledger: [[0, 4]] });
  const second = await runConsumer(t, c, { port: server.port, db }).exit;
  t.equal(second.code, 0, second.stderr);
  await server.scripts();
  t.same(
    server.conns.map((x) => x.lines),
    [
      ['RESUME -1', 'ACK 0'],
      ['RESUME 0', 'ACK 1'],
    ],
  );
  t.same(readStore(db), {
    last: 1,
    total: -5,
    ledger: [
      [0, 4],
      [1, -9],
    ],
  });
});

forEachConsumer(t, 'the hook fires only for the named seq and never for a duplicate ACK', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  // 1 arrives twice; exit@ack:1 must not fire on the duplicate's ACK, raise@apply:7 never fires.
  const server = await startServer(t, async (conn, i) => {
    if (i === 0) return lockstep(['EVENT 0 1\n', 'EVENT 1 2\n'], 'wait')(conn, i);
    return windowed(['EVENT 1 2\n', 'EVENT 2 3\n'])(conn, i);
  });
  const first = await runConsumer(t, c, { port: server.port, db, fault: 'raise@apply:7,exit@ack:1' }).exit;
  t.equal(first.code, 86, first.stderr);
  const second = await runConsumer(t, c, { port: server.port, db, fault: 'exit@ack:1,raise@apply:7' }).exit;
  t.equal(second.code, 0, second.stderr);
  await server.scripts();
  t.same(
    server.conns.map((x) => x.lines),
    [
      ['RESUME -1', 'ACK 0'],
      ['RESUME 1', 'ACK 1', 'ACK 2'],
    ],
  );
  t.same(readStore(db), {
    last: 2,
    total: 6,
    ledger: [
      [0, 1],
      [1, 2],
      [2, 3],
    ],
  });
});

forEachConsumer(t, 'stop@apply:1: stopped mid-transaction, outside read sees pre-event state, SIGCONT completes', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, lockstep(['EVENT 0 6\n', 'EVENT 1 -2\n', 'EVENT 2 3\n']));
  const run = runConsumer(t, c, { port: server.port, db, fault: 'stop@apply:1' });
  t.ok(await waitForState(run.pid, 'T'), 'process is stopped (state T in /proc/<pid>/stat)');
  t.same(readStore(db), { last: 0, total: 6, ledger: [[0, 6]] }, 'independent read: nothing of 1 visible');
  t.same(server.conns[0]?.lines, ['RESUME -1', 'ACK 0'], 'no ACK 1 while stopped');
  process.kill(run.pid, 'SIGCONT');
  const exit = await run.exit;
  await server.scripts();
  t.equal(exit.code, 0, exit.stderr);
  t.same(server.conns[0]!.lines, ['RESUME -1', 'ACK 0', 'ACK 1', 'ACK 2']);
  t.same(readStore(db), {
    last: 2,
    total: 7,
    ledger: [
      [0, 6],
      [1, -2],
      [2, 3],
    ],
  });
});

forEachConsumer(t, 'two hooks at one point fire in the order written; exit ends the point (contract section 6)', async (t, c) => {
  const events = ['EVENT 0 6\n', 'EVENT 1 -2\n'];
  const stopFirst = runConsumer(t, c, {
    port: (await startServer(t, lockstep(events))).port,
    db: join(t.testdir(), 'a.db'),
    fault: 'stop@apply:1,exit@apply:1',
  });
  t.ok(await waitForState(stopFirst.pid, 'T'), 'stop first: the process stopped itself');
  process.kill(stopFirst.pid, 'SIGCONT');
  t.equal((await stopFirst.exit).code, 86, 'then, continued, the exit written after it');
  const exitFirst = await runConsumer(t, c, {
    port: (await startServer(t, lockstep(events))).port,
    db: join(t.testdir(), 'b.db'),
    fault: 'exit@apply:1,stop@apply:1',
  }).exit;
  t.equal(exitFirst.code, 86, 'exit first: the stop written after it never fires');
  t.equal(exitFirst.signal, null);
});

const INVALID_ENVS: [string, (e: Record<string, string>) => void][] = [
  ['CHAOSLAB_HOST missing', (e) => delete e.CHAOSLAB_HOST],
  ['CHAOSLAB_PORT missing', (e) => delete e.CHAOSLAB_PORT],
  ['CHAOSLAB_PORT not a number', (e) => (e.CHAOSLAB_PORT = 'http')],
  ['CHAOSLAB_PORT 0', (e) => (e.CHAOSLAB_PORT = '0')],
  ['CHAOSLAB_PORT 70000', (e) => (e.CHAOSLAB_PORT = '70000')],
  ['CHAOSLAB_DB missing', (e) => delete e.CHAOSLAB_DB],
  ['CHAOSLAB_TIMEOUT_MS missing', (e) => delete e.CHAOSLAB_TIMEOUT_MS],
  ['CHAOSLAB_TIMEOUT_MS 0', (e) => (e.CHAOSLAB_TIMEOUT_MS = '0')],
  ['CHAOSLAB_TIMEOUT_MS -5', (e) => (e.CHAOSLAB_TIMEOUT_MS = '-5')],
  ['CHAOSLAB_TIMEOUT_MS 1.5', (e) => (e.CHAOSLAB_TIMEOUT_MS = '1.5')],
  ['CHAOSLAB_FAULT empty', (e) => (e.CHAOSLAB_FAULT = '')],
  ['CHAOSLAB_FAULT unknown action', (e) => (e.CHAOSLAB_FAULT = 'boom@apply:1')],
  ['CHAOSLAB_FAULT unknown point', (e) => (e.CHAOSLAB_FAULT = 'exit@commit:1')],
  ['CHAOSLAB_FAULT trailing comma', (e) => (e.CHAOSLAB_FAULT = 'exit@ack:1,')],
  ['CHAOSLAB_FAULT with a space', (e) => (e.CHAOSLAB_FAULT = 'exit@ack: 1')],
  ['CHAOSLAB_FAULT leading zero', (e) => (e.CHAOSLAB_FAULT = 'exit@ack:01')],
  ['CHAOSLAB_FAULT negative seq', (e) => (e.CHAOSLAB_FAULT = 'stop@apply:-1')],
];

const PARSERS: EnvParsers = { ts: { parse: parseEnv, refusal: EnvError }, python: { dir: PYTHON_LEDGER_DIR, module: 'client' } };

forEachConsumer(t, `invalid environment: its parser refuses each of ${INVALID_ENVS.length}, naming the variable, and accepts the good one`, async (t, c) => {
  const good = contractEnv({ port: 4000, db: '/nonexistent/c.db', timeoutMs: 2000 });
  const envs = INVALID_ENVS.map(([, breakIt]) => {
    const env = { ...good };
    breakIt(env);
    return env;
  });
  const verdicts = parserVerdicts(c, [good, ...envs], PARSERS);
  t.equal(verdicts[0], null, 'the good environment is accepted');
  for (const [i, [name]] of INVALID_ENVS.entries()) t.match(verdicts[i + 1], name.split(' ')[0]!, `${name}: refused, naming the variable`);
});

// The process's side, for a few of them: the parser's refusal above is exit 64 before anything is opened or connected.
const INVALID_ENVS_AS_PROCESSES = ['CHAOSLAB_PORT missing', 'CHAOSLAB_TIMEOUT_MS 1.5', 'CHAOSLAB_FAULT unknown point'];

forEachConsumer(t, 'invalid environment: exit 64, nothing connected, no store created', async (t, c) => {
  const dir = t.testdir();
  const server = await startServer(t, (conn) => conn.end());
  const chosen = INVALID_ENVS.filter(([name]) => INVALID_ENVS_AS_PROCESSES.includes(name));
  t.equal(chosen.length, INVALID_ENVS_AS_PROCESSES.length, 'every one named is in INVALID_ENVS');
  for (const [i, [name, breakIt]] of chosen.entries()) {
    const db = join(dir, `consumer-${i}.db`);
    const env = contractEnv({ port: server.port, db, timeoutMs: 2000 });
    breakIt(env);
    const exit = await startConsumer(t, c, env).exit;
    t.equal(exit.code, 64, `${name}: exit 64`);
    t.match(exit.stderr, name.split(' ')[0]!, `${name}: stderr names the variable`);
    t.notOk(existsSync(db), `${name}: no store created`);
  }
  t.equal(server.conns.length, 0, 'no connection attempted');
  // The same environment, repaired, does connect: the server above was reachable.
  const ok = await runConsumer(t, c, { port: server.port, db: join(dir, 'ok.db'), fault: 'stop@ack:3,raise@apply:9' }).exit;
  t.equal(ok.code, 0, ok.stderr);
  t.equal(server.conns.length, 1);
});

forEachConsumer(t, 'timeout: silent publisher after RESUME, socket kept open -> exit 5 quickly', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startServer(t, async (conn) => {
    await conn.closedWithin(15000); // says nothing, keeps the socket open
  });
  const started = Date.now();
  const exit = await runConsumer(t, c, { port: server.port, db, timeoutMs: 300 }).exit;
  t.equal(exit.code, 5, exit.stderr);
  t.ok(exit.endedAt - started < 10000, `ended within 10 s (took ${exit.endedAt - started} ms)`);
  t.ok(exit.endedAt - started >= 250, 'but not before the timeout could have passed');
  t.same(server.conns[0]!.lines, ['RESUME -1']);
  t.same(readStore(db), EMPTY);
});

forEachConsumer(t, 'the timeout bounds each await, not the session', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const deltas = [1, 2, 3, 4, 5, 6, 7, 8];
  const server = await startServer(t, async (conn) => {
    if (!(await conn.lineCount(1))) return;
    for (const [seq, d] of deltas.entries()) {
      await new Promise((r) => setTimeout(r, 150));
      conn.send(`EVENT ${seq} ${d}\n`);
    }
    await conn.lineCount(1 + deltas.length);
    conn.end();
    await conn.closedWithin();
  });
  const started = Date.now();
  // 8 gaps of 150 ms: every single read is well inside 1000 ms, the session is not.
  const exit = await runConsumer(t, c, { port: server.port, db, timeoutMs: 1000 }).exit;
  t.ok(exit.endedAt - started > 1000, 'the session lasted longer than one timeout');
  t.equal(exit.code, 0, exit.stderr);
  t.same(readStore(db), { last: 7, total: 36, ledger: deltas.map((d, i) => [i, d]) });
});

forEachConsumer(t, 'connection refused -> exit 6, store opened but unchanged', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const exit = await runConsumer(t, c, { port, db }).exit;
  t.equal(exit.code, 6, exit.stderr);
  t.same(readStore(db), EMPTY);
});
