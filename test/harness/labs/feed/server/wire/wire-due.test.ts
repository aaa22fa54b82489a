// What a probe's subscribe is due, asked of a real outbox as the harness asks it during a run:
// a snapshot for a null cursor, a replay naming the first row above the cursor, a revoke from the
// fork point for an abandoned hash, `reset stale-cursor` for a cursor retention outran, another
// chain's cursor, a hash never seen or of another block (stale over revoke); and whether a
// mid-stream stale reset is due.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { formatCursor } from '../../../../../../protocol/feed/cursor.js';
import { SimChain } from '../../../../../../publisher/feed/chain/chain.js';
import { OutboxIndexer } from '../../../../../../publisher/feed/outbox/indexer.js';
import { OutboxReader } from '../../../../../../publisher/feed/outbox/reader.js';
import { dueAtSubscribe, staleDue } from '../../../../../../harness/labs/feed/server/wire/wire-due.js';

function rig(t: Test) {
  const chain = new SimChain({ seed: 11, confirmations: 2, logsPerBlock: { min: 1, max: 3 }, accounts: 3 });
  const path = join(t.testdir(), 'outbox.db');
  const indexer = new OutboxIndexer(path, { chainId: chain.chainId, confirmations: 2, genesis: chain.genesis, genesisBalances: chain.genesisBalances });
  for (let i = 0; i < 8; i++) indexer.apply(chain.mine());
  const reader = new OutboxReader(path);
  t.teardown(() => {
    reader.close();
    indexer.close();
  });
  return { chain, indexer, reader, topics: [...chain.accounts] };
}

const cursor = (chain: SimChain, block: number, log: number) => formatCursor({ chainId: chain.chainId, blockNumber: block, logIndex: log });

t.test('null cursor, a canonical cursor, and a cursor at the head', async (t) => {
  const { chain, reader, topics } = rig(t);
  t.same(dueAtSubscribe(reader, { cursor: null, blockHash: null, topics }), { kind: 'snapshot' });
  t.match(dueAtSubscribe(reader, { cursor: null, blockHash: chain.head.hash, topics }), { kind: 'invalid' });
  const b4 = chain.canonicalAt(4)!;
  t.same(dueAtSubscribe(reader, { cursor: cursor(chain, 4, b4.logs.length - 1), blockHash: b4.hash, topics }), { kind: 'replay', first: cursor(chain, 5, 0) });
  const head = chain.head;
  t.same(dueAtSubscribe(reader, { cursor: cursor(chain, head.number, head.logs.length - 1), blockHash: head.hash, topics }), { kind: 'replay' });
});

t.test('an abandoned hash: revoke from the fork point; untraceable cursors: stale', async (t) => {
  const { chain, indexer, reader, topics } = rig(t);
  const b8 = chain.canonicalAt(8)!;
  indexer.apply(chain.reorg({ depth: 2 }));
  t.match(dueAtSubscribe(reader, { cursor: cursor(chain, 8, 0), blockHash: b8.hash, topics }), {
    kind: 'revoke',
    from: cursor(chain, 7, 0),
    why: /block 8 .* was abandoned; its branch left the chain at block 7/,
  });
  const other = formatCursor({ chainId: chain.chainId + 1, blockNumber: 3, logIndex: 0 });
  t.match(dueAtSubscribe(reader, { cursor: other, blockHash: chain.canonicalAt(3)!.hash, topics }), { kind: 'stale', why: /is of chain \d+, the outbox's is/ });
  t.match(dueAtSubscribe(reader, { cursor: cursor(chain, 3, 0), blockHash: `0x${'9'.repeat(64)}`, topics }), {
    kind: 'stale',
    why: /has never seen block hash/,
  });
  t.match(dueAtSubscribe(reader, { cursor: cursor(chain, 3, 0), blockHash: chain.canonicalAt(2)!.hash, topics }), {
    kind: 'stale',
    why: /is block 2, not the cursor's block 3/,
  });
});

t.test('retention: stale at subscribe, and a mid-stream reset due only above what was deleted', async (t) => {
  const { chain, indexer, reader, topics } = rig(t);
  indexer.pruneThrough(4);
  const b2 = chain.canonicalAt(2)!;
  t.match(dueAtSubscribe(reader, { cursor: cursor(chain, 2, 0), blockHash: b2.hash, topics }), {
    kind: 'stale',
    why: /retention deleted 1:00000000000004:\d{4} of 0x/,
  });
  t.match(staleDue(reader, { block: 2, logIndex: 0 }, topics), { kind: 'stale' });
  t.match(staleDue(reader, { block: 5, logIndex: 0 }, topics), {
    kind: 'nothing',
    why: /retention deleted no row of its accounts above 1:00000000000005:0000/,
  });
});
