// The feed lab's reference consumers (compiled TS and Python) as real processes, driven through
// consumer/feed/CONTRACT.md by a scripted NDJSON server on 127.0.0.1 (test/helpers/feed-rig.ts).
// Every subtest runs once per language. Timing checks use loose bounds: they tell "waits with
// jitter" from "does not", they are not speed measurements.
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { EnvError, parseEnv } from '../../../consumer/feed/typescript/environment.js';
import { type EnvParsers, parserVerdicts } from '../../helpers/env-parsers.js';
import { startConsumer, waitForState } from '../../helpers/consumer-rig.js';
import {
  A,
  B,
  C,
  type FeedStore,
  NULL_SUB,
  type Obj,
  TOPICS,
  blockHash,
  closedByConsumer,
  cur,
  cursors,
  eventsOf,
  feedEnv,
  forEachFeedConsumer,
  line,
  now,
  other,
  readFeedStore,
  reset,
  revokeFrom,
  runFeed,
  sleep,
  snapshot,
  startFeedServer,
  stopped,
  storeReaches,
  subAt,
  transfer,
  until,
} from '../../helpers/feed-rig.js';

t.setTimeout(900000);

const BIG = 2n ** 200n;
const MAX = 2n ** 256n - 1n;

/** A journal file exists while the consumer's write transaction is open (rollback-journal mode). */
const inTransaction = (db: string): boolean => existsSync(`${db}-journal`);

/** The Python reference's package folder (consumer/feed/python/feed_consumer's parent). */
const PYTHON_FEED_DIR = join(import.meta.dirname, '..', '..', '..', 'consumer', 'feed', 'python');

// ---------------------------------------------------------------- environment

const BAD_ENVS: [string, string, (e: Record<string, string>) => void][] = [
  ['HOST missing', 'CHAOSLAB_HOST', (e) => delete e.CHAOSLAB_HOST],
  ['PORT missing', 'CHAOSLAB_PORT', (e) => delete e.CHAOSLAB_PORT],
  ['PORT leading zero', 'CHAOSLAB_PORT', (e) => (e.CHAOSLAB_PORT = `0${e.CHAOSLAB_PORT}`)],
  ['PORT not a number', 'CHAOSLAB_PORT', (e) => (e.CHAOSLAB_PORT = 'http')],
  ['PORT 0', 'CHAOSLAB_PORT', (e) => (e.CHAOSLAB_PORT = '0')],
  ['PORT 70000', 'CHAOSLAB_PORT', (e) => (e.CHAOSLAB_PORT = '70000')],
  ['DB missing', 'CHAOSLAB_DB', (e) => delete e.CHAOSLAB_DB],
  ['CLIENT_ID missing', 'CHAOSLAB_CLIENT_ID', (e) => delete e.CHAOSLAB_CLIENT_ID],
  ['TOPICS missing', 'CHAOSLAB_TOPICS', (e) => delete e.CHAOSLAB_TOPICS],
  ['TOPICS uppercase', 'CHAOSLAB_TOPICS', (e) => (e.CHAOSLAB_TOPICS = `0x${'AB'.repeat(20)}`)],
  ['TOPICS 39 hex digits', 'CHAOSLAB_TOPICS', (e) => (e.CHAOSLAB_TOPICS = `0x${'a'.repeat(39)}`)],
  ['TOPICS without 0x', 'CHAOSLAB_TOPICS', (e) => (e.CHAOSLAB_TOPICS = 'a'.repeat(42))],
  ['TOPICS trailing comma', 'CHAOSLAB_TOPICS', (e) => (e.CHAOSLAB_TOPICS = `${A},`)],
  ['TOPICS twice the same', 'CHAOSLAB_TOPICS', (e) => (e.CHAOSLAB_TOPICS = `${A},${A}`)],
  ['PING_MS missing', 'CHAOSLAB_PING_MS', (e) => delete e.CHAOSLAB_PING_MS],
  ['PING_MS 0', 'CHAOSLAB_PING_MS', (e) => (e.CHAOSLAB_PING_MS = '0')],
  ['IDLE_MS missing', 'CHAOSLAB_IDLE_MS', (e) => delete e.CHAOSLAB_IDLE_MS],
  ['IDLE_MS -5', 'CHAOSLAB_IDLE_MS', (e) => (e.CHAOSLAB_IDLE_MS = '-5')],
  ['IDLE_MS 1.5', 'CHAOSLAB_IDLE_MS', (e) => (e.CHAOSLAB_IDLE_MS = '1.5')],
  ['IDLE_MS above 2^31-1', 'CHAOSLAB_IDLE_MS', (e) => (e.CHAOSLAB_IDLE_MS = '2147483648')],
  ['BACKOFF_BASE_MS missing', 'CHAOSLAB_BACKOFF_BASE_MS', (e) => delete e.CHAOSLAB_BACKOFF_BASE_MS],
  ['BACKOFF_BASE_MS leading zero', 'CHAOSLAB_BACKOFF_BASE_MS', (e) => (e.CHAOSLAB_BACKOFF_BASE_MS = '020')],
  ['BACKOFF_CAP_MS missing', 'CHAOSLAB_BACKOFF_CAP_MS', (e) => delete e.CHAOSLAB_BACKOFF_CAP_MS],
  ['BACKOFF_CAP_MS below BASE', 'CHAOSLAB_BACKOFF_CAP_MS', (e) => (e.CHAOSLAB_BACKOFF_CAP_MS = '10')],
  ['APPLY_DELAY_MS -1', 'CHAOSLAB_APPLY_DELAY_MS', (e) => (e.CHAOSLAB_APPLY_DELAY_MS = '-1')],
  ['APPLY_DELAY_MS empty', 'CHAOSLAB_APPLY_DELAY_MS', (e) => (e.CHAOSLAB_APPLY_DELAY_MS = '')],
  ['FAULT empty', 'CHAOSLAB_FAULT', (e) => (e.CHAOSLAB_FAULT = '')],
  ['FAULT unknown action', 'CHAOSLAB_FAULT', (e) => (e.CHAOSLAB_FAULT = 'boom@apply:1')],
  ['FAULT unknown point', 'CHAOSLAB_FAULT', (e) => (e.CHAOSLAB_FAULT = 'exit@ack:1')],
  ['FAULT n = 0', 'CHAOSLAB_FAULT', (e) => (e.CHAOSLAB_FAULT = 'exit@apply:0')],
  ['FAULT trailing comma', 'CHAOSLAB_FAULT', (e) => (e.CHAOSLAB_FAULT = 'exit@apply:1,')],
  ['FAULT with a space', 'CHAOSLAB_FAULT', (e) => (e.CHAOSLAB_FAULT = 'exit@apply: 1')],
];

const PARSERS: EnvParsers = { ts: { parse: parseEnv, refusal: EnvError }, python: { dir: PYTHON_FEED_DIR, module: 'feed_consumer.environment' } };

forEachFeedConsumer(t, `bad environment: its parser names the variable of each of ${BAD_ENVS.length} bad ones, and accepts the good one`, async (t, c) => {
  const good = feedEnv({ port: 4000, db: '/nonexistent/c.db', baseMs: 20, capMs: 100 });
  const envs = BAD_ENVS.map(([, , breakIt]) => {
    const env = { ...good };
    breakIt(env);
    return env;
  });
  const verdicts = parserVerdicts(c, [good, ...envs], PARSERS);
  t.equal(verdicts[0], null, 'the good environment is accepted');
  for (const [i, [name, variable]] of BAD_ENVS.entries()) t.match(verdicts[i + 1], variable, `${name}: refused, naming ${variable}`);
});

// The process's side of a bad environment, for a few of them: the parser's refusal above is exit 64
// before anything is opened or connected.
const BAD_ENVS_AS_PROCESSES = ['PORT missing', 'TOPICS uppercase', 'BACKOFF_CAP_MS below BASE', 'FAULT unknown point'];

forEachFeedConsumer(t, 'bad environment: exit 64 naming the variable, nothing connected, no store created', async (t, c) => {
  const dir = t.testdir({ 'not-sqlite.db': 'this is a text file, not an SQLite database, and it is long enough to have a header\n'.repeat(4) });
  const server = await startFeedServer(t, (conn) => conn.end());
  const batch = BAD_ENVS.filter(([name]) => BAD_ENVS_AS_PROCESSES.includes(name)).map(([name, variable, breakIt], j) => {
    const db = join(dir, `c-${j}.db`);
    const env = feedEnv({ port: server.port, db, baseMs: 20, capMs: 100 });
    breakIt(env);
    return { name, variable, db, exit: startConsumer(t, c, env, 30000).exit };
  });
  t.equal(batch.length, BAD_ENVS_AS_PROCESSES.length, 'every one named is in BAD_ENVS');
  for (const { name, variable, db, exit } of batch) {
    const e = await exit;
    t.equal(e.code, 64, `${name}: exit 64`);
    t.match(e.stderr, variable, `${name}: stderr names ${variable}`);
    t.notOk(existsSync(db), `${name}: no store created`);
  }
  // Stores that cannot be opened: CHAOSLAB_DB is named, exit 64, nothing connected.
  const foreign = join(dir, 'foreign.db');
  const f = new Database(foreign);
  f.exec('CREATE TABLE feed_state (id INTEGER PRIMARY KEY, something TEXT)');
  f.close();
  const badCursor = join(dir, 'bad-cursor.db');
  const b = new Database(badCursor);
  b.exec(`CREATE TABLE feed_state (id INTEGER PRIMARY KEY CHECK (id = 1), cursor TEXT, block_hash TEXT, snapshot_cursor TEXT, snapshot_block_hash TEXT);
          INSERT INTO feed_state VALUES (1, 'yesterday', '0xab', NULL, NULL);`);
  b.close();
  for (const [name, db] of [
    ['directory does not exist', join(dir, 'no-such-dir', 'c.db')],
    ['not an SQLite file', join(dir, 'not-sqlite.db')],
    ['another schema', foreign],
    ['a stored cursor that is not a cursor', badCursor],
  ] as const) {
    const exit = await startConsumer(t, c, feedEnv({ port: server.port, db }), 20000).exit;
    t.equal(exit.code, 64, `${name}: exit 64 (${exit.stderr.trim()})`);
    t.match(exit.stderr, 'CHAOSLAB_DB', `${name}: stderr names CHAOSLAB_DB`);
  }
  t.equal(server.conns.length, 0, 'nothing connected');
  // Repaired, the same environment connects: the server was reachable all along.
  const ok = runFeed(t, c, { port: server.port, db: join(dir, 'ok.db'), applyDelayMs: 0, fault: 'stop@revoke:9,raise@apply:7' });
  t.ok(await server.connections(1), 'a valid environment connects');
  await stopped(t, ok);
});

// ---------------------------------------------------------------- subscribe, snapshot, events

forEachFeedConsumer(t, 'fresh store: subscribe with null/null, then the snapshot and the events are stored', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const snap = snapshot(10, 3, { [A]: '1000', [B]: '5', [C]: '7' });
  const events = [transfer(11, 0, A, B, 25), other(11, 1), transfer(12, 0, C, A, 3), transfer(12, 1, B, B, 9), transfer(12, 2, C, C, 4)];
  const server = await startFeedServer(t, async (conn) => {
    if (!(await conn.subscribed())) return;
    conn.sendAll([snap, ...events]);
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, clientId: 'client-7' });
  t.ok(await server.connections(1));
  t.ok(await server.conns[0]!.subscribed());
  t.strictSame(server.conns[0]!.subscribe, { op: 'subscribe', client: 'client-7', topics: TOPICS, cursor: null, blockHash: null });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(12, 2)), 'the last event is stored');
  t.strictSame(readFeedStore(db), {
    cursor: cur(12, 2),
    blockHash: blockHash(12),
    snapshotCursor: cur(10, 3),
    snapshotBlockHash: blockHash(10),
    events: eventsOf(events),
    // A: 1000 - 25 + 3; B: 5 + 25 (the self-transfer changes nothing); C is not followed.
    balances: { [A]: '978', [B]: '30' },
  });
  await stopped(t, run);
  t.equal(server.conns.length, 1, 'one connection: nothing made it reconnect');
});

forEachFeedConsumer(t, 'resends are duplicates by cursor: stored once, counted once; the subscribe carries the durable cursor', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const e1 = transfer(11, 0, C, A, 10);
  const e2 = transfer(11, 1, A, B, 4);
  const e2other = transfer(11, 1, A, B, 999); // same cursor, other content: still a duplicate
  const e3 = transfer(12, 0, B, A, 1);
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.sendAll([snapshot(10, 0, { [A]: '100' }), e1, e2]);
      await storeReaches(db, (s) => s.cursor === cur(11, 1));
      conn.end();
      return;
    }
    conn.sendAll([e1, e2, e2other, e1, e3]);
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(2), 'reconnected after the server closed');
  t.ok(await server.conns[1]!.subscribed());
  t.strictSame(await server.subscription(1), subAt(11, 1), 'second subscribe: the durable cursor and its block hash');
  t.ok(await storeReaches(db, (s) => s.cursor === cur(12, 0)));
  const s = readFeedStore(db)!;
  t.strictSame(s.events, eventsOf([e1, e2, e3]), 'each event once, in cursor order');
  t.strictSame(s.balances, { [A]: '107', [B]: '3' }, 'A: 100 + 10 - 4 + 1, B: 0 + 4 - 1');
  await stopped(t, run);
});

forEachFeedConsumer(t, 'revoke undoes balances and activity; a revoke into the snapshot resubscribes with null', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const snap = snapshot(10, 0, { [A]: '1000' });
  const e11a = transfer(11, 0, A, B, 100);
  const e11b = other(11, 1);
  const e12 = transfer(12, 0, B, A, 30);
  const e12b = transfer(12, 1, C, B, 2);
  const e13 = transfer(13, 0, C, B, 7);
  const e12fork = transfer(12, 0, A, C, 50, 1);
  const snap2 = snapshot(15, 0, { [A]: '1', [B]: '2' }, 1);
  let afterRevoke: FeedStore | undefined;
  let afterFork: FeedStore | undefined;
  let beyond: FeedStore | undefined;
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.sendAll([snap, e11a, e11b, e12, e12b, e13]);
      if (!(await storeReaches(db, (s) => s.cursor === cur(13, 0)))) return;
      conn.send(revokeFrom(12));
      await storeReaches(db, (s) => s.cursor === cur(11, 1));
      afterRevoke = readFeedStore(db);
      conn.send(e12fork);
      await storeReaches(db, (s) => s.cursor === cur(12, 0));
      afterFork = readFeedStore(db);
      conn.send(revokeFrom(20)); // beyond the cursor: changes nothing
      await sleep(400);
      beyond = readFeedStore(db);
      conn.send(revokeFrom(10)); // into the snapshot: cannot be undone
      await conn.closedWithin(10000);
      return;
    }
    await sleep(200); // the store must still be as it was: nothing changes before the new snapshot
    conn.send(snap2);
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(2), 'reconnected after the revoke into the snapshot');
  const undone = { [A]: '900', [B]: '100' };
  t.strictSame(afterRevoke?.events, eventsOf([e11a, e11b]), 'events of blocks 12 and 13 removed');
  t.strictSame(afterRevoke?.balances, undone, 'their transfers undone: A 1000 - 100, B 100');
  t.strictSame([afterRevoke?.cursor, afterRevoke?.blockHash], [cur(11, 1), blockHash(11)], 'cursor: the greatest remaining event');
  t.strictSame(afterFork?.events, eventsOf([e11a, e11b, e12fork]), 'the new fork applies after the revoke');
  t.strictSame(afterFork?.balances, { [A]: '850', [B]: '100' });
  t.strictSame([afterFork?.cursor, afterFork?.blockHash], [cur(12, 0), blockHash(12, 1)], 'block hash of the new fork');
  t.strictSame(beyond, afterFork, 'a revoke beyond the cursor changes nothing');
  t.ok(await closedByConsumer(server.conns[0]), 'the consumer closed after the revoke into the snapshot');
  t.strictSame(await server.subscription(1), NULL_SUB, 'and resubscribed with null/null');
  t.ok(await storeReaches(db, (s) => s.snapshotCursor === cur(15, 0)), 'the new snapshot is installed');
  t.strictSame(readFeedStore(db), {
    cursor: cur(15, 0),
    blockHash: blockHash(15, 1),
    snapshotCursor: cur(15, 0),
    snapshotBlockHash: blockHash(15, 1),
    events: [],
    balances: { [A]: '1', [B]: '2' },
  });
  await stopped(t, run);
});

forEachFeedConsumer(t, 'revoke with no snapshot in the store: undone down to an empty cursor, then a snapshot is asked for', async (t, c) => {
  const dir = t.testdir();
  const db = join(dir, 'consumer.db');
  // A store written by someone else: events but no snapshot (the contract's "or no snapshot").
  const seed = new Database(db);
  seed.exec(`CREATE TABLE feed_state (id INTEGER PRIMARY KEY CHECK (id = 1), cursor TEXT, block_hash TEXT, snapshot_cursor TEXT, snapshot_block_hash TEXT);
             CREATE TABLE feed_events (cursor TEXT PRIMARY KEY, type TEXT NOT NULL, payload TEXT NOT NULL);
             CREATE TABLE feed_balances (account TEXT PRIMARY KEY, amount TEXT NOT NULL);`);
  const e = transfer(11, 0, C, A, 5);
  seed.prepare('INSERT INTO feed_state VALUES (1, ?, ?, NULL, NULL)').run(cur(11, 0), blockHash(11));
  seed.prepare('INSERT INTO feed_events VALUES (?, ?, ?)').run(cur(11, 0), 'Transfer', JSON.stringify(e.payload));
  seed.prepare('INSERT INTO feed_balances VALUES (?, ?)').run(A, '5');
  seed.close();
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.send(revokeFrom(11));
      await storeReaches(db, (s) => s.cursor === null);
      conn.end();
      return;
    }
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(2));
  t.strictSame(await server.subscription(0), subAt(11, 0), 'first subscribe: the stored cursor');
  t.strictSame(await server.subscription(1), NULL_SUB, 'after the revoke emptied the store: null/null');
  t.strictSame(readFeedStore(db), { cursor: null, blockHash: null, snapshotCursor: null, snapshotBlockHash: null, events: [], balances: { [A]: '0' } });
  await stopped(t, run);
});

// ---------------------------------------------------------------- reset

forEachFeedConsumer(t, 'reset stale-cursor: resubscribe with null (kept through a slow-consumer reset) until a snapshot came', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const e11 = transfer(11, 0, C, A, 10);
  const e21 = transfer(21, 0, A, B, 1);
  let storeAtNull: FeedStore | undefined;
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.sendAll([snapshot(10, 0, { [A]: '100' }), e11]);
      await storeReaches(db, (s) => s.cursor === cur(11, 0));
      conn.send(reset('stale-cursor'));
      conn.end();
    } else if (i === 1) {
      storeAtNull = readFeedStore(db);
      conn.send(reset('slow-consumer')); // before any snapshot: one is still needed
      conn.end();
    } else if (i === 2) {
      conn.sendAll([snapshot(20, 0, { [A]: '7', [B]: '1' }), e21]);
      await storeReaches(db, (s) => s.cursor === cur(21, 0));
      conn.send(reset('shutdown'));
      conn.end();
    } else {
      await conn.closedWithin(60000);
    }
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(4));
  t.strictSame(await server.subscription(1), NULL_SUB, 'after stale-cursor: null/null');
  t.strictSame(storeAtNull?.events, eventsOf([e11]), 'the reset itself changed nothing in the store');
  t.strictSame(await server.subscription(2), NULL_SUB, 'a slow-consumer reset before the snapshot: still null/null');
  t.strictSame(await server.subscription(3), subAt(21, 0), 'once the snapshot is installed: the durable cursor again');
  const s = readFeedStore(db)!;
  t.strictSame(s.events, eventsOf([e21]), 'the snapshot emptied the activity list');
  t.strictSame(s.balances, { [A]: '6', [B]: '2' });
  await stopped(t, run);
});

forEachFeedConsumer(t, 'reset slow-consumer, shutdown or an unknown reason: the consumer closes and resubscribes with its durable cursor', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.sendAll([snapshot(10, 0, { [A]: '100' }), transfer(11, 0, C, A, 1)]);
      await storeReaches(db, (s) => s.cursor === cur(11, 0));
      conn.send(reset('slow-consumer')); // the server does not close: the consumer must
      await conn.closedWithin(10000);
    } else if (i === 1) {
      conn.send(transfer(12, 0, C, A, 1));
      await storeReaches(db, (s) => s.cursor === cur(12, 0));
      conn.send(reset('shutdown'));
      await conn.closedWithin(10000);
    } else if (i === 2) {
      conn.send(reset('maintenance'));
      await conn.closedWithin(10000);
    } else {
      await conn.closedWithin(60000);
    }
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(4));
  for (const i of [0, 1, 2]) t.ok(await closedByConsumer(server.conns[i]), `connection ${i}: closed by the consumer after the reset`);
  t.strictSame(await server.subscription(1), subAt(11, 0), 'after slow-consumer: the durable cursor');
  t.strictSame(await server.subscription(2), subAt(12, 0), 'after shutdown: the durable cursor');
  t.strictSame(await server.subscription(3), subAt(12, 0), 'an unknown reason counts as shutdown');
  t.equal(readFeedStore(db)?.events.length, 2, 'no snapshot was asked for: the activity list is kept');
  await stopped(t, run);
});

// ---------------------------------------------------------------- heartbeats and idle timeout

forEachFeedConsumer(t, 'ping both ways: server pings are answered with the same id (digits kept), the consumer pings when it sent nothing', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startFeedServer(t, async (conn) => {
    if (!(await conn.subscribed())) return;
    conn.send(snapshot(10, 0, {}));
    conn.send('{"op":"ping","id":7}\n{"op":"ping","id":0}\n{"op":"ping","id":18446744073709551617}\n');
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, pingMs: 250, idleMs: 10000 });
  t.ok(await server.connections(1));
  const conn = server.conns[0]!;
  const pong = (id: string): RegExp => new RegExp(`^\\{\\s*"op"\\s*:\\s*"pong"\\s*,\\s*"id"\\s*:\\s*${id}\\s*\\}$`);
  t.ok(await conn.until(() => conn.lines.some((l) => pong('18446744073709551617').test(l))), 'pong for a 65-bit id, digits exactly as sent');
  for (const id of ['7', '0'])
    t.ok(
      conn.lines.some((l) => pong(id).test(l)),
      `pong id ${id}`,
    );
  // Our answers to the consumer's pings must not disturb it.
  let answered = 0;
  conn.socket.on('data', () => {
    const pings = conn.framesWith('ping');
    for (; answered < pings.length; answered++) conn.send({ op: 'pong', id: pings[answered]!.id });
  });
  t.ok(await conn.until(() => conn.framesWith('ping').length >= 4, 15000), 'the consumer sends pings while it has nothing else to send');
  const pings = conn.lines.map((l, i) => ({ f: JSON.parse(l) as Obj, at: conn.times[i]! })).filter((x) => x.f.op === 'ping');
  t.ok(
    pings.every((p) => Number.isInteger(p.f.id) && (p.f.id as number) >= 0),
    'ping ids are JSON integers >= 0',
  );
  t.equal(new Set(pings.map((p) => p.f.id)).size, pings.length, 'ping ids are distinct');
  const span = pings[pings.length - 1]!.at - conn.times[0]!;
  t.ok(pings.length <= span / 200 + 2, `one ping per interval, not a burst (${pings.length} pings in ${Math.round(span)} ms, PING_MS 250)`);
  t.notOk(conn.closed, 'the connection stays open');
  t.equal(server.conns.length, 1);
  await stopped(t, run);
});

forEachFeedConsumer(t, 'idle timeout: nothing received for IDLE_MS closes the connection, then it reconnects with its cursor', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  let lastSent = 0;
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.send(snapshot(10, 0, { [A]: '1' }));
      lastSent = now(); // then silence; the consumer's pings are read but never answered
    }
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, pingMs: 200, idleMs: 800 });
  t.ok(await server.connections(2, 20000), 'reconnected');
  const conn0 = server.conns[0]!;
  t.ok(await closedByConsumer(conn0), 'the consumer closed the silent connection');
  const waited = conn0.closedAt - lastSent;
  t.ok(waited >= 700 && waited < 6000, `after about IDLE_MS of silence (${Math.round(waited)} ms)`);
  t.ok(conn0.framesWith('ping').length >= 2, 'it kept pinging meanwhile');
  t.strictSame(await server.subscription(1), subAt(10, 0), 'resubscribed with its durable cursor');
  await stopped(t, run);
});

// ---------------------------------------------------------------- reconnect backoff

forEachFeedConsumer(t, 'reconnect backoff: min(BASE x 2^n, CAP) x U(0.5, 1.5), jitter at the cap, n back to 0 after data', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const BASE = 50;
  const CAP = 800;
  const FAILS = 10; // connections 0..9 are closed at once: attempts n = 0..9 follow them
  const server = await startFeedServer(t, async (conn, i) => {
    if (i < FAILS) return conn.end(); // accepted and closed at once: no snapshot, no event
    if (!(await conn.subscribed())) return;
    if (i === FAILS) {
      conn.send(snapshot(10, 0, { [A]: '1' }));
      await storeReaches(db, (s) => s.cursor !== null);
      conn.end();
      return;
    }
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, baseMs: BASE, capMs: CAP });
  t.ok(await server.connections(FAILS + 2, 60000), 'kept reconnecting');
  const gap = (k: number): number => server.conns[k + 1]!.openedAt - server.conns[k]!.serverClosedAt;
  const ratios: number[] = [];
  for (let k = 0; k < FAILS; k++) {
    const d = Math.min(BASE * 2 ** k, CAP);
    const g = gap(k);
    ratios.push(g / d);
    t.ok(g >= 0.5 * d - 15 && g <= 1.5 * d + 1000, `attempt n=${k}: waited ${Math.round(g)} ms, within [${0.5 * d}, ${1.5 * d}] (+ slack)`);
  }
  const atCap = ratios.slice(4).map((r) => r * CAP); // n >= 4: BASE x 2^n >= CAP
  const spread = Math.max(...atCap) - Math.min(...atCap);
  t.ok(spread > 60, `waits at the cap are jittered too, not clamped (${atCap.map(Math.round).join(', ')} ms)`);
  t.ok(
    ratios.some((r) => r < 0.85 || r > 1.15),
    `waits are not min(BASE x 2^n, CAP) exactly (ratios ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
  );
  const afterData = gap(FAILS);
  t.ok(afterData <= 1.5 * BASE + 300, `after a connection with a snapshot, n is 0 again (waited ${Math.round(afterData)} ms, not >= ${CAP / 2})`);
  await stopped(t, run);
});

// ---------------------------------------------------------------- SIGTERM

forEachFeedConsumer(t, 'SIGTERM while a slow transaction waits: rolled back, exit 0 within 2 s', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startFeedServer(t, async (conn) => {
    if (!(await conn.subscribed())) return;
    conn.sendAll([snapshot(10, 0, { [A]: '5' }), transfer(11, 0, A, B, 1)]);
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, applyDelayMs: 20000 });
  t.ok(await storeReaches(db, (s) => s.snapshotCursor !== null), 'snapshot installed');
  t.ok(await until(() => inTransaction(db)), 'the event transaction is open (waiting APPLY_DELAY_MS)');
  await stopped(t, run);
  t.strictSame(readFeedStore(db), {
    cursor: cur(10, 0),
    blockHash: blockHash(10),
    snapshotCursor: cur(10, 0),
    snapshotBlockHash: blockHash(10),
    events: [],
    balances: { [A]: '5', [B]: '0' },
  });
});

forEachFeedConsumer(t, 'SIGTERM during a reconnect wait: exit 0 within 2 s, no further connect', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startFeedServer(t, (conn) => conn.end());
  const run = runFeed(t, c, { port: server.port, db, baseMs: 20000, capMs: 20000 });
  t.ok(await server.connections(1));
  await sleep(300);
  await stopped(t, run);
  t.equal(server.conns.length, 1);
});

// ---------------------------------------------------------------- fault hooks

const S = snapshot(10, 0, { [A]: '100' });
const e1 = transfer(11, 0, A, B, 10);
const e2 = transfer(11, 1, A, B, 20);
const e3 = transfer(12, 0, A, B, 5);

interface Expect {
  cursor: string | null;
  events: Obj[];
  balances: Record<string, string>;
}
const stateOf = (s: FeedStore | undefined): Expect | undefined => s && { cursor: s.cursor, events: s.events as unknown as Obj[], balances: s.balances };
const want = (cursor: string | null, events: Obj[], balances: Record<string, string>): Expect => ({
  cursor,
  events: eventsOf(events) as unknown as Obj[],
  balances,
});

const AFTER_S = want(cur(10, 0), [], { [A]: '100', [B]: '0' });
const AFTER_E1 = want(cur(11, 0), [e1], { [A]: '90', [B]: '10' });
const AFTER_E2 = want(cur(11, 1), [e1, e2], { [A]: '70', [B]: '30' });
const EMPTY_STORE = want(null, [], {});

// exit: exit 86 at once; the store shows the transaction undone (apply, snapshot, revoke) or done (commit).
const EXIT_CASES: [string, Obj[], Expect][] = [
  ['exit@apply:2', [S, e1, e2], AFTER_E1],
  ['exit@commit:2', [S, e1, e2], AFTER_E2],
  ['exit@snapshot:1', [S, e1], EMPTY_STORE],
  ['exit@revoke:1', [S, e1, e2, revokeFrom(11)], AFTER_E2],
];

for (const [fault, frames, expected] of EXIT_CASES) {
  forEachFeedConsumer(t, `${fault}: exit 86 at once, the store as the hook left it`, async (t, c) => {
    const db = join(t.testdir(), 'consumer.db');
    const server = await startFeedServer(t, async (conn) => {
      if (!(await conn.subscribed())) return;
      conn.sendAll(frames);
      await conn.closedWithin(30000);
    });
    const exit = await runFeed(t, c, { port: server.port, db, fault }).exit;
    t.equal(exit.code, 86, exit.stderr);
    t.strictSame(stateOf(readFeedStore(db)), expected);
    t.equal(server.conns.length, 1);
  });
}

// raise: the normal error path; the references roll back, close and reconnect.
const RAISE_CASES: [string, Obj[][], { cursor: unknown; blockHash: unknown }, Expect, Expect][] = [
  // [fault, frames per connection, second subscribe, store after connection 0, final store]
  [
    'raise@apply:1',
    [
      [S, e1],
      [e1, e2],
    ],
    subAt(10, 0),
    AFTER_S,
    AFTER_E2,
  ],
  [
    'raise@commit:1',
    [
      [S, e1],
      [e1, e2],
    ],
    subAt(11, 0),
    AFTER_E1,
    AFTER_E2,
  ],
  ['raise@snapshot:1', [[S], [S, e1]], NULL_SUB, EMPTY_STORE, AFTER_E1],
  [
    'raise@revoke:1',
    [
      [S, e1, e2, revokeFrom(11)],
      [revokeFrom(11), e3],
    ],
    subAt(11, 1),
    AFTER_E2,
    want(cur(12, 0), [e3], { [A]: '95', [B]: '5' }),
  ],
];

for (const [fault, perConn, secondSub, afterFirst, final] of RAISE_CASES) {
  forEachFeedConsumer(t, `${fault}: rolled back, closed, reconnected with the durable cursor; the hook does not fire again`, async (t, c) => {
    const db = join(t.testdir(), 'consumer.db');
    let atSecondSubscribe: FeedStore | undefined;
    const server = await startFeedServer(t, async (conn, i) => {
      if (!(await conn.subscribed())) return;
      if (i === 1) atSecondSubscribe = readFeedStore(db); // what the first connection left
      conn.sendAll(perConn[Math.min(i, 1)]!);
      await conn.closedWithin(60000);
    });
    const run = runFeed(t, c, { port: server.port, db, fault });
    t.ok(await server.connections(2), 'reconnected');
    t.ok(await closedByConsumer(server.conns[0]), 'the consumer closed the connection');
    t.strictSame(await server.subscription(1), secondSub);
    await until(() => atSecondSubscribe !== undefined);
    t.strictSame(stateOf(atSecondSubscribe), afterFirst, 'the raising transaction was rolled back');
    t.ok(await storeReaches(db, (s) => s.cursor === final.cursor && s.events.length === final.events.length), 'the resend is applied');
    t.strictSame(stateOf(readFeedStore(db)), final);
    await stopped(t, run);
    t.equal(server.conns.length, 2, 'no further reconnect: the hook fired once');
  });
}

// stop: SIGSTOP inside the transaction (or right after COMMIT); an outside read sees the state, SIGCONT goes on.
const STOP_CASES: [string, Obj[], Expect, Expect][] = [
  ['stop@apply:1', [S, e1, e2], AFTER_S, AFTER_E2],
  ['stop@commit:1', [S, e1, e2], AFTER_E1, AFTER_E2],
  ['stop@snapshot:1', [S, e1, e2], EMPTY_STORE, AFTER_E2],
  ['stop@revoke:1', [S, e1, e2, revokeFrom(11)], AFTER_E2, AFTER_S],
];

for (const [fault, frames, whileStopped, final] of STOP_CASES) {
  forEachFeedConsumer(
    t,
    `${fault}: stopped, an independent read sees ${fault.includes('commit') ? 'the commit' : 'nothing of the transaction'}, SIGCONT completes it`,
    async (t, c) => {
      const db = join(t.testdir(), 'consumer.db');
      const server = await startFeedServer(t, async (conn) => {
        if (!(await conn.subscribed())) return;
        conn.sendAll(frames);
        await conn.closedWithin(60000);
      });
      const run = runFeed(t, c, { port: server.port, db, fault });
      t.ok(await waitForState(run.pid, 'T', 15000), 'the process stopped itself');
      t.strictSame(stateOf(readFeedStore(db)), whileStopped);
      process.kill(run.pid, 'SIGCONT');
      t.ok(await storeReaches(db, (s) => s.cursor === final.cursor && s.events.length === final.events.length));
      t.strictSame(stateOf(readFeedStore(db)), final);
      await stopped(t, run);
      t.equal(server.conns.length, 1);
    },
  );
}

forEachFeedConsumer(t, 'hooks count only new events: a duplicate is not numbered', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    conn.sendAll(i === 0 ? [S, e1] : [e1, e2, e3]);
    await conn.closedWithin(60000);
  });
  const first = runFeed(t, c, { port: server.port, db });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(11, 0)));
  await stopped(t, first);
  // e1 comes again as a duplicate: e2 is new event 1, e3 is new event 2 (where it exits).
  const exit = await runFeed(t, c, { port: server.port, db, fault: 'exit@apply:2' }).exit;
  t.equal(exit.code, 86, exit.stderr);
  t.strictSame(await server.subscription(1), subAt(11, 0), 'the restarted process subscribes with the stored cursor');
  t.strictSame(stateOf(readFeedStore(db)), AFTER_E2);
});

forEachFeedConsumer(t, 'hooks: a revoke into the snapshot opens no transaction and is not counted', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const S2 = snapshot(12, 0, { [A]: '7' });
  const e13 = transfer(13, 0, A, B, 1);
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    conn.sendAll(i === 0 ? [S, e1, revokeFrom(10)] : [S2, e13, revokeFrom(13)]);
    await conn.closedWithin(30000);
  });
  const exit = await runFeed(t, c, { port: server.port, db, fault: 'exit@revoke:1' }).exit;
  t.equal(exit.code, 86, exit.stderr);
  t.equal(server.conns.length, 2, 'the revoke into the snapshot made it reconnect, not exit');
  t.strictSame(await server.subscription(1), NULL_SUB);
  t.strictSame(stateOf(readFeedStore(db)), want(cur(13, 0), [e13], { [A]: '6', [B]: '1' }), 'exit at the first counted revoke, before its COMMIT');
});

// ---------------------------------------------------------------- exact amounts

forEachFeedConsumer(t, 'amounts above 2^64 are exact (BigInt / int), negative balances as "-n", 2^256 is refused', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const x = 2n ** 70n + 1n;
  const t1 = transfer(11, 0, A, B, 5n);
  const t2 = transfer(11, 1, C, A, x);
  const t3 = transfer(12, 0, A, C, BIG);
  const t4 = transfer(12, 1, B, A, MAX);
  let afterT4: FeedStore | undefined;
  let afterRevoke: FeedStore | undefined;
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.sendAll([snapshot(10, 0, { [A]: BIG.toString(), [B]: (MAX - 5n).toString(), [C]: MAX.toString() }), t1, t2, t3, t4]);
      await storeReaches(db, (s) => s.cursor === cur(12, 1));
      afterT4 = readFeedStore(db);
      conn.send(revokeFrom(12));
      await storeReaches(db, (s) => s.cursor === cur(11, 1));
      afterRevoke = readFeedStore(db);
      conn.send(transfer(13, 0, C, A, (MAX + 1n).toString())); // 2^256: not an amount
      await conn.closedWithin(10000);
      return;
    }
    conn.send(transfer(13, 0, A, C, BIG - 5n + x + 1n)); // one more than A holds
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await server.connections(2));
  // A: 2^200 - 5 + x - 2^200 + MAX; B: MAX - 5 + 5 - MAX.
  t.strictSame(afterT4?.balances, { [A]: (x - 5n + MAX).toString(), [B]: '0' }, 'sums above 2^256 - 1 stay exact');
  t.strictSame(afterRevoke?.balances, { [A]: (BIG - 5n + x).toString(), [B]: MAX.toString() }, 'the revoke undoes them exactly');
  t.ok(await closedByConsumer(server.conns[0]), 'an amount of 2^256 is an invalid frame: closed');
  t.strictSame(await server.subscription(1), subAt(11, 1), 'nothing of it applied');
  t.ok(await storeReaches(db, (s) => s.cursor === cur(13, 0)));
  t.equal(readFeedStore(db)?.balances[A], '-1', 'a negative balance is stored as "-1"');
  await stopped(t, run);
});

forEachFeedConsumer(t, 'payloads are stored exactly: big numbers, fractions and exponents keep their digits', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const raw = `{"op":"event","cursor":"${cur(11, 0)}","type":"Mint","payload":{"blockHash":"${blockHash(11)}","n":123456789012345678901234567890,"f":1.50,"e":-2.5e-400,"s":"\\u00e9\\ud83d\\ude00"}}`;
  const server = await startFeedServer(t, async (conn) => {
    if (!(await conn.subscribed())) return;
    conn.sendAll([S]);
    conn.send(`${raw}\n`);
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(11, 0)));
  const r = new Database(db, { readonly: true });
  const { payload } = r.prepare('SELECT payload FROM feed_events').get() as { payload: string };
  r.close();
  t.match(payload, /"n"\s*:\s*123456789012345678901234567890\s*[,}]/, 'a 30-digit integer is not rounded');
  t.match(payload, /"f"\s*:\s*1\.50\s*[,}]/, '1.50 keeps its digits');
  t.match(payload, /"e"\s*:\s*-2\.5e-400\s*[,}]/, 'an exponent beyond a double is kept');
  t.equal((JSON.parse(payload) as { s: string }).s, 'é😀', 'strings decode to the same text');
  await stopped(t, run);
});

// ---------------------------------------------------------------- malformed frames

/** The raw JSON of an object with one field replaced (undefined: removed). */
function tweak(frame: Obj, path: string[], value: unknown): string {
  const copy = JSON.parse(JSON.stringify(frame)) as Obj;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Obj;
  const last = path[path.length - 1]!;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return JSON.stringify(copy);
}

/**
 * Each bad line (its LF is added) comes in one write together with a valid event after it:
 * a consumer that skipped or repaired the bad line would apply that event too. `b` is the
 * block the bad line's own cursor may use (the valid event after it uses the same block).
 */
const MALFORMED: [string, (b: number) => string | Buffer][] = [
  ['not JSON', () => '{"op":"event",'],
  ['an empty line', () => ''],
  ['only spaces', () => '   '],
  ['a JSON array', () => '[{"op":"ping","id":1}]'],
  ['a JSON string', () => '"event"'],
  ['two JSON values on one line', () => '{"op":"ping","id":1}{"op":"ping","id":2}'],
  ['trailing garbage', () => '{"op":"ping","id":1} x'],
  ['op missing', (b) => tweak(transfer(b, 0, C, A, 1), ['op'], undefined)],
  ['op not a string', () => '{"op":7}'],
  [
    'invalid UTF-8',
    (b) => Buffer.concat([Buffer.from(`{"op":"event","cursor":"${cur(b)}","type":"X`), Buffer.from([0xff]), Buffer.from(`","payload":{"blockHash":"h"}}`)]),
  ],
  ['a UTF-8 byte order mark', (b) => `\ufeff${JSON.stringify(transfer(b, 0, C, A, 1))}`],
  ['NaN', () => '{"op":"ping","id":NaN}'],
  ['a raw control character in a string', (b) => JSON.stringify(transfer(b, 0, C, A, 1)).replace('"Transfer"', '"Trans\tfer"')],
  ['an escaped lone surrogate', (b) => tweak(other(b, 0), ['type'], 'X').replace('"type":"X"', '"type":"\\ud800"')],
  ['nested deeper than 64 levels', (b) => tweak(other(b, 0), ['payload', 'deep'], JSON.parse(`${'['.repeat(65)}${']'.repeat(65)}`))],
  ['event lacks cursor', (b) => tweak(transfer(b, 0, C, A, 1), ['cursor'], undefined)],
  ['event lacks type', (b) => tweak(transfer(b, 0, C, A, 1), ['type'], undefined)],
  ['event type not a string', (b) => tweak(transfer(b, 0, C, A, 1), ['type'], 1)],
  ['event lacks payload', (b) => tweak(transfer(b, 0, C, A, 1), ['payload'], undefined)],
  ['payload not an object', (b) => tweak(transfer(b, 0, C, A, 1), ['payload'], 'x')],
  ['payload lacks blockHash', (b) => tweak(other(b, 0), ['payload', 'blockHash'], undefined)],
  ['blockHash not a string', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'blockHash'], 12)],
  ['Transfer lacks from', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'from'], undefined)],
  ['Transfer lacks to', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'to'], undefined)],
  ['Transfer lacks amount', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], undefined)],
  ['Transfer lacks txHash', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'txHash'], undefined)],
  ['amount as a JSON number', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], 25)],
  ['amount with a leading zero', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], '025')],
  ['amount with a plus sign', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], '+5')],
  ['amount negative', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], '-5')],
  ['amount with a fraction', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], '1.5')],
  ['amount empty', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], '')],
  ['amount with a non-ASCII digit', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], '\uff11')],
  ['amount 2^256', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'amount'], (MAX + 1n).toString())],
  ['from in uppercase hex', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'from'], C.toUpperCase().replace('0X', '0x'))],
  ['to with 39 hex digits', (b) => tweak(transfer(b, 0, C, A, 1), ['payload', 'to'], A.slice(0, -1))],
  ['cursor without padding', (b) => tweak(transfer(b, 0, C, A, 1), ['cursor'], `1:${b}:0`)],
  ['cursor with 13 block digits', (b) => tweak(transfer(b, 0, C, A, 1), ['cursor'], cur(b).replace(':0', ':'))],
  ['cursor with a leading-zero chain id', (b) => tweak(transfer(b, 0, C, A, 1), ['cursor'], `0${cur(b)}`)],
  ['cursor not a string', (b) => tweak(transfer(b, 0, C, A, 1), ['cursor'], 1)],
  ['cursor on another chain', (b) => tweak(transfer(b, 0, C, A, 1), ['cursor'], cur(b, 0, 2))],
  ['snapshot lacks state', (b) => tweak(snapshot(b, 0, {}), ['state'], undefined)],
  ['snapshot lacks blockHash', (b) => tweak(snapshot(b, 0, {}), ['blockHash'], undefined)],
  ['snapshot balances not an object', (b) => tweak(snapshot(b, 0, {}), ['state', 'balances'], [])],
  ['snapshot: a malformed amount for an account not followed', (b) => JSON.stringify(snapshot(b, 0, { [A]: '1', [C]: '-1' }))],
  ['snapshot: a malformed account', (b) => JSON.stringify(snapshot(b, 0, { [A]: '1', nobody: '1' }))],
  ['snapshot on another chain', (b) => tweak(snapshot(b, 0, {}), ['cursor'], cur(b, 0, 3))],
  ['revoke lacks fromCursor', () => '{"op":"revoke"}'],
  ['revoke with a malformed cursor', () => '{"op":"revoke","fromCursor":"1:12:0"}'],
  ['revoke on another chain', (b) => JSON.stringify({ op: 'revoke', fromCursor: cur(b, 0, 2) })],
  ['reset lacks reason', () => '{"op":"reset"}'],
  ['reset reason not a string', () => '{"op":"reset","reason":1}'],
  ['ping lacks id', () => '{"op":"ping"}'],
  ['ping id with a fraction', () => '{"op":"ping","id":1.0}'],
  ['ping id with an exponent', () => '{"op":"ping","id":1e2}'],
  ['ping id negative', () => '{"op":"ping","id":-1}'],
  ['ping id -0', () => '{"op":"ping","id":-0}'],
  ['ping id a string', () => '{"op":"ping","id":"7"}'],
  ['pong lacks id', () => '{"op":"pong"}'],
  ['a line of 1 MiB + 1 byte', (b) => JSON.stringify(other(b, 0, { pad: 'x'.repeat(1024 * 1024) })).slice(0, 1024 * 1024 + 1)],
];

forEachFeedConsumer(t, 'malformed frames: nothing of them or after them applied, closed, reconnected with the durable cursor', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const valid = (k: number): Obj => transfer(100 + 2 * k, 0, C, A, 1); // applied: A + 1 each
  const after = (k: number): Obj => transfer(101 + 2 * k, 0, C, A, 1000); // must never be applied
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.send(transfer(40, 0, C, A, 1)); // after cursor: null, an event before the snapshot is invalid
      await conn.closedWithin(10000);
      return;
    }
    const k = i - 1;
    const bad = MALFORMED[k];
    if (bad === undefined) return void (await conn.closedWithin(60000));
    conn.sendAll(k === 0 ? [snapshot(50, 0, { [A]: '0' }), valid(k)] : [valid(k)]);
    const text = bad[1](101 + 2 * k);
    conn.send(Buffer.concat([Buffer.isBuffer(text) ? text : Buffer.from(text), Buffer.from(`\n${line(after(k))}`)]));
    await conn.closedWithin(10000);
  });
  const run = runFeed(t, c, { port: server.port, db, idleMs: 30000, capMs: 40 });
  t.ok(await server.connections(MALFORMED.length + 2, 120000), 'one connection per case');
  t.ok(await closedByConsumer(server.conns[0]), 'an event before the snapshot (after cursor: null): closed');
  t.strictSame(await server.subscription(1), NULL_SUB, '... and a snapshot asked for again');
  for (const [k, [name]] of MALFORMED.entries()) {
    const conn = server.conns[k + 1]!;
    t.ok(await closedByConsumer(conn), `${name}: the consumer closed the connection`);
    t.strictSame(await server.subscription(k + 2), subAt(100 + 2 * k), `${name}: reconnected; the event before it applied, the one after it not`);
  }
  const s = readFeedStore(db)!;
  t.strictSame(s.events, eventsOf(MALFORMED.map((_, k) => valid(k))), 'only the valid events before each bad line');
  t.strictSame(s.balances, { [A]: String(MALFORMED.length), [B]: '0' });
  await stopped(t, run);
});

forEachFeedConsumer(
  t,
  'frames that are not invalid: unknown ops ignored, JSON spacing and a CR before the LF accepted, a line of exactly 1 MiB',
  async (t, c) => {
    const db = join(t.testdir(), 'consumer.db');
    const big = other(12, 0, { pad: '' });
    const bare = JSON.stringify(big).length;
    const exact = other(12, 0, { pad: 'y'.repeat(1024 * 1024 - bare) });
    const exactLine = JSON.stringify(exact);
    const spaced = transfer(11, 0, C, A, 3);
    const server = await startFeedServer(t, async (conn) => {
      if (!(await conn.subscribed())) return;
      conn.sendAll([
        snapshot(10, 0, {}),
        { op: 'hello', cursor: 'not even a cursor' },
        { op: 'subscribe', client: 'x', topics: [], cursor: null, blockHash: null },
      ]);
      conn.send(`  ${JSON.stringify(spaced, null, 1).replace(/\n/g, ' ')} \r\n`);
      conn.send(`{"op":"pong","id":3}\n${exactLine}\n`);
      await conn.closedWithin(60000);
    });
    const run = runFeed(t, c, { port: server.port, db });
    t.equal(Buffer.byteLength(exactLine), 1024 * 1024, 'the line is exactly 1 MiB without its LF');
    t.ok(await storeReaches(db, (s) => s.cursor === cur(12, 0)), 'everything applied');
    const s = readFeedStore(db)!;
    t.strictSame(cursors(s), [cur(11, 0), cur(12, 0)]);
    t.equal((s.events[1]!.payload as { pad: string }).pad.length, 1024 * 1024 - bare, 'the 1 MiB payload is stored whole');
    t.strictSame(s.balances, { [A]: '3', [B]: '0' });
    t.notOk(server.conns[0]!.closed, 'the connection stays open');
    await stopped(t, run);
    t.equal(server.conns.length, 1);
  },
);

forEachFeedConsumer(t, 'an unterminated line over 1 MiB is refused at once, without waiting for its LF', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  let sentAt = 0;
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i === 0) {
      conn.send(snapshot(10, 0, {}));
      conn.send(`{"op":"event","pad":"${'z'.repeat(1024 * 1024 + 16)}`); // no LF, ever
      sentAt = now();
    }
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, idleMs: 60000 });
  t.ok(await server.connections(2, 30000), 'reconnected');
  const conn0 = server.conns[0]!;
  t.ok(await closedByConsumer(conn0), 'closed by the consumer');
  t.ok(conn0.closedAt - sentAt < 10000, `without waiting for the idle timeout (${Math.round(conn0.closedAt - sentAt)} ms)`);
  t.strictSame(await server.subscription(1), subAt(10, 0));
  await stopped(t, run);
});

// ---------------------------------------------------------------- slow reader, long replays

forEachFeedConsumer(t, 'slow reader (APPLY_DELAY_MS): pings are answered and sent while a transaction waits', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  let pongWhileWaiting: FeedStore | undefined;
  let pingsWhileWaiting = -1;
  const server = await startFeedServer(t, async (conn) => {
    if (!(await conn.subscribed())) return;
    conn.sendAll([snapshot(10, 0, { [A]: '5' }), transfer(11, 0, A, B, 2)]);
    if (!(await until(() => inTransaction(db)))) return;
    await sleep(300);
    conn.send('{"op":"ping","id":42}\n');
    if (await conn.frame('pong', (f) => f.id === 42, 5000)) pongWhileWaiting = readFeedStore(db);
    await storeReaches(db, (s) => s.cursor === cur(11, 0), 20000);
    pingsWhileWaiting = conn.framesWith('ping').length;
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, applyDelayMs: 2500, pingMs: 300 });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(11, 0), 20000), 'the event commits after the delay');
  await until(() => pingsWhileWaiting >= 0, 20000);
  t.equal(pongWhileWaiting?.cursor, cur(10, 0), 'the pong came while the event was not committed yet');
  t.ok(pingsWhileWaiting >= 2, `the consumer pinged while it waited (${pingsWhileWaiting} pings in 2.5 s, PING_MS 300)`);
  t.equal(server.conns.length, 1);
  await stopped(t, run);
});

forEachFeedConsumer(t, 'long replay: a consumer busy applying is not idle while the server keeps talking', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  const replay = Array.from({ length: 4 }, (_, k) => transfer(11 + k, 0, C, A, 1));
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i > 0) return void (await conn.closedWithin(60000));
    conn.sendAll([snapshot(10, 0, {}), ...replay]); // each event waits longer than IDLE_MS
    const timer = setInterval(() => conn.send('{"op":"ping","id":1}\n'), 250);
    await conn.closedWithin(60000); // keeps talking until the consumer is stopped
    clearInterval(timer);
  });
  const run = runFeed(t, c, { port: server.port, db, applyDelayMs: 1200, idleMs: 800 });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(14, 0), 30000), 'the whole replay is applied');
  t.equal(server.conns.length, 1, 'on the first connection: it never judged itself idle');
  t.notOk(server.conns[0]!.closed);
  await stopped(t, run);
});

forEachFeedConsumer(t, 'idle is judged after reading: a COMMIT blocked past IDLE_MS still sees the ping that came meanwhile', async (t, c) => {
  const db = join(t.testdir(), 'consumer.db');
  let lockedFor = 0;
  const server = await startFeedServer(t, async (conn, i) => {
    if (!(await conn.subscribed())) return;
    if (i > 0) return void (await conn.closedWithin(60000));
    // A reader holds a SHARED lock: the consumer can write the snapshot, but its COMMIT waits
    // (synchronously, in SQLite's busy handler) until the lock is gone, far beyond IDLE_MS.
    const reader = new Database(db, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT cursor FROM feed_state').get();
    conn.send(snapshot(10, 0, { [A]: '3' }));
    const started = now();
    if (await until(() => inTransaction(db), 5000)) {
      await sleep(100);
      conn.send('{"op":"ping","id":5}\n'); // arrives while the consumer is stuck in COMMIT
      await sleep(800);
    }
    reader.exec('COMMIT');
    reader.close();
    lockedFor = now() - started;
    await conn.closedWithin(60000);
  });
  const run = runFeed(t, c, { port: server.port, db, idleMs: 400, pingMs: 60000 });
  t.ok(await storeReaches(db, (s) => s.cursor === cur(10, 0), 20000), 'the snapshot committed once the lock was gone');
  t.ok(
    await server.conns[0]!.frame('pong', (f) => f.id === 5, 5000),
    `the ping that arrived during the blocked COMMIT (${Math.round(lockedFor)} ms) is answered on the same connection: it was not judged idle first`,
  );
  await stopped(t, run);
});
