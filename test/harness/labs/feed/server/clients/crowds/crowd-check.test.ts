// The crowd's checks on hand-made `crowd-client` entries: a client that got its snapshot and every
// event after it, as committed, passes; one that never connected, got no snapshot, skipped an
// event, read one out of order or changed, was reset, closed, or had not read everything is
// named, one finding per kind counting the clients it hit.
import { createHash } from 'node:crypto';
import t from 'tap';
import type { JournalEntry } from '../../../../../../../harness/record/journal.js';
import { checkCrowd, crowdClientTrouble } from '../../../../../../../harness/labs/feed/server/clients/crowds/crowd-check.js';
import { eventFrameKey } from '../../../../../../../harness/labs/feed/server/clients/crowds/crowd.js';
import type { RealEvent } from '../../../../../../../publisher/feed/server/misbehaviour.js';

const cursor = (block: number, log = 0) => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
const event = (block: number): RealEvent => ({
  cursor: cursor(block),
  type: 'Transfer',
  payload: { from: `0x${'a'.repeat(40)}`, to: `0x${'b'.repeat(40)}`, amount: String(block), txHash: `0x${'c'.repeat(64)}`, blockHash: `0x${'d'.repeat(64)}` },
});
const chain = [1, 2, 3, 4, 5, 6].map(event);
const digest = (events: RealEvent[]) => {
  const h = createHash('sha256');
  for (const e of events) h.update(eventFrameKey(e));
  return h.digest('hex');
};
type Entry = Extract<JournalEntry, { type: 'crowd-client' }>;
/** A client that subscribed after block 2 and read `events` (by default every one due). */
const client = (n: number, events = chain.slice(2), extra: Partial<Entry> = {}): Entry & { t: number } => ({
  t: 9000,
  type: 'crowd-client',
  client: n,
  subscribedAt: 10,
  snapshot: cursor(2),
  events: events.map((e) => e.cursor),
  arrivals: events.map((_, i) => 100 + i),
  digest: digest(events),
  afterReset: 0,
  close: { t: 9000, by: 'consumer', reason: 'the run is over' },
  ...extra,
});

t.test('a client served as due has no trouble', async (t) => {
  t.equal(crowdClientTrouble(client(1), chain), undefined);
});

t.test('each kind of trouble is named', async (t) => {
  const code = (e: Entry) => crowdClientTrouble(e, chain)?.code;
  t.equal(code(client(1, [], { subscribedAt: undefined, close: { t: 5, by: 'reset', reason: 'ECONNREFUSED' } })), 'crowd-not-accepted');
  t.equal(code(client(1, [], { snapshot: undefined, firstFrame: '{"op":"event"}' })), 'crowd-no-snapshot');
  const gap = crowdClientTrouble(client(1, [chain[2]!, chain[4]!, chain[5]!]), chain)!;
  t.equal(gap.code, 'crowd-gap');
  t.match(gap.words, new RegExp(`read ${cursor(3)} then ${cursor(5)}: 1 event of its accounts between them never came`));
  t.equal(code(client(1, [chain[2]!, chain[3]!, chain[2]!])), 'crowd-wrong-frame', 'back to an earlier event');
  t.equal(code(client(1, [chain[3]!, chain[2]!])), 'crowd-gap', 'ahead of the next one: a gap, whatever follows');
  const changed = client(1);
  t.equal(code({ ...changed, digest: digest([{ ...chain[2]!, type: 'Approval' }, ...chain.slice(3)]) }), 'crowd-wrong-frame', 'right cursors, other content');
  t.equal(code(client(1, chain.slice(2, 4), { reset: 'slow-consumer' })), 'crowd-reset');
  t.equal(code(client(1, chain.slice(2, 4), { close: { t: 50, by: 'publisher', reason: 'closed' } })), 'crowd-closed');
  t.equal(code(client(1, chain.slice(2, 4))), 'crowd-behind');
});

t.test('checkCrowd: one finding per kind with its count, the table, a missing client', async (t) => {
  const journal: JournalEntry[] = [client(1), client(2), client(3, chain.slice(2, 4)), client(4, chain.slice(2, 5))];
  const v = checkCrowd(journal, 5, chain);
  t.same(
    v.findings.map((f) => f.code),
    ['crowd-behind', 'crowd-not-accepted'],
  );
  t.match(v.findings[0]!.text, /^2 of the crowd's 4 clients had not read every event due .*; first, client 3 had read 2 of the 4 events due/);
  t.match(v.findings[1]!.text, /only 4 of the crowd's 5 clients were started/);
  t.equal(v.clients, 4);
  t.same(v.table?.rows[0]?.cells.slice(0, 3), [4, 2, 4 + 4 + 2 + 3]);
  t.same(checkCrowd([client(1), client(2)], 2, chain).findings, []);
});
