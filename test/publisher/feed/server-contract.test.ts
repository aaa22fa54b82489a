// The server contract (publisher/feed/CONTRACT.md, /work/shared/spec/feed-server-contract.md)
// checked from outside: every server command below is started as an OS process on an outbox
// the project's own chain and indexer write, and talked to over raw TCP (no Toxiproxy, no
// harness). Whatever the language, a server passes or fails on what it sends, when it closes
// and how it exits. The servers are test/helpers/feed-server-contract.ts's SERVERS; its clients
// that read slowly or not at all are ./server-contract-slow-clients.test.ts's (a file of its own:
// 30 s of waiting, run beside this one).

import t, { type Test } from 'tap';
import { formatCursor } from '../../../protocol/feed/cursor.js';
import { encodePing, encodeSubscribe } from '../../../protocol/feed/encode.js';
import { FeedClient, applyFrames, chainBalances, chainEvents, waitFor } from '../../helpers/feed-lab.js';
import { atMost } from '../../../harness/base/at-most.js';
import { atHead, cursorOf, eventCursors, everyEvent, forEachServer, lastCursorOfBlock } from '../../helpers/feed-server-contract.js';
import { type ServerUnderTest, runToExit, serverEnv, startOutbox, startServer } from '../../helpers/feed-server-rig.js';
import { freePort } from '../../../harness/base/free-port.js';

/** Waits until the server closed the connection, or sent something other than a reset (a wrong answer: no need to wait for a close). */
async function closedOrAnswered(c: FeedClient): Promise<void> {
  const wrong = () => c.data.some((f) => !('op' in f) || f.op !== 'reset');
  await waitFor(() => c.isClosed || wrong(), 'the server closes the connection', 60_000);
}

forEachServer('a bad environment: exit 64, the variable named on stderr, nothing listened on', async (t, server) => {
  const { path } = startOutbox(t, { initialBlocks: 2 });
  const cases: { bad: Record<string, string | undefined>; named: RegExp }[] = [
    { bad: { CHAOSLAB_OUTBOX_DB: undefined }, named: /CHAOSLAB_OUTBOX_DB/ },
    { bad: { CHAOSLAB_PORT: '0' }, named: /CHAOSLAB_PORT/ },
    { bad: { CHAOSLAB_PORT: '70000' }, named: /CHAOSLAB_PORT/ },
    { bad: { CHAOSLAB_QUEUE_LIMIT: '0' }, named: /CHAOSLAB_QUEUE_LIMIT/ },
    { bad: { CHAOSLAB_PING_MS: '1.5' }, named: /CHAOSLAB_PING_MS/ },
    { bad: { CHAOSLAB_IDLE_MS: undefined }, named: /CHAOSLAB_IDLE_MS/ },
    { bad: { CHAOSLAB_POLL_MS: '-1' }, named: /CHAOSLAB_POLL_MS/ },
    { bad: { CHAOSLAB_FAULT: 'raise@snapshot:1' }, named: /CHAOSLAB_FAULT/ },
    { bad: { CHAOSLAB_FAULT: 'stop@apply:1' }, named: /CHAOSLAB_FAULT/ },
    { bad: { CHAOSLAB_FAULT: '' }, named: /CHAOSLAB_FAULT/ },
    { bad: { CHAOSLAB_FAULT: 'stop@snapshot:1, exit@event:2' }, named: /CHAOSLAB_FAULT/ },
    { bad: { CHAOSLAB_OUTBOX_DB: `${path}.missing` }, named: /outbox\.db\.missing/ },
  ];
  // A few at a time, each on a port of its own: short-lived processes that read their environment and exit.
  for (let first = 0; first < cases.length; first += 4) {
    const batch = await Promise.all(
      cases.slice(first, first + 4).map(async ({ bad, named }) => {
        const port = await freePort();
        return { bad, named, result: await runToExit(server, serverEnv(path, port, bad), port) };
      }),
    );
    for (const { bad, named, result } of batch) {
      const what = JSON.stringify(bad);
      t.equal(result.code, 64, `${what}: exit 64`);
      t.match(result.stderr, named, `${what}: named on stderr`);
      t.equal(result.listened, false, `${what}: nothing listened on`);
    }
  }
});

forEachServer('cursor null: the snapshot at the safe point first, then every row after it in cursor order, then live', async (t, server) => {
  const { path, chain, producer } = startOutbox(t, { initialBlocks: 12 });
  const proc = await startServer(t, server, path);
  const topics = chain.accounts.slice(1, 4);
  const c = await FeedClient.subscribe(proc.port, topics);
  await c.waitFrames('the head', atHead(chain, topics), 60_000);
  const safe = chain.head.number - chain.confirmations;
  t.same(
    c.data[0],
    {
      op: 'snapshot',
      cursor: lastCursorOfBlock(chain, safe),
      blockHash: chain.canonicalAt(safe)!.hash,
      state: { balances: Object.fromEntries(topics.map((a) => [a, (chain.balancesAt(safe).get(a) ?? 0n).toString()])) },
    },
    'the first frame: the snapshot at the safe point',
  );
  t.same(eventCursors(c), chainEvents(chain, topics, lastCursorOfBlock(chain, safe)), 'then exactly the rows after it, in cursor order');
  producer.mine(6);
  await c.waitFrames('live rows', atHead(chain, topics), 60_000);
  const store = applyFrames(c.frames, topics);
  t.same(store.balances, chainBalances(chain, topics), 'snapshot + events = the chain at the head');
  t.equal(store.duplicates, 0, 'nothing sent twice');
  t.same(eventCursors(c), chainEvents(chain, topics, lastCursorOfBlock(chain, safe)), 'live rows follow in cursor order');
  t.ok(
    c.frames.every((f) => 'op' in f),
    'every frame passes the strict codec',
  );
  const fromChain = c.ofOp('event').map((event) => {
    const [, block, index] = event.cursor.split(':').map(Number);
    const log = chain.canonicalAt(block!)!.logs.find((l) => l.logIndex === index)!;
    const parties = log.type === 'Transfer' ? { from: log.from, to: log.to } : { owner: log.from, spender: log.to };
    const payload = { ...parties, amount: log.amount.toString(), txHash: log.txHash, blockHash: chain.canonicalAt(block!)!.hash };
    return { op: 'event', cursor: event.cursor, type: log.type, payload };
  });
  t.same(c.ofOp('event'), fromChain, 'each event frame is its row: type, parties (Approval: owner, spender), amount, hashes');
  c.destroy();
});

forEachServer('a cursor on the canonical chain: every row above it, no snapshot, then live', async (t, server) => {
  const { path, chain, producer } = startOutbox(t, { initialBlocks: 12 });
  const proc = await startServer(t, server, path);
  const topics = [...chain.accounts];
  const from = lastCursorOfBlock(chain, 5);
  const c = await FeedClient.subscribe(proc.port, topics, from, chain.canonicalAt(5)!.hash);
  await c.waitFrames('the head', (c) => eventCursors(c).at(-1) === everyEvent(chain, topics).at(-1), 60_000);
  producer.mine(3);
  await c.waitFrames('live rows', (c) => eventCursors(c).at(-1) === everyEvent(chain, topics).at(-1), 60_000);
  t.same(eventCursors(c), chainEvents(chain, topics, from), 'the rows above the cursor, each once, in cursor order');
  t.same(
    c.data.filter((f) => !('op' in f) || f.op !== 'event'),
    [],
    'nothing but events: no snapshot, no revoke',
  );
  c.destroy();
});

forEachServer('a block hash on an abandoned branch: revoke from the fork point (log index 0000), then the new branch', async (t, server) => {
  const { path, chain, producer } = startOutbox(t, { initialBlocks: 12 });
  const topics = [...chain.accounts];
  const held = lastCursorOfBlock(chain, 11);
  const heldHash = chain.canonicalAt(11)!.hash;
  producer.reorg({ depth: 3, length: 4 }); // abandons blocks 10..12
  const proc = await startServer(t, server, path);
  const c = await FeedClient.subscribe(proc.port, topics, held, heldHash);
  await c.waitFrames('the new branch', (c) => eventCursors(c).at(-1) === everyEvent(chain, topics).at(-1), 60_000);
  t.same(c.data[0], { op: 'revoke', fromCursor: cursorOf(chain, 10, 0) }, 'the first frame revokes from the first abandoned block');
  t.same(eventCursors(c), chainEvents(chain, topics, lastCursorOfBlock(chain, 9)), 'then every row from the fork point on');
  t.ok(
    c.ofOp('event').every((e) => e.payload.blockHash === chain.canonicalAt(Number(e.cursor.split(':')[1]))!.hash),
    'all of them on the new branch',
  );
  c.destroy();
});

forEachServer('a reorganisation under a live connection: revoke from the fork point, then the new branch', async (t, server) => {
  const { path, chain, producer } = startOutbox(t, { initialBlocks: 12 });
  const proc = await startServer(t, server, path);
  const topics = [...chain.accounts];
  const c = await FeedClient.subscribe(proc.port, topics);
  await c.waitFrames('the head', atHead(chain, topics), 60_000);
  const change = producer.reorg({ depth: 2, length: 3 });
  const fork = change.kind === 'reorg' ? change.forkNumber : -1;
  await c.waitFrames('the new branch', atHead(chain, topics), 60_000);
  t.same(c.ofOp('revoke'), [{ op: 'revoke', fromCursor: cursorOf(chain, fork, 0) }], 'one revoke, from the first abandoned block');
  const store = applyFrames(c.frames, topics);
  t.same(
    store.events.map((e) => e.cursor),
    chainEvents(chain, topics, c.ofOp('snapshot')[0]!.cursor),
    'the activity list is the new chain',
  );
  t.same(store.balances, chainBalances(chain, topics));
  c.destroy();
});

forEachServer('a cursor older than the retention window: reset stale-cursor, then close', async (t, server) => {
  // 12 accounts, at most one log per block: pruning blocks 1..4 touches some accounts, not all.
  const { path, chain, indexer, producer } = startOutbox(t, { chain: { seed: 3, accounts: 12, logsPerBlock: { min: 0, max: 1 } }, initialBlocks: 20 });
  indexer.pruneThrough(4);
  const pruned = [1, 2, 3, 4].flatMap((n) => chain.canonicalAt(n)!.logs);
  t.ok(pruned.length > 0, 'retention deleted rows');
  const active = pruned.at(-1)!.to;
  const quiet = chain.accounts.find((a) => !pruned.some((log) => log.from === a || log.to === a))!;
  const proc = await startServer(t, server, path);
  const genesis = cursorOf(chain, 0, 0);

  const stale = await FeedClient.subscribe(proc.port, [quiet, active], genesis, chain.genesis.hash);
  await closedOrAnswered(stale);
  t.same(stale.data, [{ op: 'reset', reason: 'stale-cursor' }], 'one account with deleted rows above the cursor: reset, nothing else, closed');

  const calm = await FeedClient.subscribe(proc.port, [quiet], genesis, chain.genesis.hash);
  producer.mine(1);
  const calmRows = chainEvents(chain, [quiet], genesis);
  await calm.waitFrames('the replay', (c) => (c.ofOp('event').length === calmRows.length && c.ofOp('event').length > 0) || calmRows.length === 0, 60_000);
  t.same(eventCursors(calm), calmRows, 'an account none of whose rows were deleted is served from the same old cursor');
  t.equal(calm.isClosed, false);
  calm.destroy();
});

forEachServer('an abandoned hash whose fork point lies below what retention deleted: stale wins over revoke', async (t, server) => {
  const { path, chain, indexer, producer } = startOutbox(t, { chain: { logsPerBlock: { min: 2, max: 4 } }, initialBlocks: 12 });
  const topics = [...chain.accounts];
  const held = lastCursorOfBlock(chain, 12);
  const heldHash = chain.head.hash;
  producer.reorg({ depth: 1 }); // abandons block 12
  producer.mine(4);
  indexer.pruneThrough(chain.head.number - chain.confirmations); // deletes the new block 12 too
  const proc = await startServer(t, server, path);
  const c = await FeedClient.subscribe(proc.port, topics, held, heldHash);
  await closedOrAnswered(c);
  t.same(c.data, [{ op: 'reset', reason: 'stale-cursor' }], 'reset stale-cursor, no revoke, nothing else');
  t.ok(c.isClosed, 'closed');
});

forEachServer('a cursor of another chain, a block hash never seen, a hash of another height: reset stale-cursor, then close', async (t, server) => {
  const { path, chain } = startOutbox(t, { initialBlocks: 12 });
  const proc = await startServer(t, server, path);
  const topics = [...chain.accounts];
  const otherChain = formatCursor({ chainId: chain.chainId + 1, blockNumber: 6, logIndex: 0 });
  const cases: [string, string, string][] = [
    ['another chain', otherChain, chain.canonicalAt(6)!.hash],
    ['a hash never seen', lastCursorOfBlock(chain, 6), `0x${'5'.repeat(64)}`],
    ["a hash of another height than the cursor's", lastCursorOfBlock(chain, 6), chain.canonicalAt(5)!.hash],
  ];
  for (const [what, cursor, hash] of cases) {
    const c = await FeedClient.subscribe(proc.port, topics, cursor, hash);
    await closedOrAnswered(c);
    t.same(c.data, [{ op: 'reset', reason: 'stale-cursor' }], `${what}: reset stale-cursor and nothing else`);
    t.ok(c.isClosed, `${what}: closed`);
    c.destroy();
  }
});

forEachServer('invalid frames: the connection is closed with nothing sent', async (t, server) => {
  const { path, chain } = startOutbox(t, { initialBlocks: 6 });
  const proc = await startServer(t, server, path);
  const subscribe = encodeSubscribe({ client: 'c1', topics: [chain.accounts[0]!], cursor: null, blockHash: null });
  const cases: [string, string | Buffer][] = [
    ['not JSON', '{"op":"subscribe",\n'],
    ['not an object', '["subscribe"]\n'],
    ['a subscribe without topics', '{"op":"subscribe","client":"c1","cursor":null,"blockHash":null}\n'],
    ['a malformed cursor', subscribe.replace('"cursor":null', '"cursor":"1:12:3"').replace('"blockHash":null', '"blockHash":"0xab"')],
    ['only one of cursor and blockHash null', subscribe.replace('"blockHash":null', '"blockHash":"0xab"')],
    ['a ping whose id has a fraction', '{"op":"ping","id":1.5}\n'],
    ['a line longer than 1 MiB', Buffer.alloc(2 * 1024 * 1024 + 1, 'x')],
  ];
  for (const [what, bytes] of cases) {
    const c = await FeedClient.open(proc.port);
    c.send(bytes as string);
    await atMost(c.closed, 60_000);
    t.ok(c.isClosed, `${what}: closed`);
    t.same(c.lines, [], `${what}: nothing sent`);
  }
  // A second subscribe is invalid too: the first one is answered, the second one closes.
  const twice = await FeedClient.subscribe(proc.port, [chain.accounts[0]!]);
  await twice.waitFrames('the snapshot', (c) => c.ofOp('snapshot').length === 1, 60_000);
  twice.send(subscribe);
  await atMost(twice.closed, 60_000);
  t.ok(twice.isClosed, 'a second subscribe: closed');
  t.same(twice.ofOp('reset'), [], 'a second subscribe: no reset, nothing said');
});

forEachServer('an unknown op is ignored; a ping is answered with the pong of its id, also before subscribe', async (t, server) => {
  const { path, chain } = startOutbox(t, { initialBlocks: 6 });
  const proc = await startServer(t, server, path);
  const c = await FeedClient.open(proc.port);
  c.send('{"op":"hello","id":1}\n');
  c.send(encodePing(42));
  await c.waitFrames('pong 42', (c) => c.ofOp('pong').length === 1, 60_000);
  t.same(c.ofOp('pong'), [{ op: 'pong', id: 42 }], 'pong, same id');
  c.send(encodeSubscribe({ client: 'c1', topics: [chain.accounts[0]!], cursor: null, blockHash: null }));
  c.send('{"op":"subscribed-later","x":[1,2]}\n');
  c.send(encodePing(9_007_199_254_740_991));
  await c.waitFrames('the snapshot and pong 2^53-1', (c) => c.ofOp('snapshot').length === 1 && c.ofOp('pong').length === 2, 60_000);
  t.same(c.lines.filter((l) => l.includes('"pong"')).at(-1), '{"op":"pong","id":9007199254740991}', 'the id echoed digit for digit');
  t.equal(c.isClosed, false, 'unknown ops close nothing');
  c.destroy();
});

forEachServer('heartbeats: a ping after PING_MS without sending; a silent client closed after IDLE_MS, one that talks kept', async (t, server) => {
  const { path, chain } = startOutbox(t, { initialBlocks: 6 });
  const proc = await startServer(t, server, path, { CHAOSLAB_PING_MS: '200', CHAOSLAB_IDLE_MS: '2500' });
  const topics = [chain.accounts[0]!];
  const talker = await FeedClient.subscribe(proc.port, topics);
  const pinger = setInterval(() => talker.send(encodePing(1)), 100);
  t.teardown(() => clearInterval(pinger));
  const silent = await FeedClient.subscribe(proc.port, topics);
  const subscribedAt = Date.now();
  await silent.waitFrames('two pings', (c) => c.ofOp('ping').length >= 2, 60_000);
  const ids = silent.ofOp('ping').map((p) => p.id);
  t.ok(
    ids.every((id) => Number.isInteger(id) && id >= 0),
    'ping ids are JSON integers >= 0',
  );
  await atMost(silent.closed, 60_000);
  t.ok(silent.isClosed, 'the silent client is closed');
  t.ok(Date.now() - subscribedAt >= 2400, 'not before IDLE_MS');
  t.same(silent.ofOp('reset'), [], 'an idle close says nothing');
  t.equal(talker.isClosed, false, 'a client that keeps talking is kept');
  t.ok(talker.ofOp('pong').length > 0, 'and its pings are answered');
  clearInterval(pinger);
  talker.destroy();
});

forEachServer('SIGTERM: reset shutdown on every connection, then exit 0', async (t, server) => {
  const { path, chain } = startOutbox(t, { initialBlocks: 6 });
  const proc = await startServer(t, server, path);
  const live = await FeedClient.subscribe(proc.port, [chain.accounts[0]!]);
  const idle = await FeedClient.open(proc.port); // connected, no subscribe yet
  await live.waitFrames('the snapshot', (c) => c.ofOp('snapshot').length === 1, 60_000);
  const started = Date.now();
  proc.signal('SIGTERM');
  const exit = await atMost(proc.exited, 60_000);
  t.same(exit, { code: 0, signal: null }, 'exit 0');
  t.ok(Date.now() - started < 20_000, `exited in ${Date.now() - started} ms (2 s on a quiet machine)`);
  for (const [what, c] of [
    ['subscribed', live],
    ['not yet subscribed', idle],
  ] as const) {
    await atMost(c.closed, 10_000);
    t.same(c.data.at(-1), { op: 'reset', reason: 'shutdown' }, `${what}: reset shutdown, the last frame`);
    t.ok(c.isClosed, `${what}: closed`);
  }
});

/**
 * The deterministic snapshot race: the server stops itself (stop@snapshot:1) after reading the
 * snapshot and before sending it; blocks are committed while it is stopped; after SIGCONT the
 * client must end with every row after the snapshot's cursor, those blocks' included.
 * Returns what the client got against what was due, for the caller to judge.
 */
async function snapshotRace(t: Test, server: ServerUnderTest): Promise<{ got: string[]; due: string[]; balancesRight: boolean; whileStopped: string[] }> {
  const { path, chain, producer } = startOutbox(t, { chain: { logsPerBlock: { min: 2, max: 4 } }, initialBlocks: 12 });
  const proc = await startServer(t, server, path, { CHAOSLAB_FAULT: 'stop@snapshot:1' });
  const topics = [...chain.accounts];
  const c = await FeedClient.subscribe(proc.port, topics);
  await proc.waitStopped('after the first snapshot was read');
  const before = everyEvent(chain, topics);
  producer.mine(5); // committed while the server is stopped, between its snapshot and its release
  const whileStopped = everyEvent(chain, topics).filter((cursor) => !before.includes(cursor));
  proc.signal('SIGCONT');
  // Then live blocks, one at a time until one of them arrives (a server that starts following
  // only after its snapshot may skip the first), and its rows: by then, in cursor order,
  // everything before them has had its chance.
  const stoppedHead = chain.head.number;
  const live = (c: FeedClient) => eventCursors(c).some((cursor) => Number(cursor.split(':')[1]) > stoppedHead);
  for (let tries = 1; !live(c); tries++) {
    producer.mine(1);
    await c.waitFrames('a live block', live, 3000).catch((error: Error) => {
      if (tries >= 20) throw new Error(`${error.message} (server state ${proc.state()})\n${server.name}'s stderr:\n${proc.stderr}`);
    });
  }
  const last = everyEvent(chain, topics).at(-1)!;
  await c.waitFrames('the last live block', (c) => eventCursors(c).includes(last), 60_000);
  const snapshot = c.ofOp('snapshot')[0];
  t.ok(snapshot, 'a snapshot came');
  const store = applyFrames(c.frames, topics);
  c.destroy();
  const due = snapshot ? chainEvents(chain, topics, snapshot.cursor) : [];
  const text = (balances: Map<string, bigint>) => JSON.stringify([...balances].map(([account, amount]) => [account, amount.toString()]));
  const balancesRight = text(store.balances) === text(chainBalances(chain, topics));
  return { got: store.events.map((e) => e.cursor), due, balancesRight, whileStopped };
}

forEachServer('stop@snapshot:1: rows committed while the server is stopped at its snapshot are delivered after SIGCONT', async (t, server) => {
  const { got, due, balancesRight, whileStopped } = await snapshotRace(t, server);
  t.ok(whileStopped.length > 0, 'rows were committed while it was stopped');
  t.same(got, due, 'every row after the snapshot cursor, those included, each once, in cursor order');
  t.ok(balancesRight, 'snapshot + events = the chain at the head');
});

t.test('the snapshot-then-subscribe mutant loses the rows committed while it is stopped at its snapshot', async (t) => {
  t.setTimeout(240_000);
  const mutant = { name: 'mutant snapshot-then-subscribe', command: 'python3 publisher/feed/mutants/snapshot-then-subscribe.py' };
  const { got, due, whileStopped } = await snapshotRace(t, mutant);
  t.ok(whileStopped.length > 0, 'rows were committed while it was stopped');
  t.notSame(got, due, 'it fails the check both references pass');
  t.same(
    whileStopped.filter((cursor) => got.includes(cursor)),
    [],
    'none of the rows committed while it was stopped arrived',
  );
  t.ok(got.length > 0 && got.every((cursor) => due.includes(cursor)), 'what it did send is right: the loss is all it gets wrong');
});
