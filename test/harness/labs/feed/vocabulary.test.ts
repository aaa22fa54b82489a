// How the reports speak the feed protocol: each kind of frame, the block it names, which traffic
// is routine, and a store in a few words.
import t from 'tap';
import { encodePing, encodePong, encodeReset, encodeRevoke, encodeSnapshot, encodeSubscribe } from '../../../../protocol/feed/encode.js';
import { feedVocabulary as v } from '../../../../harness/labs/feed/report/vocabulary.js';

const cursor = (block: number, log = 0) => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
const A = `0x${'a1'.repeat(20)}`;
const event = (block: number, log = 0) =>
  `${JSON.stringify({ op: 'event', cursor: cursor(block, log), type: 'Transfer', payload: { from: A, to: A, amount: '1', txHash: '0x1', blockHash: '0x2' } })}\n`;

t.test("every line class has a colour and a legend, in the protocol's order", async (t) => {
  t.same(
    v.lineClasses.map((c) => c.name),
    ['subscribe', 'snapshot', 'event', 'revoke', 'reset', 'ping', 'pong'],
  );
  for (const c of v.lineClasses) t.match(c.color, /^#[0-9a-f]{6}$/);
  t.equal(new Set(v.lineClasses.map((c) => c.color)).size, v.lineClasses.length, 'colours differ');
});

t.test('classify: the op, and the block its cursor names', async (t) => {
  t.same(v.classify(event(57, 3)), { cls: 'event', position: 57, key: cursor(57, 3) });
  t.same(v.classify(encodeSnapshot(cursor(12, 2), '0xab', [[A, 5n]])), { cls: 'snapshot', position: 12, key: cursor(12, 2) });
  t.same(v.classify(encodeRevoke(cursor(40))), { cls: 'revoke', position: 40, key: cursor(40) });
  t.same(v.classify(encodeSubscribe({ client: 'c1', topics: [A], cursor: cursor(9, 1), blockHash: '0x9' })), {
    cls: 'subscribe',
    position: 9,
    key: cursor(9, 1),
  });
  t.same(v.classify(encodeSubscribe({ client: 'c1', topics: [A], cursor: null, blockHash: null })), { cls: 'subscribe' }, 'cursor null: no position');
  t.same(v.classify(encodeReset('stale-cursor')), { cls: 'reset' });
  t.same(v.classify(encodePing(7)), { cls: 'ping' });
  t.same(v.classify('{"op": "pong", "id": 7}\n'), { cls: 'pong' }, 'spaces as Python writes them');
  t.same(v.classify(encodePong(7)), { cls: 'pong' });
  t.same(v.classify('{"op":"event-v2","cursor":"1:00000000000001:0000"}\n'), { cls: 'other' }, 'an unknown op');
  t.same(v.classify('{"op":"event","cursor":"1:57:3"}\n'), { cls: 'event' }, 'a malformed cursor names no block');
  t.same(v.classify('not json\n'), { cls: 'other' });
});

t.test('the ranker: events in chain order and heartbeats are routine', async (t) => {
  const rank = v.newRanker();
  const send = (cls: string, position?: number, stream = 'consumer') =>
    rank({ stream, conn: 1, direction: 'send', cls, ...(position === undefined ? {} : { position }) });
  t.equal(send('snapshot', 7), 'landmark');
  t.equal(send('event', 8), 'routine');
  t.equal(send('event', 8), 'routine', 'another event of the same block');
  t.equal(send('event', 9), 'routine');
  t.equal(send('event', 6), 'irregular', 'a resend (or a replay) goes back');
  t.equal(send('event', 10), 'routine');
  t.equal(send('event', 3, 'control'), 'routine', 'each stream has its own order');
  t.equal(send('revoke', 9), 'landmark');
  t.equal(send('reset'), 'landmark');
  t.equal(send('ping'), 'routine');
  t.equal(rank({ stream: 'consumer', conn: 1, direction: 'recv', cls: 'pong' }), 'routine');
  t.equal(rank({ stream: 'consumer', conn: 2, direction: 'recv', cls: 'subscribe', position: 9 }), 'landmark');
  t.equal(rank({ stream: 'consumer', conn: 2, direction: 'recv', cls: 'event', position: 9 }), 'irregular', 'an event from the consumer is odd');
  t.equal(send('other'), 'landmark');
});

t.test('describeStore: a store in a few words', async (t) => {
  t.equal(v.describeStore({ exists: false, state: [], events: [], balances: [] }), 'no file');
  t.equal(v.describeStore({ exists: true, error: 'no such table: feed_state', state: [], events: [], balances: [] }), 'unreadable (no such table: feed_state)');
  t.equal(
    v.describeStore({
      exists: true,
      state: [{ id: 1, cursor: cursor(57, 3), block_hash: '0x1', snapshot_cursor: cursor(12), snapshot_block_hash: '0x2' }],
      events: [
        [cursor(50), 'Transfer', '{}'],
        [cursor(57, 3), 'Approval', '{}'],
      ],
      balances: [[A, '5']],
    }),
    'cursor 57:3, snapshot 12:0, 2 events, 1 balance',
  );
  t.equal(
    v.describeStore({
      exists: true,
      state: [{ id: 1, cursor: null, block_hash: null, snapshot_cursor: null, snapshot_block_hash: null }],
      events: [],
      balances: [],
    }),
    'cursor null, snapshot null, 0 events, 0 balances',
  );
  t.equal(v.describeStore({ exists: true, checkpoint: [] }), 'not a feed store read', "another lab's store");
  t.equal(v.describeStore(undefined), 'no file');
});

t.test('progress: the events delivered to the consumer, each cursor once (not "resumed")', async (t) => {
  t.same(v.progress, { cls: 'event', word: 'events delivered', direction: 'send' });
});
