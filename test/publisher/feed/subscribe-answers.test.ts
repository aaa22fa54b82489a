// What each `subscribe` gets (server contract, section 3; publisher/feed/CONTRACT.md's table):
// the cases where the reference once guessed (revoked from the cursor's block, or closed as if
// the frame were malformed) and now answers `reset stale-cursor` then closes, because it cannot
// trace the cursor to a block of its outbox; stale wins over revoke; an Approval's payload; and
// the subscribes that are invalid frames (a close with nothing sent).

import t from 'tap';
import { formatCursor } from '../../../protocol/feed/cursor.js';
import type { SimChain } from '../../../publisher/feed/chain/chain.js';
import { FeedClient, type Rig, chainEvents, startRig } from '../../helpers/feed-lab.js';

const cursorOf = (chain: SimChain, block: number, logIndex: number) => formatCursor({ chainId: chain.chainId, blockNumber: block, logIndex });
const lastCursorOfBlock = (chain: SimChain, n: number) => cursorOf(chain, n, Math.max(0, chain.canonicalAt(n)!.logs.length - 1));
const lastClose = (rig: Rig) => rig.transcript.filter((e) => e.kind === 'close').at(-1);

/** Subscribes and waits for the server to close: the frames it sent (heartbeats aside). */
async function answerTo(rig: Rig, topics: readonly string[], cursor: string, blockHash: string) {
  const client = await FeedClient.subscribe(rig.port(), topics, cursor, blockHash);
  await client.closed;
  return client.data;
}

const STALE = [{ op: 'reset', reason: 'stale-cursor' }];

t.test('a cursor the outbox cannot trace to one of its blocks: reset stale-cursor, then the close', async (t) => {
  const rig = await startRig(t, { initialBlocks: 10 });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const held = lastCursorOfBlock(chain, 9);
  const abandonedNine = chain.canonicalAt(9)!.hash;
  const abandonedTen = chain.canonicalAt(10)!.hash;
  rig.producer.reorg({ depth: 3, length: 4 }); // abandons blocks 8..10

  t.same(await answerTo(rig, topics, held, `0x${'5'.repeat(64)}`), STALE, 'a block hash the outbox has never seen');
  t.match(lastClose(rig), { by: 'publisher', reason: `stale cursor ${held}: block hash 0x${'5'.repeat(64)} is not a block of this chain` });

  const otherChain = `${chain.chainId + 1}:00000000000009:0000`;
  t.same(await answerTo(rig, topics, otherChain, abandonedNine), STALE, 'a cursor of another chain (not an invalid frame)');
  t.match(lastClose(rig), { by: 'publisher', reason: `stale cursor ${otherChain}: chain id ${chain.chainId + 1} is not this outbox's chain ${chain.chainId}` });
  t.notOk(
    rig.transcript.some((e) => e.kind === 'recv' && 'error' in e),
    'every subscribe so far was a valid frame',
  );

  const six = lastCursorOfBlock(chain, 6);
  const five = chain.canonicalAt(5)!.hash;
  t.same(await answerTo(rig, topics, six, five), STALE, "a canonical hash of another block than the cursor's");
  t.match(lastClose(rig), { reason: `stale cursor ${six}: block hash ${five} is block 5, not the cursor's block 6` });

  t.same(await answerTo(rig, topics, held, abandonedTen), STALE, "an abandoned hash of another block than the cursor's");
  t.match(lastClose(rig), { reason: `stale cursor ${held}: block hash ${abandonedTen} is block 10, not the cursor's block 9` });

  // The cursor's own abandoned block still gets its revoke from the fork point.
  const revoked = await FeedClient.subscribe(rig.port(), topics, held, abandonedNine);
  await revoked.waitFrames('the revoke and the new branch', (c) => c.ofOp('event').length > 0);
  t.same(revoked.data[0], { op: 'revoke', fromCursor: cursorOf(chain, 8, 0) });
  revoked.destroy();
});

t.test('stale wins over revoke: an abandoned hash whose fork point lies below what retention deleted', async (t) => {
  const rig = await startRig(t, { initialBlocks: 10 });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const held = lastCursorOfBlock(chain, 9);
  const heldHash = chain.canonicalAt(9)!.hash;
  rig.producer.reorg({ depth: 3, length: 4 }); // abandons blocks 8..10; the fork point is 8:0000
  rig.producer.mine(5); // the safe height passes block 9
  t.ok(rig.indexer.pruneThrough(9) > 0, 'retention deleted rows of the new blocks 8 and 9');

  t.same(await answerTo(rig, topics, held, heldHash), STALE, 'no revoke, no replay: reset alone');
  t.match(lastClose(rig), { by: 'publisher', reason: new RegExp(`^stale cursor ${held}: retention deleted 1:0000000000000[89]:\\d{4} of 0x`) });

  // The canonical block 9 at its last log saw everything retention deleted: replayed, not stale.
  const canonical = lastCursorOfBlock(chain, 9);
  const fine = await FeedClient.subscribe(rig.port(), topics, canonical, chain.canonicalAt(9)!.hash);
  await fine.waitFrames('the replay to the head', (c) => c.ofOp('event').at(-1)?.cursor === chainEvents(chain, topics, canonical).at(-1));
  t.equal(fine.ofOp('reset', 'revoke').length, 0);
  fine.destroy();
});

t.test('an Approval event: owner (from_account), spender (to_account), amount, txHash, blockHash — nothing else', async (t) => {
  const rig = await startRig(t, { chain: { seed: 6, confirmations: 3, logsPerBlock: { min: 3, max: 4 }, approvalShare: 0.5 }, initialBlocks: 6 });
  const { chain } = rig;
  const topics = [...chain.accounts];
  const c = await FeedClient.subscribe(rig.port(), topics, cursorOf(chain, 0, 0), chain.genesis.hash);
  const all = chainEvents(chain, topics, cursorOf(chain, 0, 0));
  await c.waitFrames('the replay', (c) => c.ofOp('event').length === all.length);
  const approvals = c.ofOp('event').filter((e) => e.type === 'Approval');
  t.ok(approvals.length > 0, 'the chain has Approvals');
  for (const event of approvals) {
    const [, block, index] = event.cursor.split(':').map(Number);
    const log = chain.canonicalAt(block!)!.logs.find((l) => l.logIndex === index)!;
    t.strictSame(
      event.payload,
      { owner: log.from, spender: log.to, amount: log.amount.toString(), txHash: log.txHash, blockHash: chain.canonicalAt(block!)!.hash },
      `Approval at ${event.cursor}`,
    );
  }
  c.destroy();
});

t.test('subscribes that are invalid frames: the server closes and sends nothing', async (t) => {
  const rig = await startRig(t, { initialBlocks: 3 });
  const { chain } = rig;
  const account = chain.accounts[0]!;
  const hash = chain.canonicalAt(2)!.hash;
  const cases: [string, string, RegExp][] = [
    ['a malformed cursor', `{"op":"subscribe","client":"c1","topics":["${account}"],"cursor":"1:2:0","blockHash":"${hash}"}\n`, /cursor: malformed cursor/],
    ['only the cursor null', `{"op":"subscribe","client":"c1","topics":["${account}"],"cursor":null,"blockHash":"${hash}"}\n`, /both be null/],
    ['no topics', `{"op":"subscribe","client":"c1","topics":[],"cursor":null,"blockHash":null}\n`, /topics must be a non-empty array/],
  ];
  for (const [what, line, reason] of cases) {
    const client = await FeedClient.open(rig.port());
    client.send(line);
    await client.closed;
    t.same(client.lines, [], `${what}: nothing sent`);
    t.match(lastClose(rig), { by: 'publisher', reason }, what);
  }
});
