// When the wait for a probe's store is over (harness/labs/feed/server/probe.ts, settledStore):
// once it is right, or once it has held the chain's last event with something wrong for a
// second; not while it is behind, nor on an abandoned branch's block of the same number.
import t from 'tap';
import type { StoreView } from '../../../../../harness/labs/feed/check/state.js';
import { settledStore } from '../../../../../harness/labs/feed/server/probe.js';
import type { RealEvent } from '../../../../../publisher/feed/server/misbehaviour.js';

const last = { cursor: '1:00000000000034:0002', type: 'transfer', payload: { blockHash: '0xcanonical' } } as unknown as RealEvent;
const at = (cursor: string | null, blockHash: string | null): StoreView => ({
  exists: true,
  shape: [],
  cursor,
  blockHash,
  snapshotCursor: '1:00000000000010:0000',
  snapshotBlockHash: '0xsnap',
  events: [],
  balances: new Map(),
});

t.test('a right store is settled at once', async (t) => {
  t.ok(settledStore(last)(at('1:00000000000034:0002', '0xcanonical'), true, 0));
  t.ok(settledStore(undefined)(at(null, null), true, 0), 'a chain without events too');
});

t.test('wrong at the chain’s last event: settled once it has stayed so for a second', async (t) => {
  const settled = settledStore(last);
  const end = at('1:00000000000034:0002', '0xcanonical');
  t.notOk(settled(end, false, 10_000), 'just reached');
  t.notOk(settled(end, false, 10_900), 'not yet a second');
  t.ok(settled(end, false, 11_000), 'a second later: nothing more can put it right');
});

t.test('not settled while behind, on an abandoned block of the same cursor, or when it moved away', async (t) => {
  const settled = settledStore(last);
  t.notOk(settled(at('1:00000000000030:0000', '0xcanonical'), false, 0), 'behind');
  t.notOk(settled(at('1:00000000000030:0000', '0xcanonical'), false, 60_000), 'behind, however long');
  const abandoned = settledStore(last);
  t.notOk(abandoned(at('1:00000000000034:0002', '0xabandoned'), false, 0));
  t.notOk(abandoned(at('1:00000000000034:0002', '0xabandoned'), false, 5_000), 'the same cursor on another branch is not the end');
  const moved = settledStore(last);
  t.notOk(moved(at('1:00000000000034:0002', '0xcanonical'), false, 0));
  t.notOk(moved(at('1:00000000000014:0000', '0xcanonical'), false, 800), 'a revoke took it back');
  t.notOk(moved(at('1:00000000000034:0002', '0xcanonical'), false, 1_500), 'back at the end: its second starts again');
  t.ok(moved(at('1:00000000000034:0002', '0xcanonical'), false, 2_500));
  t.notOk(settledStore(undefined)(at(null, null), false, 60_000), 'a chain without events: only converge_ms ends a wrong store’s wait');
});
