// The checker's words for a revoke that forgot the balances: the abandoned events of a scripted
// reorganisation (expectedOf) and the hint that names them (revokedKept, judgeStore).
import { join } from 'node:path';
import t from 'tap';
import { simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import { effectOn, expectedOf, judgeStore, revokedKept, type StoreView } from '../../../../harness/labs/feed/check/state.js';
import { loadScenario, type Scenario } from '../../../../harness/catalogue/load.js';

const ROOT = join(import.meta.dirname, '../../../..');
const REORG = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-reorg.yaml')) as Scenario<FeedPlan>;
const sim = simulate(REORG.lab.chain, REORG.lab.topicIndexes);
const expected = expectedOf(sim);
const topics = expected.topics;

/** A store that holds every canonical event (no snapshot base needed: balances given as they are). */
function view(balances: Map<string, bigint>): StoreView {
  const last = expected.events.at(-1)!;
  return {
    exists: true,
    shape: [],
    cursor: last.cursor,
    blockHash: last.payload.blockHash,
    snapshotCursor: null,
    snapshotBlockHash: null,
    events: expected.events.map((e) => ({ cursor: e.cursor, type: e.type, payloadText: JSON.stringify(e.payload), payload: e.payload })),
    balances: new Map([...balances].map(([a, v]) => [a, v.toString()])),
  };
}

t.test('the abandoned events of feed-reorg are the three delivered ones', async (t) => {
  t.same(
    expected.abandoned.map((e) => e.cursor.split(':').slice(1).map(Number)),
    [
      [14, 0],
      [15, 2],
      [16, 0],
    ],
  );
  t.ok(
    expected.abandoned.every((e) => !expected.events.some((c) => c.cursor === e.cursor && c.payload.blockHash === e.payload.blockHash)),
    'none of them is canonical',
  );
  t.same(expectedOf(simulate({ ...REORG.lab.chain, reorgs: [] }, REORG.lab.topicIndexes)).abandoned, [], 'no reorganisation, nothing abandoned');
});

t.test('revokedKept: one abandoned event, all of them, or none', async (t) => {
  const touching = (account: string) => expected.abandoned.filter((e) => effectOn(e.type, e.payload, account) !== 0n);
  const account = topics.find((a) => touching(a).length >= 1)!;
  t.ok(account, 'an abandoned transfer touches a followed account');
  const first = touching(account)[0]!;
  t.equal(revokedKept(expected.abandoned, null, account, effectOn(first.type, first.payload, account)), `the revoked event ${first.cursor}`);
  const top = expected.abandoned.at(-1)!.cursor;
  t.equal(revokedKept(expected.abandoned, top, account, effectOn(first.type, first.payload, account)), undefined, 'at or below the snapshot: not counted');
  t.equal(revokedKept(expected.abandoned, null, account, 1n), undefined, 'a delta no abandoned event explains');
  const several = topics.find((a) => touching(a).length > 1);
  if (several) {
    const sum = touching(several).reduce((n, e) => n + effectOn(e.type, e.payload, several), 0n);
    t.match(revokedKept(expected.abandoned, null, several, sum), /^the revoked events /);
  }
});

t.test('judgeStore names a revoke that kept the balances', async (t) => {
  const kept = new Map(topics.map((a) => [a, expected.balances.get(a)! + expected.abandoned.reduce((n, e) => n + effectOn(e.type, e.payload, a), 0n)]));
  const judged = judgeStore('consumer', view(kept), expected, []);
  const balance = judged.problems.filter((p) => p.code === 'revoke-kept-balance');
  t.ok(balance.length > 0, JSON.stringify(judged.problems));
  for (const p of balance)
    t.match(
      p.text,
      /which a reorganisation abandoned: revoked without undoing its balance change\?\) — a revoke deletes the events .* undoes their effect on balances \(CONTRACT\.md §4\)/,
    );
  const right = judgeStore('consumer', view(expected.balances), expected, []);
  t.same(
    right.problems.filter((p) => p.code === 'wrong-balance' || p.code === 'revoke-kept-balance'),
    [],
    'the right balances are not blamed',
  );
});

t.test('judgeStore: balances off by the events the store lacks are those events, not rounding nor a double apply', async (t) => {
  // Drop the last two events of one account from the store; its balance is what the rest adds up to.
  const account = topics.find((a) => expected.events.filter((e) => effectOn(e.type, e.payload, a) !== 0n).length >= 3)!;
  t.ok(account, 'a followed account with three events or more');
  const lacked = expected.events.filter((e) => effectOn(e.type, e.payload, account) !== 0n).slice(-2);
  const stored = view(expected.balances);
  stored.events = stored.events.filter((e) => !lacked.some((l) => l.cursor === e.cursor));
  const short = expected.balances.get(account)! - lacked.reduce((n, e) => n + effectOn(e.type, e.payload, account), 0n);
  stored.balances.set(account, short.toString());
  const judged = judgeStore('the probe', stored, expected, []);
  const balance = judged.problems.find((p) => p.text.includes(`the balance of ${account}`));
  t.equal(balance?.code, 'wrong-balance', 'no cause of its own: the missing events are the finding');
  t.match(balance?.text, new RegExp(`off by exactly the effect of .*${lacked.at(-1)!.cursor}.*, missing from its activity list: never applied`));
  t.notOk(
    judged.problems.some((p) => p.code === 'imprecise-balance' || p.code === 'applied-twice'),
    'neither rounding nor a double apply is blamed',
  );
});

t.test('judgeStore: a store on a snapshot, whose balance lost precision, is named imprecise (the events below the snapshot are not missing)', async (t) => {
  const big = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-big-amounts.yaml')) as Scenario<FeedPlan>;
  const chain = expectedOf(simulate(big.lab.chain, big.lab.topicIndexes));
  const snapshot = chain.events[Math.floor(chain.events.length / 2)]!;
  const above = chain.events.filter((e) => e.cursor > snapshot.cursor);
  const account = chain.topics.find((a) => (chain.balances.get(a) ?? 0n).toString().length >= 20)!;
  t.ok(account, 'a followed account with a balance of 20 digits or more');
  const want = chain.balances.get(account)!.toString();
  // A double's rounding: the first 16 digits kept, the rest zeros (not the chain's).
  const rounded = `${want.slice(0, 16)}${'0'.repeat(want.length - 16)}`;
  t.not(rounded, want);
  const last = above.at(-1)!;
  const stored: StoreView = {
    exists: true,
    shape: [],
    cursor: last.cursor,
    blockHash: last.payload.blockHash,
    snapshotCursor: snapshot.cursor,
    snapshotBlockHash: snapshot.payload.blockHash,
    events: above.map((e) => ({ cursor: e.cursor, type: e.type, payloadText: JSON.stringify(e.payload), payload: e.payload })),
    balances: new Map([...chain.balances].map(([a, v]) => [a, a === account ? rounded : v.toString()])),
  };
  const judged = judgeStore('consumer', stored, chain, []);
  const balance = judged.problems.find((p) => p.text.includes(`the balance of ${account}`));
  t.equal(balance?.code, 'imprecise-balance');
  t.match(
    balance?.text,
    new RegExp(
      `^consumer: amounts added inexactly: the balance of ${account} is ${rounded}, the chain says ${want} \\(the same first \\d+ digits, then not: the sum lost precision\\?\\)`,
    ),
  );
  t.notOk(
    judged.problems.some((p) => p.code === 'missing-events'),
    'nothing missing above the snapshot',
  );
});
