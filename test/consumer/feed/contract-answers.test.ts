// The answers consumer/feed/CONTRACT.md gives to the questions a new user had to guess (issue
// 32), held to what both reference consumers do: how nesting is counted, a snapshot nobody asked
// for, where the chain id comes from, the first retry's n, two hooks at one point; and from the
// second trial: a malformed duplicate, what is read after an invalid frame, a server's pong.
import t from 'tap';
import { join } from 'node:path';
import { execa } from 'execa';
import { performance } from 'node:perf_hooks';
import { Reconnects } from '../../../consumer/feed/typescript/backoff.js';
import type { Session } from '../../../consumer/feed/typescript/session.js';
import { ROOT, waitForState } from '../../helpers/consumer-rig.js';
import {
  A,
  B,
  C,
  type Obj,
  blockHash,
  cur,
  forEachFeedConsumer,
  other,
  readFeedStore,
  runFeed,
  snapshot,
  startFeedServer,
  stopped,
  storeReaches,
  transfer,
} from '../../helpers/feed-rig.js';

t.setTimeout(600000);

/** An event whose frame nests `levels` containers in all: the frame object is level 1, its payload level 2. */
function nested(block: number, levels: number): string {
  const frame = JSON.stringify(other(block, 0, { deep: 'HERE' }));
  const arrays = levels - 2;
  return frame.replace('"HERE"', `${'['.repeat(arrays)}${']'.repeat(arrays)}`);
}

forEachFeedConsumer(t, 'nesting: the frame object is level 1; 64 levels are applied, 65 refused; brackets in strings do not count', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const S = snapshot(10, 0, { [A]: '1' });
  const inString = other(12, 0, { note: '['.repeat(100) });
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0)
      conn.send(`${[JSON.stringify(S), nested(11, 64), JSON.stringify(inString), nested(13, 65), JSON.stringify(transfer(14, 0, C, A, 5))].join('\n')}\n`);
    await conn.closedWithin(30000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(2), 'the 65-level frame closed the connection; it reconnected');
  const store = readFeedStore(db);
  t.same(
    store?.events.map((e) => e.cursor),
    [cur(11), cur(12)],
    '64 levels and a string full of [ applied; nothing from the 65-level frame on',
  );
  t.equal(server.conns[0]!.closedByServer, false, 'the consumer closed the first connection');
  await stopped(t, run);
});

forEachFeedConsumer(t, 'a snapshot the consumer did not ask for is installed like any valid snapshot', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) conn.sendAll([snapshot(10, 0, { [A]: '100' }), transfer(11, 0, A, B, 10)]);
    // Subscribed with a cursor, yet a snapshot comes (a correct server never sends one).
    if (i === 1) conn.send(snapshot(20, 0, { [A]: '7', [B]: '8' }));
    await conn.closedWithin(30000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(11)));
  server.conns[0]!.end();
  t.ok(await server.connections(2));
  t.same((await server.subscription(1))?.cursor, cur(11), 'subscribed with its cursor: no snapshot asked for');
  t.ok(await storeReaches(db, (s) => s.cursor === cur(20)), 'installed');
  t.strictSame(readFeedStore(db), {
    cursor: cur(20),
    blockHash: blockHash(20),
    snapshotCursor: cur(20),
    snapshotBlockHash: blockHash(20),
    events: [],
    balances: { [A]: '7', [B]: '8' },
  });
  t.equal(server.conns.length, 2, 'and kept the connection');
  await stopped(t, run);
});

forEachFeedConsumer(t, 'the chain id: none before the first cursor; the first cursor received sets it (chain 7 here)', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const on7 = (f: Obj): Obj => JSON.parse(JSON.stringify(f).replaceAll('"1:000', '"7:000')) as Obj;
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) conn.sendAll([{ op: 'ping', id: 1 }, on7(snapshot(10, 0, { [A]: '100' })), on7(transfer(11, 0, A, B, 10)), transfer(12, 0, A, B, 1)]);
    await conn.closedWithin(30000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(2), 'the chain-1 event after chain-7 frames is invalid: closed, reconnected');
  const second = await server.subscription(1);
  t.equal(second?.cursor, '7:00000000000011:0000', 'resumes on chain 7');
  t.same(
    readFeedStore(db)?.events.map((e) => e.cursor),
    ['7:00000000000011:0000'],
  );
  await stopped(t, run);
});

t.test("the first retry is n = 0 even when the process's first connect brought nothing; then 1, 2; 0 again after data", async (t) => {
  // The n each reference hands its backoff delay, read through its own Reconnects (no timing involved).
  const ends = [false, false, true, false];
  const ts: number[] = [];
  const session = {
    stopping: false,
    pause: async () => {},
    config: {},
    steps: {
      backoffDelay: (_c: unknown, n: number) => {
        ts.push(n);
        return 0;
      },
    },
  } as unknown as Session;
  const r = new Reconnects();
  await r.waitBeforeConnect(session);
  for (const gotData of ends) {
    r.ended({ gotData, endSeenAt: performance.now() });
    await r.waitBeforeConnect(session);
  }
  t.same(ts, [0, 1, 0, 1], 'TypeScript: no wait before the first connect; retries n = 0, 1; after data 0 again');
  const py = await execa(
    'python3',
    [
      '-c',
      [
        'import sys, time, types',
        `sys.path.insert(0, ${JSON.stringify(join(ROOT, 'consumer/feed/python'))})`,
        'from feed_consumer.backoff import Reconnects',
        'seen = []',
        's = types.SimpleNamespace(stopping=False, config=None, steps=types.SimpleNamespace(backoff_delay=lambda c, n, rnd: seen.append(n) or 0))',
        'r = Reconnects()',
        'r.wait_before_connect(s)',
        'for got in (False, False, True, False):',
        '    r.ended(got, time.monotonic())',
        '    r.wait_before_connect(s)',
        'print(seen)',
      ].join('\n'),
    ],
    { reject: false },
  );
  t.equal(py.stdout.trim(), '[0, 1, 0, 1]', `Python: the same n (${py.stderr})`);
});

forEachFeedConsumer(t, 'two hooks at one point fire in the order written; exit ends the point', async (t, c) => {
  const frames = [snapshot(10, 0, { [A]: '100' }), transfer(11, 0, A, B, 10)];
  const serve = () =>
    startFeedServer(t, async (conn) => {
      if (!(await conn.subscribed())) return;
      conn.sendAll(frames);
      await conn.closedWithin(30000);
    });
  const first = await serve();
  const stopThenExit = runFeed(t, c, { port: first.port, db: join(t.testdir(), 'a.db'), fault: 'stop@apply:1,exit@apply:1' });
  t.ok(await waitForState(stopThenExit.pid, 'T', 20000), 'stop first: the process stopped itself');
  stopThenExit.child.kill('SIGCONT');
  t.equal((await stopThenExit.exit).code, 86, 'then, continued, the exit written after it');
  const second = await serve();
  const exitThenStop = runFeed(t, c, { port: second.port, db: join(t.testdir(), 'b.db'), fault: 'exit@apply:1,stop@apply:1' });
  const exit = await exitThenStop.exit;
  t.equal(exit.code, 86, 'exit first: it ends the process; the stop written after it never fires');
  t.equal(exit.signal, null);
});

forEachFeedConsumer(t, 'a malformed event is invalid even when its cursor is a duplicate; nothing after it is read, a ping included', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  // Event 11 again, its amount a JSON number (invalid), and a ping in the same write behind it.
  const malformed = JSON.stringify(transfer(11, 0, A, B, 10)).replace('"amount":"10"', '"amount":10');
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.sendAll([snapshot(10, 0, { [A]: '100' }), transfer(11, 0, A, B, 10)]);
      if (await storeReaches(db, (s) => s.cursor === cur(11))) conn.send(`${malformed}\n${JSON.stringify({ op: 'ping', id: 5 })}\n`);
    }
    await conn.closedWithin(30000);
  });
  t.match(malformed, /"amount":10[,}]/, 'the duplicate really is malformed');
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(2), 'the malformed duplicate closed the connection; it reconnected');
  t.equal(server.conns[0]!.closedByServer, false, 'the consumer closed it');
  t.same(
    server.conns[0]!.framesWith('pong').map((f) => f.id),
    [],
    'the ping behind the invalid frame was not read',
  );
  t.same((await server.subscription(1))?.cursor, cur(11), 'resumed from its cursor');
  t.same(readFeedStore(db)?.balances, { [A]: '90', [B]: '10' }, 'nothing changed');
  await stopped(t, run);
});

forEachFeedConsumer(t, "a server's pong follows the ping id rule: a valid one keeps the connection, 7.0 is invalid", async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.sendAll([snapshot(10, 0, { [A]: '100' }), { op: 'pong', id: 7 }, transfer(11, 0, A, B, 10)]);
      if (await storeReaches(db, (s) => s.cursor === cur(11))) conn.send('{"op":"pong","id":7.0}\n');
    }
    await conn.closedWithin(30000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(11)), 'the event after a valid pong was applied: the connection stayed');
  t.ok(await server.connections(2), 'the pong with id 7.0 closed the connection; it reconnected');
  t.equal(server.conns[0]!.closedByServer, false, 'the consumer closed it');
  await stopped(t, run);
});
