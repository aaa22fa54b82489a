// The statistical snapshot race's check on hand-made journals: a subscriber that got its snapshot
// and every later event passes; one that lacks rows committed after it subscribed (above the
// outbox's head then) while it read later ones is named as the race lost, with the rows; rows
// the outbox already held are a gap; a wrong order, a changed row, a tail that never came and a
// reset are each named; checkSubscribers counts who lost, per subscriber.
import t from 'tap';
import { checkSubscribers, judgeSubscriber } from '../../../../../../../harness/labs/feed/server/clients/crowds/check-subscribers.js';
import { clientFactsOf } from '../../../../../../../harness/labs/feed/server/clients/facts.js';
import { SUBSCRIBED_NOTE } from '../../../../../../../harness/labs/feed/server/clients/crowds/subscribers.js';
import type { JournalEntry } from '../../../../../../../harness/record/journal.js';
import { cursor, event, eventLine } from '../../../../../../helpers/feed-events.js';
import type { TranscriptEvent } from '../../../../../../../publisher/transcript.js';

/** Blocks 1..20, two events each. */
const chain = Array.from({ length: 40 }, (_, i) => event(1 + Math.floor(i / 2), i % 2));
const line = eventLine;
const snapshotAt = (block: number) =>
  `${JSON.stringify({ op: 'snapshot', cursor: cursor(block, 1), blockHash: `0x${'d'.repeat(64)}`, state: { balances: {} } })}\n`;
/** Events of blocks from..to (inclusive). */
const blocks = (from: number, to: number) => chain.filter((e) => Number(e.cursor.split(':')[1]) >= from && Number(e.cursor.split(':')[1]) <= to);

function subscriber(name: string, headAtSubscribe: number, lines: string[], end?: TranscriptEvent): JournalEntry[] {
  const events: TranscriptEvent[] = [
    { kind: 'open' },
    { kind: 'note', text: `${SUBSCRIBED_NOTE} ${headAtSubscribe}` },
    { kind: 'recv', line: '{"op":"subscribe"}\n' },
    ...lines.map((l) => ({ kind: 'send' as const, line: l })),
    end ?? { kind: 'close', by: 'consumer', reason: 'the run is over' },
  ];
  return events.map((e, i) => ({ t: 100 + i, type: 'wire', stream: `client:${name}`, conn: 1, ...e }) as JournalEntry);
}

t.test('a subscriber that got its snapshot and every later event, in order, passes', async (t) => {
  // Subscribed at head 12, snapshot at the safe point of block 4: the rows behind it, then live.
  const f = clientFactsOf(subscriber('sub-1', 12, [snapshotAt(4), ...blocks(5, 20).map(line), '{"op":"ping","id":1}\n']), 'sub-1');
  t.equal(f.subscribedAtHead, 12);
  const j = judgeSubscriber(f, chain);
  t.same(j.findings, []);
  t.equal(j.snapshotCursor, cursor(4, 1));
  t.equal(j.eventsRead, 32);
  t.same(j.lost, []);
});

t.test('rows committed after the subscribe that never came, while later ones did: the race lost, named with its rows', async (t) => {
  // Snapshot-then-subscribe: the rows behind the snapshot (5..12), then the outbox followed only from block 15 on.
  const f = clientFactsOf(subscriber('sub-2', 12, [snapshotAt(4), ...blocks(5, 12).map(line), ...blocks(15, 20).map(line)]), 'sub-2');
  const j = judgeSubscriber(f, chain);
  const lost = blocks(13, 14).map((e) => e.cursor);
  t.same(j.lost, lost);
  t.equal(j.findings.length, 1);
  t.equal(j.findings[0]!.code, 'lost-in-snapshot-race');
  t.same(j.findings[0]!.subject?.cursors, lost);
  t.match(j.findings[0]!.text, "subscriber `sub-2` subscribed with cursor null at 0.100 s, when the outbox's head was block 12");
  t.match(j.findings[0]!.text, `it got ${cursor(12, 1)} and next ${cursor(15, 0)}, but never 4 events of its accounts between them (blocks 13..14`);
  t.match(j.findings[0]!.text, /committed after it subscribed — between the snapshot and the moment the server followed the outbox — and lost/);
});

t.test('lost rows the outbox already held, order, content, a missing tail, a reset: each named', async (t) => {
  const gap = judgeSubscriber(clientFactsOf(subscriber('s', 12, [snapshotAt(4), ...blocks(5, 6).map(line), ...blocks(8, 20).map(line)]), 's'), chain);
  t.match(gap.findings, [{ code: 'subscriber-gap', text: /never 2 events of its accounts between them \(block 7: .*which the outbox already held/ }]);

  const order = judgeSubscriber(
    clientFactsOf(subscriber('s', 4, [snapshotAt(4), ...blocks(5, 6).map(line), line(chain[8]!), ...blocks(7, 20).map(line)]), 's'),
    chain,
  );
  t.match(order.findings, [{ code: 'event-order', text: `read ${cursor(5, 0)} after ${cursor(6, 1)}: out of cursor order` }]);

  const changed = { ...chain[10]!, payload: { ...chain[10]!.payload, amount: '1' } };
  const wrong = judgeSubscriber(
    clientFactsOf(subscriber('s', 4, [snapshotAt(4), ...blocks(5, 5).map(line), line(changed), ...blocks(7, 20).map(line)]), 's'),
    chain,
  );
  t.match(wrong.findings, [{ code: 'client-wrong-frame' }]);

  const tail = judgeSubscriber(
    clientFactsOf(subscriber('s', 4, [snapshotAt(4), ...blocks(5, 18).map(line)], { kind: 'close', by: 'publisher', reason: 'closed' }), 's'),
    chain,
  );
  t.same(
    tail.missingAtEnd,
    blocks(19, 20).map((e) => e.cursor),
  );
  t.match(tail.findings, [
    { code: 'subscriber-incomplete', text: /had read up to .*18:0001 when its connection ended \(closed by the server at 0\.1\d+ s\); 4 events/ },
  ]);

  const reset = judgeSubscriber(
    clientFactsOf(subscriber('s', 4, [snapshotAt(4), ...blocks(5, 6).map(line), '{"op":"reset","reason":"slow-consumer"}\n']), 's'),
    chain,
  );
  t.match(reset.findings, [{ code: 'subscriber-reset' }]);

  const none = judgeSubscriber(clientFactsOf(subscriber('s', 4, [line(chain[0]!)]), 's'), chain);
  t.match(none.findings, [{ code: 'client-no-snapshot' }]);
});

t.test('checkSubscribers: each subscriber judged, who lost counted in the table', async (t) => {
  const journal = [
    ...subscriber('sub-1', 12, [snapshotAt(4), ...blocks(5, 20).map(line)]),
    ...subscriber('sub-2', 12, [snapshotAt(4), ...blocks(5, 12).map(line), ...blocks(15, 20).map(line)]),
  ];
  const both = checkSubscribers(journal, { count: 2 }, chain);
  t.same(
    both.findings.map((f) => f.code),
    ['lost-in-snapshot-race'],
  );
  t.equal(both.table?.title, 'Null-cursor subscribers: 1 of 2 lost events committed after they subscribed');
  t.same(
    both.table?.rows.map((r) => r.cells[4]),
    ['0', '4 (blocks 13..14)'],
  );
  t.equal(both.words, undefined);
  const one = checkSubscribers(journal, { count: 1 }, chain);
  t.same(one.findings, []);
  t.equal(one.words, 'each of 1 null-cursor subscriber got its snapshot and every later event, in order');
  t.same(checkSubscribers(journal, undefined, chain), { findings: [] });
});
