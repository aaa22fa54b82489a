import { join } from 'node:path';
import t from 'tap';
import { formatCursor } from '../../../protocol/feed/cursor.js';
import { encodePing, encodePong, encodeSubscribe } from '../../../protocol/feed/encode.js';
import { FrameError, parseServerFrame } from '../../../protocol/feed/frames.js';
import { SimChain } from '../../../publisher/feed/chain/chain.js';
import { OutboxIndexer } from '../../../publisher/feed/outbox/indexer.js';
import { positionAfterBlock } from '../../../publisher/feed/outbox/position.js';
import { ManualScheduler } from '../../../publisher/feed/server/scheduler.js';
import { FeedPublisher } from '../../../publisher/feed/server/server.js';
import { FeedClient, applyFrames, chainBalances, chainEvents, sleep, startRig, waitFor } from '../../helpers/feed-lab.js';

const cursorOf = (chain: SimChain, block: number, logIndex: number) => formatCursor({ chainId: chain.chainId, blockNumber: block, logIndex });
const eventCursors = (client: FeedClient) => client.ofOp('event').map((e) => e.cursor);
const lastCursorOfBlock = (chain: SimChain, n: number) => cursorOf(chain, n, Math.max(0, chain.canonicalAt(n)!.logs.length - 1));

t.test('null cursor: a snapshot at the safe height, then every later event, then live ones', async (t) => {
  const rig = await startRig(t, { initialBlocks: 12 });
  const { chain } = rig;
  const topics = chain.accounts.slice(1, 4);
  const c = await FeedClient.subscribe(rig.port(), topics);
  const head = chain.head.number;
  await c.waitFrames('replay to the head', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  const [snapshot] = c.data;
  const safe = chain.canonicalAt(head - 3)!;
  t.same(snapshot, {
    op: 'snapshot',
    cursor: lastCursorOfBlock(chain, head - 3),
    blockHash: safe.hash,
    state: { balances: Object.fromEntries(topics.map((a) => [a, (chain.balancesAt(head - 3).get(a) ?? 0n).toString()])) },
  });
  t.same(eventCursors(c), chainEvents(chain, topics, lastCursorOfBlock(chain, head - 3)), 'exactly the events after the snapshot cursor, in order');
  rig.producer.mine(4);
  await c.waitFrames('live events', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  const store = applyFrames(c.frames, topics);
  t.same(store.balances, chainBalances(chain, topics), 'snapshot + events = the chain at the head');
  t.equal(store.duplicates, 0);
  t.ok(
    c.frames.every((f) => !(f instanceof FrameError)),
    'every frame passes the strict codec',
  );
  const payload = c.ofOp('event')[0]!.payload;
  const log = chain
    .canonicalAt(Number(c.ofOp('event')[0]!.cursor.split(':')[1]))!
    .logs.find((l) => l.logIndex === Number(c.ofOp('event')[0]!.cursor.split(':')[2]))!;
  t.same(payload, {
    ...(log.type === 'Transfer' ? { from: log.from, to: log.to } : { owner: log.from, spender: log.to }),
    amount: log.amount.toString(),
    txHash: log.txHash,
    blockHash: payload.blockHash,
  });
  t.equal(payload.blockHash, chain.canonicalAt(Number(c.ofOp('event')[0]!.cursor.split(':')[1]))!.hash);
  t.match(rig.notes(), [/snapshot at/, /replay page: \d+ events after/, /caught up at block \d+: live/]);
  c.destroy();
});

t.test('replay from a cursor in pages of at most 1000, nothing lost or repeated', async (t) => {
  const rig = await startRig(t, { chain: { seed: 4, confirmations: 3, logsPerBlock: { min: 10, max: 10 } }, initialBlocks: 260 });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const from = cursorOf(chain, 5, 9);
  const c = await FeedClient.subscribe(rig.port(), topics, from, chain.canonicalAt(5)!.hash);
  const expected = chainEvents(chain, topics, from);
  t.equal(expected.length, 2550);
  await c.waitFrames('all 2550 events', (c) => c.ofOp('event').length >= expected.length);
  t.same(eventCursors(c), expected, 'in chain order, each once');
  t.equal(c.ofOp('snapshot').length, 0, 'a resume gets no snapshot');
  t.same(
    rig.notes().filter((n) => n.startsWith('replay page')),
    [
      `replay page: 1000 events after ${from}`,
      `replay page: 1000 events after ${cursorOf(chain, 105, 9)}`,
      `replay page: 550 events after ${cursorOf(chain, 205, 9)}`,
    ],
  );
  c.destroy();
});

t.test('subscribe, buffer, snapshot, release: blocks appended around the snapshot are neither lost nor sent twice', async (t) => {
  // Blocks land at each trigger point: after subscribe, while the snapshot is read, and
  // between reading and sending it (and a reorg there too, in the last variant).
  const variants: { name: string; before: number; after: number; reorg?: boolean }[] = [
    { name: 'appends before the snapshot read', before: 5, after: 0 },
    { name: 'appends after the snapshot read, before it is sent', before: 0, after: 5 },
    { name: 'both, with a reorg after the read', before: 4, after: 3, reorg: true },
  ];
  for (const variant of variants) {
    const rig = await startRig(t, {
      initialBlocks: 8,
      streams: [
        {
          name: 'main',
          hooks: {
            onSubscribe: () => void rig.producer.mine(1),
            beforeSnapshot: () => void rig.producer.mine(variant.before),
            afterSnapshot: async () => {
              rig.producer.mine(variant.after);
              if (variant.reorg) rig.producer.reorg({ depth: 2, length: 3 });
              await sleep(20); // the outbox signals are in flight while the snapshot is not yet sent
            },
          },
        },
      ],
    });
    const { chain } = rig;
    const topics = chain.accounts.slice(0, 3);
    const c = await FeedClient.subscribe(rig.port(), topics);
    await c.waitFrames(`${variant.name}: the head`, (c) => applyFrames(c.frames, topics).cursor === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
    rig.producer.mine(2);
    const all = chainEvents(chain, topics, cursorOf(chain, 0, 0));
    await c.waitFrames(`${variant.name}: live`, (c) => applyFrames(c.frames, topics).cursor === all.at(-1));
    const snapshot = c.ofOp('snapshot')[0]!;
    t.equal(c.data[0], snapshot, `${variant.name}: the snapshot comes first`);
    const store = applyFrames(c.frames, topics);
    t.equal(store.duplicates, 0, `${variant.name}: nothing sent twice`);
    t.same(
      store.events.map((e) => e.cursor),
      chainEvents(chain, topics, snapshot.cursor),
      `${variant.name}: every event after the snapshot cursor, in order`,
    );
    t.same(store.balances, chainBalances(chain, topics), `${variant.name}: the balances of the chain`);
    c.destroy();
    await rig.close(500);
  }
});

t.test('a snapshot step may send rows and wait until they are written: delivery goes on from the state it returns', async (t) => {
  // The snapshot-then-subscribe form (publisher/feed/mutants/): the rows behind the snapshot
  // go out first, and only once they are written does it follow the outbox, from its head then.
  const rig = await startRig(t, {
    initialBlocks: 8,
    streams: [
      {
        name: 'main',
        steps: {
          async followFromSnapshot(reader, topics, plan, out) {
            const behind = reader.read(() => reader.eventsAfter(plan.position, topics, 1000));
            out.send(behind);
            const written = out.written();
            rig.producer.mine(2); // committed while the rows go out
            await written;
            const last = behind.at(-1)!;
            const held = { block: last.block_number, logIndex: last.log_index };
            return reader.read(() => ({ state: { read: positionAfterBlock(reader.head().number), held, reorgSeen: reader.latestReorgId() } }));
          },
        },
      },
    ],
  });
  const { chain } = rig;
  const topics = chain.accounts;
  const c = await FeedClient.subscribe(rig.port(), topics);
  await c.waitFrames('the snapshot', (c) => c.ofOp('snapshot').length > 0);
  const snapshot = c.ofOp('snapshot')[0]!;
  const behind = chainEvents(chain, topics, snapshot.cursor).filter((cursor) => Number(cursor.split(':')[1]) <= 8);
  await c.waitFrames('the rows behind the snapshot', (c) => c.ofOp('event').length >= behind.length);
  rig.producer.mine(1);
  const last = chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1);
  await c.waitFrames('the block mined after the step', (c) => eventCursors(c).at(-1) === last);
  const later = chainEvents(chain, topics, lastCursorOfBlock(chain, 10));
  t.ok(chainEvents(chain, topics, lastCursorOfBlock(chain, 8)).length > later.length, 'blocks 9 and 10 hold events of its accounts');
  t.equal(c.data[0], snapshot, 'the snapshot comes first');
  t.same(eventCursors(c), [...behind, ...later], 'the rows it sent, then only what came after the head it followed from: blocks 9 and 10 are lost');
  c.destroy();
  await rig.close(500);
});

t.test('many consumers subscribing while blocks and reorgs keep coming: each ends equal to the chain', async (t) => {
  const rig = await startRig(t, {
    seed: 21,
    initialBlocks: 6,
    reorgs: [
      { afterBlock: 14, depth: 2 },
      { afterBlock: 22, depth: 3, length: 4 },
      { afterBlock: 30, depth: 1 },
    ],
  });
  const { chain } = rig;
  const clients: { client: FeedClient; topics: string[] }[] = [];
  for (let i = 0; i < 6; i++) {
    rig.producer.mine(1 + (i % 3));
    const topics = [chain.accounts[i]!, chain.accounts[(i + 3) % chain.accounts.length]!];
    clients.push({ client: await FeedClient.subscribe(rig.port(), topics), topics });
    await sleep(i * 3);
  }
  rig.producer.mine(40 - chain.head.number);
  for (const { client, topics } of clients) {
    await client.waitFrames('the head', (c) => applyFrames(c.frames, topics).cursor === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
    const store = applyFrames(client.frames, topics);
    const snapshot = client.ofOp('snapshot')[0]!;
    t.same(
      store.events.map((e) => e.cursor),
      chainEvents(chain, topics, snapshot.cursor),
      'the activity list after the snapshot',
    );
    t.same(store.balances, chainBalances(chain, topics));
    client.destroy();
  }
  t.ok(
    clients.some(({ client }) => client.ofOp('revoke').length > 0),
    'the reorgs reached consumers that held abandoned events',
  );
});

t.test('subscribe with a block hash the chain abandoned: revoke from the fork point first, then the new branch', async (t) => {
  const rig = await startRig(t, { initialBlocks: 10 });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const held = lastCursorOfBlock(chain, 9);
  const heldHash = chain.canonicalAt(9)!.hash;
  rig.producer.reorg({ depth: 3, length: 4 }); // abandons blocks 8..10
  const c = await FeedClient.subscribe(rig.port(), topics, held, heldHash);
  await c.waitFrames('the new branch', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  t.same(c.data[0], { op: 'revoke', fromCursor: cursorOf(chain, 8, 0) }, 'the first frame revokes from the first abandoned block');
  t.same(eventCursors(c), chainEvents(chain, topics, lastCursorOfBlock(chain, 7)), 'then every event from the fork point on');
  t.ok(
    c.ofOp('event').every((e) => e.payload.blockHash === chain.canonicalAt(Number(e.cursor.split(':')[1]))!.hash),
    'all on the new branch',
  );
  t.match(rig.notes(), [/revoke from 1:00000000000008:0000 at subscribe: block 9 0x[0-9a-f]+ was abandoned; its branch left the chain at block 8/]);
  c.destroy();

  // A hash the server never saw gets `reset stale-cursor` (subscribe-answers.test.ts).

  // A canonical hash: no revoke, straight to the events after the cursor.
  const fine = await FeedClient.subscribe(rig.port(), topics, lastCursorOfBlock(chain, 6), chain.canonicalAt(6)!.hash);
  await fine.waitFrames('replay', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  t.equal(fine.ofOp('revoke').length, 0);
  t.same(eventCursors(fine), chainEvents(chain, topics, lastCursorOfBlock(chain, 6)));
  fine.destroy();
});

t.test('a reorg under a connected consumer: the hook first, then revoke from the fork point, then the new branch', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const seen: unknown[] = [];
  const rig = await startRig(t, {
    initialBlocks: 10,
    streams: [
      {
        name: 'main',
        hooks: {
          onReorg: (conn, reorg) => {
            seen.push({ conn, ...reorg });
            return held;
          },
        },
      },
    ],
  });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const c = await FeedClient.subscribe(rig.port(), topics);
  await c.waitFrames('the head', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  const before = c.data.length;
  const oldBlocks = [9, 10].map((n) => chain.canonicalAt(n)!.hash);
  rig.producer.reorg({ depth: 2, length: 3 });
  await waitFor(() => seen.length === 1, 'the reorg hook');
  t.same(seen, [{ conn: 1, fromCursor: cursorOf(chain, 9, 0), depth: 2, deep: false, revoke: true }]);
  await sleep(100);
  t.equal(c.data.length, before, 'nothing is sent while the hook holds the connection');
  release();
  await c.waitFrames('the new branch', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  const after = c.data.slice(before);
  t.same(after[0], { op: 'revoke', fromCursor: cursorOf(chain, 9, 0) });
  t.same(
    after.slice(1).map((f) => (f as { cursor: string }).cursor),
    chainEvents(chain, topics, lastCursorOfBlock(chain, 8)),
    'the new branch from the fork point',
  );
  t.ok(
    c.ofOp('event').some((e) => oldBlocks.includes(e.payload.blockHash)),
    'the abandoned events had been delivered',
  );
  const store = applyFrames(c.frames, topics);
  t.same(store.balances, chainBalances(chain, topics), 'after the revoke the consumer matches the chain');
  t.notOk(
    store.events.some((e) => oldBlocks.includes(e.payload.blockHash as string)),
    'no revoked event left',
  );
  c.destroy();
});

t.test('a reorg above everything a consumer holds is not revoked on its connection', async (t) => {
  // Empty blocks: the consumer holds only its snapshot (the safe height), below any allowed reorg.
  const rig = await startRig(t, { chain: { seed: 2, confirmations: 3, logsPerBlock: { min: 0, max: 0 } }, initialBlocks: 10 });
  const { chain } = rig;
  const c = await FeedClient.subscribe(rig.port(), [chain.accounts[0]!]);
  await c.waitFrames('snapshot', (c) => c.ofOp('snapshot').length === 1);
  await waitFor(() => rig.notes().some((n) => n.startsWith('caught up')), 'live');
  rig.producer.reorg({ depth: 3 });
  await waitFor(() => rig.notes().some((n) => n.startsWith('reorg from')), 'the reorg is seen');
  rig.producer.mine(1);
  await sleep(100);
  t.same(c.data, [c.ofOp('snapshot')[0]], 'no revoke: nothing after the fork point was ever sent');
  t.match(rig.notes().at(-1), /reorg from 1:00000000000008:0000 \(depth 3\): nothing sent here yet, no revoke/);
  c.destroy();
});

t.test("stale cursor: reset only when retention deleted a row of the consumer's accounts that it never saw", async (t) => {
  // 12 accounts, at most one log per block: pruning blocks 1..4 touches at most 8 accounts.
  const rig = await startRig(t, { chain: { seed: 3, accounts: 12, confirmations: 3, logsPerBlock: { min: 0, max: 1 } }, initialBlocks: 20 });
  const { chain } = rig;
  rig.indexer.pruneThrough(4);
  const prunedLogs = [1, 2, 3, 4].flatMap((n) => chain.canonicalAt(n)!.logs.map((log) => ({ n, log })));
  t.ok(prunedLogs.length > 0, 'something was pruned');
  const active = prunedLogs.at(-1)!.log.to;
  const lastOfActive = prunedLogs.filter(({ log }) => log.from === active || log.to === active).at(-1)!;
  const quiet = chain.accounts.find((a) => !prunedLogs.some(({ log }) => log.from === a || log.to === a))!;
  t.ok(quiet, 'an account none of whose rows were pruned');
  const genesis = cursorOf(chain, 0, 0);

  const stale = await FeedClient.subscribe(rig.port(), [active], genesis, chain.genesis.hash);
  await stale.closed;
  t.same(stale.data, [{ op: 'reset', reason: 'stale-cursor' }], 'reset, and nothing else');
  t.match(rig.transcript.filter((e) => e.kind === 'close').at(-1), {
    by: 'publisher',
    reason: /stale cursor 1:00000000000000:0000: retention deleted 1:\d{14}:\d{4} of 0x/,
  });

  const calm = await FeedClient.subscribe(rig.port(), [quiet], genesis, chain.genesis.hash);
  await calm.waitFrames(
    'replay',
    (c) => eventCursors(c).at(-1) === chainEvents(chain, [quiet], genesis).at(-1) || chainEvents(chain, [quiet], genesis).length === 0,
  );
  await sleep(50);
  t.equal(calm.isClosed, false, "a quiet account's old cursor is not stale");
  t.same(eventCursors(calm), chainEvents(chain, [quiet], genesis));
  t.equal(calm.ofOp('reset').length, 0);
  calm.destroy();

  const seen = cursorOf(chain, lastOfActive.n, lastOfActive.log.logIndex);
  const upToDate = await FeedClient.subscribe(rig.port(), [active], seen, chain.canonicalAt(lastOfActive.n)!.hash);
  await upToDate.waitFrames('replay', (c) => eventCursors(c).at(-1) === chainEvents(chain, [active], seen).at(-1));
  t.equal(upToDate.ofOp('reset').length, 0, 'a cursor at the greatest pruned row saw everything pruned');
  upToDate.destroy();

  const mixed = await FeedClient.subscribe(rig.port(), [quiet, active], genesis, chain.genesis.hash);
  await mixed.closed;
  t.same(mixed.data, [{ op: 'reset', reason: 'stale-cursor' }], 'one stale account is enough');
});

t.test('a consumer that falls behind retention while replaying is reset too', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let first: string | undefined;
  const rig = await startRig(t, {
    chain: { seed: 5, confirmations: 2, logsPerBlock: { min: 2, max: 2 } },
    initialBlocks: 20,
    pageSize: 5,
    streams: [{ name: 'main', hooks: { beforeEvent: (_c, cursor) => ((first ??= cursor) === cursor ? held : undefined) } }],
  });
  const { chain } = rig;
  const c = await FeedClient.subscribe(rig.port(), [...chain.accounts], cursorOf(chain, 0, 0), chain.genesis.hash);
  await waitFor(() => first !== undefined, 'the first event');
  rig.indexer.pruneThrough(10); // the next page would start at block 3
  release();
  await c.closed;
  t.same(eventCursors(c), chainEvents(chain, chain.accounts, cursorOf(chain, 0, 0)).slice(0, 5), 'the page already read is delivered');
  t.same(c.data.at(-1), { op: 'reset', reason: 'stale-cursor' });
  t.match(rig.notes().at(-1), /replay page: 5 events/);
  t.match(rig.transcript.at(-1), { kind: 'close', reason: /fell behind retention: 1:00000000000010:0001 of 0x/ });
});

t.test('queue overflow: everything pending is dropped and the consumer is told with reset slow-consumer', async (t) => {
  t.setTimeout(120_000);
  const rig = await startRig(t, {
    chain: { seed: 6, confirmations: 2, logsPerBlock: { min: 20, max: 20 } },
    initialBlocks: 3,
    streams: [{ name: 'main', queueLimit: 50 }],
  });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const c = await FeedClient.subscribe(rig.port(), topics);
  await waitFor(() => rig.notes().some((n) => n.startsWith('caught up')), 'live');
  rig.producer.mine(10);
  await c.waitFrames('a burst of 200 events', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  t.equal(c.ofOp('reset').length, 0, 'a burst four times the queue limit is no overflow for a consumer that reads');
  c.socket.pause(); // a consumer that stops reading: the kernel buffers fill, then our queue
  const overflowed = () => rig.transcript.some((e) => e.kind === 'close' && /slow consumer/.test(e.reason));
  for (let i = 0; i < 400 && !overflowed(); i++) {
    rig.producer.mine(10);
    await sleep(5);
  }
  t.ok(overflowed(), 'the queue overflowed');
  t.match(
    rig.transcript.find((e) => e.kind === 'close'),
    { by: 'publisher', reason: 'slow consumer: 51 frames pending, limit 50' },
  );
  const sentAfterReset = rig.transcript.slice(rig.transcript.findIndex((e) => e.kind === 'send' && e.line.includes('slow-consumer')) + 1);
  t.notOk(
    sentAfterReset.some((e) => e.kind === 'send'),
    'nothing is sent after the reset',
  );
  c.socket.resume();
  await c.closed;
  t.same(c.data.at(-1), { op: 'reset', reason: 'slow-consumer' }, 'the reset is the last frame');
  const snapshot = c.ofOp('snapshot')[0]!;
  const expected = chainEvents(chain, topics, snapshot.cursor);
  const got = eventCursors(c);
  t.ok(got.length < expected.length, 'the pending events were dropped');
  t.same(got, expected.slice(0, got.length), 'what was delivered is a gap-free prefix: never a silent hole');
});

t.test('heartbeats on an injected clock: pings after pingMs of silence, pongs to every ping, idle close', async (t) => {
  const clock = new ManualScheduler();
  const rig = await startRig(t, { initialBlocks: 5, scheduler: clock, streams: [{ name: 'main', pingMs: 1000, idleMs: 5000 }] });
  const c = await FeedClient.open(rig.port());
  c.send(encodePing(42));
  await c.waitFrames('pong 42', (c) => c.ofOp('pong').length === 1);
  t.same(c.ofOp('pong'), [{ op: 'pong', id: 42 }], 'a ping is answered with the same id, even before subscribe');
  c.send(encodeSubscribe({ client: 'c1', topics: [rig.chain.accounts[0]!], cursor: null, blockHash: null }));
  await waitFor(() => rig.notes().some((n) => n.startsWith('caught up')), 'live');
  clock.advance(999);
  await sleep(50);
  t.equal(c.ofOp('ping').length, 0, 'no ping before pingMs of silence');
  clock.advance(1);
  await c.waitFrames('ping 1', (c) => c.ofOp('ping').length === 1);
  t.same(c.ofOp('ping'), [{ op: 'ping', id: 1 }]);
  c.send(encodePong(1));
  await waitFor(() => rig.transcript.some((e) => e.kind === 'recv' && e.line === '{"op":"pong","id":1}\n'), 'the pong is recorded');
  clock.advance(1000);
  await c.waitFrames('ping 2', (c) => c.ofOp('ping').length === 2);
  t.same(c.ofOp('ping')[1], { op: 'ping', id: 2 }, 'and again after each further second of silence');
  // Last byte received at t=1000 (the pong): idle at t=6000, not at the first check (t=5000).
  clock.advance(3999);
  await sleep(50);
  t.equal(c.isClosed, false, 'not idle at 4999 ms after the last byte');
  clock.advance(1);
  await c.closed;
  t.match(
    rig.transcript.filter((e) => e.kind === 'close'),
    [{ by: 'publisher', reason: 'idle: nothing received for 5000 ms' }],
  );
});

t.test('shutdown: every connection gets reset shutdown, then the close', async (t) => {
  const rig = await startRig(t, { initialBlocks: 5, streams: [{ name: 'main' }, { name: 'other' }] });
  const a = await FeedClient.subscribe(rig.port(), [rig.chain.accounts[0]!]);
  const b = await FeedClient.open(rig.port('other')); // never subscribed
  await a.waitFrames('snapshot', (c) => c.ofOp('snapshot').length === 1);
  await waitFor(() => rig.transcript.filter((e) => e.kind === 'open').length === 2, 'both connections');
  await rig.close(10_000);
  await Promise.all([a.closed, b.closed]);
  t.same(a.data.at(-1), { op: 'reset', reason: 'shutdown' });
  t.same(b.data, [{ op: 'reset', reason: 'shutdown' }]);
  t.same(
    rig.transcript.filter((e) => e.kind === 'close').map((e) => [e.stream, (e as { reason: string }).reason]),
    [
      ['main', 'publisher shut down'],
      ['other', 'publisher shut down'],
    ],
  );
});

t.test('misbehaviour: each bad frame carries the next real cursor with other content, on its own connection', async (t) => {
  const config = { seed: 7, confirmations: 3, logsPerBlock: { min: 2, max: 2 } };
  const twin = new SimChain(config); // the same seed and calls: the chain the rig will mine
  for (let i = 0; i < 14; i++) twin.mine();
  const anchor = cursorOf(twin, 10, 1);
  const realLog = twin.canonicalAt(10)!.logs[1]!;
  const transferAt = (() => {
    for (let n = 11; n <= 14; n++) for (const log of twin.canonicalAt(n)!.logs) if (log.type === 'Transfer') return { n, log };
    throw new Error('no Transfer');
  })();
  const transferCursor = cursorOf(twin, transferAt.n, transferAt.log.logIndex);
  const approvalAt = [11, 12, 13, 14].flatMap((n) =>
    twin
      .canonicalAt(n)!
      .logs.filter((l) => l.type === 'Approval')
      .map((log) => ({ n, log })),
  )[0]!;
  const approvalCursor = cursorOf(twin, approvalAt.n, approvalAt.log.logIndex);
  const forms = ['trailing-comma', 'truncated', 'unpadded-cursor', 'other-chain', 'missing-block-hash', 'oversized'] as const;
  const rig = await startRig(t, {
    chain: config,
    initialBlocks: 14,
    streams: [
      {
        name: 'main',
        misbehaviour: [
          { connection: 1, at: anchor, action: 'resend', count: 2 },
          { connection: 2, at: anchor, action: 'unknown-op' },
          { connection: 3, at: transferCursor, action: 'number-amount' },
          ...forms.map((form, i) => ({ connection: 4 + i, at: anchor, action: 'malformed' as const, form })),
          { connection: 10, at: approvalCursor, action: 'number-amount' },
        ],
      },
    ],
  });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const from = cursorOf(chain, 9, 1);
  const all = chainEvents(chain, topics, from);
  const connect = async () => {
    const c = await FeedClient.subscribe(rig.port(), topics, from, chain.canonicalAt(9)!.hash);
    await c.waitFrames('the head', (c) => c.lines.some((l) => l.includes(all.at(-1)!)));
    return c;
  };
  const realAmount = realLog.amount;
  const offByOne = (amount: bigint) => (amount + 1n).toString();

  const resend = await connect();
  t.same(
    resend.data.slice(0, 4).map((f) => (f as { cursor: string }).cursor),
    [cursorOf(chain, 10, 0), from, cursorOf(chain, 10, 0), anchor],
    'the two events before the anchor again, then the anchor',
  );
  t.equal(resend.lines[2], resend.lines[0], 'a resend is the very same frame');
  const afterResend = applyFrames(resend.frames, topics, {
    cursor: from,
    snapshotCursor: null,
    events: [],
    balances: new Map(),
    duplicates: 0,
    snapshots: 0,
  });
  t.equal(afterResend.duplicates, 2, 'both are duplicates for a consumer at the cursor');
  t.same(
    afterResend.events.map((e) => e.cursor),
    all,
  );
  resend.destroy();

  const unknown = await connect();
  t.same(unknown.data[1], { unknownOp: 'event-v2' });
  const unknownJson = JSON.parse(unknown.lines[1]!);
  t.equal(unknownJson.cursor, anchor, 'the unknown op carries the next real cursor');
  t.equal(unknownJson.payload.amount, offByOne(realAmount), 'with a different amount');
  t.same(
    unknown.ofOp('event').map((e) => e.cursor),
    all,
    'then the real event follows, and everything else',
  );
  unknown.destroy();

  const numeric = await connect();
  const badIndex = numeric.frames.findIndex((f) => f instanceof FrameError);
  t.match(numeric.frames[badIndex], { reason: /payload\.amount: an amount must be a decimal string, not the number/ });
  t.match(numeric.lines[badIndex], new RegExp(`"cursor":"${transferCursor}".*"amount":${offByOne(transferAt.log.amount)}[,}]`));
  t.same(
    numeric.ofOp('event').map((e) => e.cursor),
    all.filter((c) => c !== transferCursor),
    'the real event is not sent on this connection',
  );
  numeric.destroy();

  const reasons: Record<(typeof forms)[number], RegExp> = {
    'trailing-comma': /not valid JSON/,
    truncated: /not valid JSON/,
    'unpadded-cursor': /cursor: malformed cursor "1:10:1"/,
    'other-chain': /chain id 2 is not this run's chain 1/,
    'missing-block-hash': /missing field payload\.blockHash/,
    oversized: /longer than the 1048576-byte limit/,
  };
  for (const form of forms) {
    const c = await connect();
    const line = c.dataLines[1]!;
    t.match(
      t.throws(() => parseServerFrame(line, { chainId: 1 }), `${form}: invalid`),
      { reason: reasons[form] },
    );
    if (form !== 'truncated') {
      const json = JSON.parse(form === 'trailing-comma' ? line.replace(/,}$/, '}') : line);
      t.equal(json.payload.amount, offByOne(realAmount), `${form}: another amount`);
      t.match(json.cursor, form === 'unpadded-cursor' ? '1:10:1' : form === 'other-chain' ? `2:${anchor.slice(2)}` : anchor, `${form}: at the anchor`);
    }
    t.same(
      c
        .ofOp('event')
        .map((e) => e.cursor)
        .filter((cursor) => cursor.startsWith('1:')),
      all.filter((cursor) => cursor !== anchor),
      `${form}: the real event is not sent on this connection`,
    );
    c.destroy();
  }
  const approval = await connect();
  t.same(eventCursors(approval), all, 'number-amount at an Approval: consumers do not check its amount, so the real event goes out');
  t.ok(rig.notes().includes(`misbehaviour: number-amount at ${approvalCursor} skipped: a Approval amount is not checked by consumers`));
  approval.destroy();
  t.same(
    rig.transcript.filter((e) => e.kind === 'send' && e.note).map((e) => [e.conn, (e as { note: string }).note]),
    [
      [1, `misbehaviour: resend at ${anchor}: resend ${from}`],
      [1, `misbehaviour: resend at ${anchor}: resend ${cursorOf(chain, 10, 0)}`],
      [2, `misbehaviour: unknown-op at ${anchor}`],
      [3, `misbehaviour: number-amount at ${transferCursor}; the real event is not sent`],
      ...forms.map((form, i) => [4 + i, `misbehaviour: malformed at ${anchor} (${form}); the real event is not sent`]),
    ],
    'the transcript names every deliberate frame',
  );
});

t.test('misbehaviour: a silent stall sends nothing at all, pings and pongs included; a timed one resumes', async (t) => {
  const clock = new ManualScheduler();
  const config = { seed: 8, confirmations: 3, logsPerBlock: { min: 2, max: 2 } };
  const at = formatCursor({ chainId: 1, blockNumber: 10, logIndex: 1 });
  const rig = await startRig(t, {
    chain: config,
    initialBlocks: 12,
    scheduler: clock,
    streams: [
      {
        name: 'main',
        pingMs: 1000,
        idleMs: 60_000,
        misbehaviour: [
          { connection: 1, at, action: 'stall' },
          { connection: 2, at, action: 'stall', ms: 3000 },
        ],
      },
    ],
  });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const from = cursorOf(chain, 9, 1);
  const all = chainEvents(chain, topics, from);
  const silent = await FeedClient.subscribe(rig.port(), topics, from, chain.canonicalAt(9)!.hash);
  await silent.waitFrames('the event before the stall', (c) => c.ofOp('event').length === 1);
  await waitFor(() => rig.notes().some((n) => n.includes('stall at')), 'the stall');
  silent.send(encodePing(5));
  clock.advance(10_000);
  await sleep(100);
  t.same(silent.frames, [silent.ofOp('event')[0]!], 'after the stall: no event, no ping, no pong');
  t.equal(silent.ofOp('event')[0]!.cursor, all[0]);
  t.equal(silent.isClosed, false, 'and the connection stays open');
  t.ok(rig.notes().includes('misbehaviour: stall at 1:00000000000010:0001: silent, connection kept open'), 'the transcript says so');
  silent.destroy();

  const paused = await FeedClient.subscribe(rig.port(), topics, from, chain.canonicalAt(9)!.hash);
  await paused.waitFrames('the event before the stall', (c) => c.ofOp('event').length === 1);
  await waitFor(() => rig.notes().filter((n) => n.includes('stall at')).length === 2, 'the second stall');
  clock.advance(2999);
  await sleep(50);
  t.equal(paused.frames.length, 1, 'silent until the stall is over');
  clock.advance(1);
  await paused.waitFrames('everything after the stall', (c) => c.ofOp('event').length === all.length);
  t.same(eventCursors(paused), all, 'the stall loses nothing: the held event comes first');
  clock.advance(1000);
  await paused.waitFrames('pings again', (c) => c.ofOp('ping').length > 0);
  paused.destroy();
});

t.test('misbehaviour from a connection on: the first connection numbered n or more that is about to send the event, once', async (t) => {
  const config = { seed: 7, confirmations: 3, logsPerBlock: { min: 2, max: 2 } };
  const twin = new SimChain(config);
  for (let i = 0; i < 12; i++) twin.mine();
  const anchor = cursorOf(twin, 10, 1);
  const rig = await startRig(t, {
    chain: config,
    initialBlocks: 12,
    streams: [
      {
        name: 'main',
        misbehaviour: [
          { connection: { from: 2 }, at: anchor, action: 'malformed', form: 'trailing-comma' },
          { connection: 4, at: anchor, action: 'unknown-op' },
        ],
      },
    ],
  });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const before = cursorOf(chain, 9, 1);
  const last = chainEvents(chain, topics, before).at(-1)!;
  const connect = async (from: string, block: number) => {
    const c = await FeedClient.subscribe(rig.port(), topics, from, chain.canonicalAt(block)!.hash);
    await c.waitFrames('the head', (c) => c.lines.some((l) => l.includes(last)));
    c.destroy();
    return c;
  };
  const invalid = (c: FeedClient) => c.frames.filter((f) => f instanceof FrameError).length;
  t.equal(invalid(await connect(before, 9)), 0, "connection 1 sends the event as it is: below the rule's first connection");
  const past = await connect(cursorOf(chain, 11, 0), 11);
  t.notOk(
    past.lines.some((l) => l.includes(anchor)),
    'connection 2 resumes past the event: it never is about to send it',
  );
  t.equal(invalid(await connect(before, 9)), 1, 'connection 3 is the first from 2 on to send it: the rule fires there');
  const fourth = await connect(before, 9);
  t.equal(invalid(fourth), 0, 'it fired once: connection 4 sends the real event');
  t.same(fourth.data[1], { unknownOp: 'event-v2' }, 'and a rule for connection 4 exactly at the same event still fires there');
  t.same(
    rig.transcript.filter((e) => e.kind === 'send' && e.note).map((e) => [e.conn, (e as { note: string }).note]),
    [
      [3, `misbehaviour: malformed at ${anchor} (trailing-comma); the real event is not sent`],
      [4, `misbehaviour: unknown-op at ${anchor}`],
    ],
    'the transcript names the connection it fired on',
  );
});

t.test('misbehaviour: a rule naming no connection a stream can have is refused, naming it', async (t) => {
  const at = formatCursor({ chainId: 1, blockNumber: 10, logIndex: 0 });
  for (const [connection, name] of [
    [{ from: 0 }, 'misbehaviour[1].connection.from'],
    [0, 'misbehaviour[1].connection'],
  ] as const)
    await t.rejects(
      startRig(t, {
        initialBlocks: 10,
        streams: [
          {
            name: 'main',
            misbehaviour: [
              { at, action: 'stall' },
              { at, action: 'stall', connection },
            ],
          },
        ],
      }),
      { message: new RegExp(`^${name.replace(/[[\].]/g, '\\$&')} must be a positive integer`) },
    );
});

t.test('trigger points: onSubscribe counts subscribes per stream, beforeEvent holds the stream at a cursor', async (t) => {
  const subscribes: [number, number, string | null][] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let holdAt = '';
  const rig = await startRig(t, {
    initialBlocks: 10,
    streams: [
      {
        name: 'main',
        hooks: {
          onSubscribe: (conn, nth, frame) => void subscribes.push([conn, nth, frame.cursor]),
          beforeEvent: (_conn, cursor) => (cursor === holdAt ? held : undefined),
        },
      },
    ],
  });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const expected = chainEvents(chain, topics, cursorOf(chain, 4, 0));
  holdAt = expected[3]!;
  const a = await FeedClient.subscribe(rig.port(), topics, cursorOf(chain, 4, 0), chain.canonicalAt(4)!.hash);
  await a.waitFrames('three events', (c) => c.ofOp('event').length === 3);
  await sleep(100);
  t.same(eventCursors(a), expected.slice(0, 3), 'the event at the hook is held');
  release();
  await a.waitFrames('the rest', (c) => c.ofOp('event').length === expected.length);
  t.same(eventCursors(a), expected);
  a.destroy();
  const b = await FeedClient.subscribe(rig.port(), topics);
  await b.waitFrames('snapshot', (c) => c.ofOp('snapshot').length === 1);
  b.destroy();
  t.same(subscribes, [
    [1, 1, cursorOf(chain, 4, 0)],
    [2, 2, null],
  ]);
  t.equal(rig.publisher.stream('main').stream.subscribeCount, 2);
});

t.test('one listener per stream: each consumer has its own port, connection numbers and transcript', async (t) => {
  const rig = await startRig(t, { initialBlocks: 8, streams: ['control', 'cut', 's3'].map((name) => ({ name })) });
  const { chain } = rig;
  const ports = ['control', 'cut', 's3'].map((s) => rig.port(s));
  t.equal(new Set(ports).size, 3, 'three ports');
  t.same(rig.publisher.streamNames, ['control', 'cut', 's3']);
  const topics = chain.accounts.slice(0, 2);
  const clients = await Promise.all(ports.map((port) => FeedClient.subscribe(port, topics)));
  const last = chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1);
  for (const c of clients) await c.waitFrames('the head', (c) => eventCursors(c).at(-1) === last);
  t.same(clients[1]!.dataLines, clients[0]!.dataLines, 'the same chain, the same frames');
  t.same(
    rig.transcript.filter((e) => e.kind === 'open').map((e) => [e.stream, e.conn]),
    [
      ['control', 1],
      ['cut', 1],
      ['s3', 1],
    ].sort(),
  );
  for (const c of clients) c.destroy();
});

t.test('what the server does with a bad consumer: invalid frames close, unknown ops are ignored', async (t) => {
  const rig = await startRig(t, { initialBlocks: 5 });
  const { chain } = rig;
  const account = chain.accounts[0]!;
  const closeReason = () => (rig.transcript.filter((e) => e.kind === 'close').at(-1) as { reason: string } | undefined)?.reason;

  const invalid = await FeedClient.open(rig.port());
  invalid.send(`{"op":"subscribe","client":"c1","topics":["${account.toUpperCase()}"],"cursor":null,"blockHash":null}\n`);
  await invalid.closed;
  t.equal(invalid.frames.length, 0);
  t.match(closeReason(), /invalid frame from consumer \(topics\[0\]: .* is not an account/);
  t.match(rig.transcript.filter((e) => e.kind === 'recv').at(-1), { error: /topics\[0\]/ });

  // A cursor of another chain is a valid frame, answered with `reset stale-cursor` (subscribe-answers.test.ts).

  const twice = await FeedClient.subscribe(rig.port(), [account]);
  twice.send('{"op":"hello","x":1}\n');
  twice.send(encodeSubscribe({ client: 'c1', topics: [account], cursor: null, blockHash: null }));
  await twice.closed;
  t.equal(twice.ofOp('snapshot').length, 1);
  t.ok(rig.notes().includes('unknown op "hello" from consumer ignored'));
  t.equal(closeReason(), 'second subscribe on one connection');

  const long = await FeedClient.open(rig.port());
  long.send('{"op":"ping","id":1,"pad":"');
  long.send('x'.repeat(1024 * 1024 + 10));
  await long.closed;
  t.equal(closeReason(), 'line from consumer longer than the 1 MiB limit');
  t.ok(
    rig.transcript.every((e) => e.kind !== 'recv' || e.line.length < 70_000),
    'the transcript keeps a capped excerpt of an oversized line',
  );
});

t.test('the server reads only the outbox: a writer in another connection is noticed by polling', async (t) => {
  const clock = new ManualScheduler();
  const chain = new SimChain({ seed: 11, confirmations: 2, logsPerBlock: { min: 1, max: 3 } });
  const path = join(t.testdir(), 'outbox.db');
  const indexer = new OutboxIndexer(path, { chainId: 1, confirmations: 2, genesis: chain.genesis, genesisBalances: chain.genesisBalances });
  for (let i = 0; i < 5; i++) indexer.apply(chain.mine());
  const publisher = await FeedPublisher.start({ outboxPath: path, streams: [{ name: 'main' }], scheduler: clock, pollMs: 50 });
  t.teardown(async () => {
    await publisher.close(500);
    indexer.close();
  });
  const topics = [...chain.accounts];
  const c = await FeedClient.subscribe(publisher.stream('main').port, topics);
  await c.waitFrames('caught up', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  for (let i = 0; i < 3; i++) indexer.apply(chain.mine());
  await sleep(100);
  const before = c.ofOp('event').length;
  t.not(eventCursors(c).at(-1), chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1), 'nothing new before the poll');
  clock.advance(50);
  await c.waitFrames('the new blocks', (c) => eventCursors(c).at(-1) === chainEvents(chain, topics, cursorOf(chain, 0, 0)).at(-1));
  t.ok(c.ofOp('event').length > before);
  t.same(applyFrames(c.frames, topics).balances, chainBalances(chain, topics));
  c.destroy();
});

t.test('start-up errors: duplicate stream names, a port in use, a file that is not an outbox', async (t) => {
  const rig = await startRig(t, { initialBlocks: 1 });
  const { outboxPath } = rig;
  await t.rejects(FeedPublisher.start({ outboxPath, streams: [{ name: 'a' }, { name: 'a' }] }), /duplicate stream name a/);
  await t.rejects(FeedPublisher.start({ outboxPath, streams: [{ name: 'a' }], ports: { a: rig.port() } }), /EADDRINUSE/);
  await t.rejects(FeedPublisher.start({ outboxPath: `${outboxPath}.missing`, streams: [] }), /unable to open database file/);
  t.throws(
    () => new OutboxIndexer(outboxPath, { chainId: 1, confirmations: 1, genesis: rig.chain.genesis, genesisBalances: new Map() }),
    /already holds an outbox/,
  );
  await t.rejects(FeedPublisher.start({ outboxPath, streams: [{ name: 'a', queueLimit: 0 }] }), /queueLimit must be a positive integer/);
});
