// The feed lab's report side: the activity list against the expected one with its first
// difference, the balances table, the few words the diagram writes on each frame (labels, the
// band a revoke voids, resends), and the vocabulary's additions — on stores built from the
// simulated chain of the happy path and on frames from the real encoders.
import { join } from 'node:path';
import t from 'tap';
import { encodePing, encodePong, encodeReset, encodeRevoke, encodeSnapshot, encodeSubscribe } from '../../../../protocol/feed/encode.js';
import type { RealEvent } from '../../../../publisher/feed/server/misbehaviour.js';
import { encodeRealEvent } from '../../../../publisher/feed/outbox/events.js';
import { compareActivity, entryWords } from '../../../../harness/labs/feed/check/activity.js';
import { simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import { newFeedLabeller } from '../../../../harness/labs/feed/report/labels.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import { expectedOf, judgeStore, viewOf } from '../../../../harness/labs/feed/check/state.js';
import type { FeedStoreSnapshot } from '../../../../harness/labs/feed/check/store-reader.js';
import { activityTable, balancesTable, stateTable } from '../../../../harness/labs/feed/report/tables.js';
import { feedVocabulary } from '../../../../harness/labs/feed/report/vocabulary.js';
import { tableRow } from '../../../../harness/report/html.js';
import { loadScenario, type Scenario } from '../../../../harness/catalogue/load.js';

const ROOT = join(import.meta.dirname, '../../../..');
const HAPPY = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-happy-path.yaml')) as Scenario<FeedPlan>;
const sim = simulate(HAPPY.lab.chain, HAPPY.lab.topicIndexes);
const expected = expectedOf(sim);
const topics = HAPPY.lab.topics;
const EVENTS = sim.events;

/** A store without a snapshot holding `events`, with the chain's final balances unless told otherwise. */
function store(events: readonly RealEvent[], balance?: [string, string]): FeedStoreSnapshot {
  const last = events.at(-1);
  return {
    exists: true,
    state: [{ id: 1, cursor: last?.cursor ?? null, block_hash: last?.payload.blockHash ?? null, snapshot_cursor: null, snapshot_block_hash: null }],
    events: events.map((e) => [e.cursor, e.type, JSON.stringify(e.payload)]),
    // The chain's balances at its end (the genesis supply is no event), but for the one the test changes.
    balances: topics
      .map((a): [string, string] => [a, balance?.[0] === a ? balance[1] : (expected.balances.get(a) ?? 0n).toString()])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  };
}
const judge = (events: readonly RealEvent[], balance?: [string, string]) => judgeStore('consumer', viewOf(store(events, balance)), expected, []).summary;

t.test('the chain has enough events for these tests', async (t) => {
  t.ok(EVENTS.length >= 12, `${EVENTS.length} events`);
});

t.test('compareActivity: the first entry where the lists part, with a window around it', async (t) => {
  const same = compareActivity(EVENTS, viewOf(store(EVENTS)).events);
  t.equal(same.firstDifference, undefined, 'identical lists: no difference');
  t.same(
    same.rows.map((r) => r.index),
    [EVENTS.length - 2, EVENTS.length - 1, EVENTS.length],
    'the end of the lists is shown',
  );
  t.ok(same.rows.every((r) => r.same));
  t.equal(same.before, EVENTS.length - 3);
  t.equal(same.after, 0);

  // The 6th event missing: the lists part at entry 6, everything after is shifted.
  const held = viewOf(store([...EVENTS.slice(0, 5), ...EVENTS.slice(6)])).events;
  const missing = compareActivity(EVENTS, held);
  t.equal(missing.firstDifference, 6);
  t.same(
    missing.rows.map((r) => r.index),
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    'three rows before it, seven from it on',
  );
  t.same(
    missing.rows.map((r) => r.same),
    [true, true, true, false, false, false, false, false, false, false],
  );
  const sixth = missing.rows[3]!;
  t.equal(sixth.expected?.cursor, EVENTS[5]!.cursor);
  t.equal(sixth.held?.cursor, EVENTS[6]!.cursor);
  t.equal(missing.before, 2);
  t.equal(missing.after, EVENTS.length - 12);

  // Same cursor, other content (an amount off by one): a difference too.
  const tampered = EVENTS.map((e, i) => (i === 2 ? { ...e, payload: { ...e.payload, amount: `${e.payload.amount}1` } } : e));
  t.equal(compareActivity(EVENTS, viewOf(store(tampered)).events).firstDifference, 3);

  // A list that ends early: the rows after its end hold nothing.
  const short = compareActivity(EVENTS.slice(0, 4), viewOf(store(EVENTS.slice(0, 2))).events);
  t.equal(short.firstDifference, 3);
  t.equal(short.rows.at(-1)!.held, undefined);
  t.equal(short.rows.at(-1)!.expected?.cursor, EVENTS[3]!.cursor);

  // A payload that is not JSON differs, and says what it holds.
  const broken = compareActivity(EVENTS.slice(0, 1), [{ cursor: EVENTS[0]!.cursor, type: 'Transfer', payloadText: '{"amount":' }]);
  t.equal(broken.firstDifference, 1);
  t.match(broken.rows[0]!.held!.text, /Transfer \{"amount":$/);
});

t.test('entryWords: cursor, type, amount and the two sides, in a few characters', async (t) => {
  const from = `0x${'a1'.repeat(20)}`;
  const to = `0x${'b2'.repeat(20)}`;
  t.equal(entryWords('1:00000000000023:0001', 'Transfer', { from, to, amount: '1234567' }), '23:1 Transfer 1 234 567 0xa1a1…a1a1 → 0xb2b2…b2b2');
  t.equal(entryWords('1:00000000000023:0001', 'Transfer', { from, to, amount: 5 }), '23:1 Transfer 5 (not text) 0xa1a1…a1a1 → 0xb2b2…b2b2');
  t.equal(entryWords('1:00000000000023:0001', 'Approval', { owner: from }), '23:1 Approval');
  t.equal(entryWords('1:00000000000023:0001', 'Odd', null), '23:1 Odd');
});

t.test('the state table names the first difference; a matching store says none', async (t) => {
  const good = judge(EVENTS);
  const bad = judge([...EVENTS.slice(0, 5), ...EVENTS.slice(6)]);
  const table = stateTable(expected, bad, good);
  const col = table.columns.indexOf('first difference in the activity list');
  t.ok(col >= 0, 'a column for it');
  t.match(table.rows[1]!.cells[col], /^#6: holds \d+:\d+ [A-Z][a-z]+ .*, expected \d+:\d+ [A-Z][a-z]+ /);
  t.equal(table.rows[1]!.ok, false);
  t.equal(table.rows[2]!.cells[col], 'none', 'the control matches');
  t.equal(table.rows[0]!.cells.length, table.columns.length, 'the expected row has every cell');

  const unreadable = judgeStore('consumer', viewOf({ exists: false, state: [], events: [], balances: [] }), expected, []).summary;
  t.equal(stateTable(expected, unreadable, good).rows[1]!.cells[col], '—', 'no store: nothing to compare');
  const ended = judge(EVENTS.slice(0, 3));
  t.match(stateTable(expected, ended, good).rows[1]!.cells[col], /^#4: ends here, expected /);
});

t.test('the activity table: the two lists side by side, the first difference marked', async (t) => {
  const bad = judge([...EVENTS.slice(0, 5), ...EVENTS.slice(6)]);
  const table = activityTable(bad);
  t.equal(table.id, 'activity');
  t.same(table.columns, ['expected (the chain above its snapshot)', 'the consumer holds']);
  const marked = table.rows.filter((r) => r.aside === '◀ first difference');
  t.equal(marked.length, 1);
  t.equal(marked[0]!.label, '#6');
  t.equal(marked[0]!.ok, false);
  t.equal(table.rows[0]!.ok, true, 'rows before it agree');
  t.match(table.note, /part at entry 6, marked/);
  t.match(table.note, /Shown: entries 3 to 12 \(2 before, \d+ after\)/);

  const good = activityTable(judge(EVENTS));
  t.notOk(
    good.rows.some((r) => r.aside),
    'nothing marked when the lists agree',
  );
  t.match(good.note, new RegExp(`agree entry by entry \\(${EVENTS.length} events\\)`));

  const short = activityTable(judge(EVENTS.slice(0, 2)));
  t.equal(short.rows.at(-1)!.cells[1], '— (the list ends)');
  const none = activityTable(judgeStore('consumer', viewOf({ exists: false, state: [], events: [], balances: [] }), expected, []).summary);
  t.same(none.rows, []);
  t.equal(none.empty, 'The consumer has no readable store.');
});

t.test('the balances table: every followed account, the first wrong one marked, the hint shown', async (t) => {
  const account = topics[1]!;
  const want = expected.balances.get(account)!;
  const bad = judge(EVENTS, [account, (want + 1n).toString()]);
  const table = balancesTable(bad, judge(EVENTS));
  t.equal(table.rows.length, topics.length);
  const wrong = table.rows.filter((r) => r.ok === false);
  t.equal(wrong.length, 1);
  t.equal(wrong[0]!.aside, '◀ first difference');
  t.equal(table.rows.filter((r) => r.aside).length, 1);
  t.equal(bad.balances.find((b) => b.account === account)!.got, (want + 1n).toString());
  t.same(
    table.rows.map((r) => r.cells.length),
    topics.map(() => 3),
  );
  // An amount stored as a number: shown as such, wrong.
  const asNumber = judgeStore(
    'consumer',
    viewOf({ ...store(EVENTS), balances: store(EVENTS).balances.map(([a, v]) => [a, a === account ? 5 : v]) }),
    expected,
    [],
  ).summary;
  t.equal(asNumber.balances.find((b) => b.account === account)!.ok, false);
  t.match(balancesTable(asNumber, asNumber).rows.find((r) => r.ok === false)!.cells[1], /not canonical decimal text/);
  // The control has no row for an account: a dash.
  const noControl = balancesTable(bad, { ...bad, balances: [] });
  t.equal(noControl.rows[0]!.cells[2], '—');
});

t.test("only a wrong value is marked: the expected balance and the control's right one stay neutral", async (t) => {
  const account = topics[1]!;
  const want = expected.balances.get(account)!;
  const bad = judge(EVENTS, [account, (want + 1n).toString()]);
  const row = balancesTable(bad, judge(EVENTS)).rows.find((r) => r.ok === false)!;
  t.same(row.wrong, [1], "the consumer's cell, not the expected one or the control's");
  const cells = tableRow(row).text.match(/<td[^>]*>.*?<\/td>/g)!;
  t.notMatch(cells[0], /bad/, 'the expected balance: neutral');
  t.match(cells[1], /^<td class="bad"><span class="bad-text">/, "the consumer's wrong balance: red");
  t.notMatch(cells[2], /bad/, "the control's right balance: neutral, not red");
  t.notMatch(tableRow(row).text, /<tr class="bad"/, 'the row itself is not painted');
  const controlWrong = balancesTable(judge(EVENTS), bad).rows.find((r) => r.ok === false)!;
  t.same(controlWrong.wrong, [2], 'a wrong control is marked, in its own cell');
  t.same(
    balancesTable(judge(EVENTS), judge(EVENTS)).rows.map((r) => r.ok),
    topics.map(() => undefined),
    'all right: nothing marked',
  );
  const right = { ...judge(EVENTS), differs: false }; // a store judged right (this one lacks a snapshot)
  const state = stateTable(expected, right, right);
  t.same(
    state.rows.map((r) => [r.label, r.ok]),
    [
      ['expected (from the chain)', undefined],
      ['consumer under test', true],
      ['control consumer', undefined],
    ],
    'the control is the reference: neutral when right',
  );
  t.equal(stateTable(expected, right, bad).rows[2]!.ok, false, '… and marked when wrong');
});

const C = (block: number, log = 0) => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
const A = `0x${'a1'.repeat(20)}`;
const ev = (block: number, log = 0) =>
  encodeRealEvent({ cursor: C(block, log), type: 'Transfer', payload: { from: A, to: A, amount: '1', blockHash: '0x2', txHash: '0x1' } } as RealEvent);

t.test('labels: each frame in a few words; resends say "again"; a revoke names the band it voids', async (t) => {
  const label = newFeedLabeller();
  const send = (line: string, stream = 'consumer') => label({ stream, direction: 'send', line, cls: feedVocabulary.classify(line).cls });
  const recv = (line: string) => label({ stream: 'consumer', direction: 'recv', line, cls: feedVocabulary.classify(line).cls });
  t.equal(recv(encodeSubscribe({ client: 'c', topics: [A], cursor: C(9, 1), blockHash: '0x9' })), 'subscribe from 9:1');
  t.equal(recv(encodeSubscribe({ client: 'c', topics: [A], cursor: null, blockHash: null })), 'subscribe, cursor null');
  t.equal(send(encodeSnapshot(C(7, 2), '0xab', [[A, 5n]])), 'snapshot at 7:2');
  t.equal(send(ev(8)), 'event 8:0 Transfer');
  t.equal(send(ev(9, 1)), 'event 9:1 Transfer');
  t.equal(send(ev(10)), 'event 10:0 Transfer');
  t.equal(send(ev(9, 1)), 'event 9:1 Transfer again', 'a resend');
  t.equal(send(ev(9, 1), 'control'), 'event 9:1 Transfer', 'each stream on its own');
  t.equal(send(encodeRevoke(C(9))), 'revoke 9:1…10:0 ×2', 'the delivered events it voids');
  t.equal(send(ev(9, 1)), 'event 9:1 Transfer', 'the new branch is not a resend');
  t.equal(send(encodeRevoke(C(9, 1))), 'revoke 9:1 ×1');
  t.equal(send(encodeRevoke(C(20))), 'revoke 20:0…: none sent');
  t.equal(recv(encodeRevoke(C(20))), 'revoke from 20:0', 'a revoke the consumer sent: no band');
  t.equal(send(encodeSnapshot(C(30), '0xab', [])), 'snapshot at 30:0');
  t.equal(send(ev(8)), 'event 8:0 Transfer', 'after a snapshot nothing before counts as delivered');
  t.equal(send(encodeRevoke(C(1))), 'revoke 8:0 ×1');
  t.equal(send(encodeReset('stale-cursor')), 'reset stale-cursor');
  t.equal(send(encodeReset('slow-consumer')), 'reset slow-consumer');
  t.equal(send('{"op":"reset"}\n'), 'reset', 'no reason');
  t.equal(send(encodePing(7)), 'ping 7');
  t.equal(recv(encodePong(7)), 'pong 7');
  t.equal(recv('{"op": "pong", "id": "x"}\n'), 'pong x');
  t.equal(recv('{"op":"pong"}\n'), 'pong');
  t.equal(recv(ev(3)), 'event 3:0 Transfer', 'an event the consumer sent: no resend bookkeeping');
  t.equal(send('{"op":"event"}\n'), undefined, 'no cursor: the line itself');
  t.equal(send('{"op":"revoke"}\n'), undefined);
  t.equal(send('{"op":"snapshot"}\n'), 'snapshot');
  t.equal(send('{"op":"event-v2"}\n'), undefined, 'an unknown op: the line itself');
});

t.test('the vocabulary: exact cursors for highlights, its read moments and its word for positions', async (t) => {
  t.same(feedVocabulary.classify(ev(57, 3)), { cls: 'event', position: 57, key: C(57, 3) });
  t.same(feedVocabulary.classify(encodeRevoke(C(40))), { cls: 'revoke', position: 40, key: C(40) });
  t.same(feedVocabulary.classify(encodeReset('stale-cursor')), { cls: 'reset' }, 'no cursor, no key');
  t.same(feedVocabulary.readMoments, { 'at-subscribe': 'read at subscribe', converging: 'read while converging' });
  t.equal(feedVocabulary.positionWord, 'blocks');
  t.equal(typeof feedVocabulary.newLabeller, 'function');
});
