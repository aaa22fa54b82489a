// The premises of the reorganisation scenarios, from the simulated chain: what each description
// promises (which blocks are abandoned, which events, where the consumer's cursor stands when it
// is cut off) holds for the seed and script in the file.
import path from 'node:path';
import t from 'tap';
import { simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import { expectedOf } from '../../../../harness/labs/feed/check/state.js';
import { loadScenario, type Scenario } from '../../../../harness/catalogue/load.js';

const SCENARIOS = path.join(path.resolve(import.meta.dirname, '../../../..'), 'scenarios', 'feed');
const load = (name: string) => {
  const s = loadScenario(path.join(SCENARIOS, `${name}.yaml`)) as Scenario<FeedPlan>;
  const sim = simulate(s.lab.chain, s.lab.topicIndexes);
  return { s, sim, expected: expectedOf(sim) };
};
const at = (cursor: string): string => cursor.split(':').slice(1).map(Number).join(':');
const blockOf = (cursor: string): number => Number(cursor.split(':')[1]);
/** The cut's start and end blocks (proxy down before_block a .. before_block b). */
/** The last event sent before block `from`: produced in order, up to a reorganisation's new branch (its cursors go back). */
const heldBefore = <E extends { cursor: string }>(produced: readonly E[], from: number): E => {
  let held = produced[0]!;
  for (const e of produced.slice(1)) {
    if (blockOf(e.cursor) >= from || e.cursor <= held.cursor) break;
    held = e;
  }
  return held;
};
const cutOf = (s: Scenario<FeedPlan>): [number, number] => {
  const cut = s.faults.find((f) => f.effect.kind === 'proxy-down')!;
  const value = (x: unknown) => (x as { value: number }).value;
  return [value(cut.start), value(cut.end)];
};

t.test('feed-reorg: 3 delivered events revoked, then the new branch', async (t) => {
  for (const name of ['feed-reorg', 'feed-crash-revoke', 'feed-mid-transaction-visibility']) {
    const { sim, expected } = load(name);
    t.equal(sim.error, undefined, `${name}: the script runs`);
    t.same(sim.reorgs, [{ ordinal: 1, afterBlock: 16, forkNumber: 14, headAfter: 18, deep: false }], `${name}: blocks 14..16 abandoned for 14..18`);
    t.same(
      expected.abandoned.map((e) => at(e.cursor)),
      ['14:0', '15:2', '16:0'],
      `${name}: the 3 abandoned events`,
    );
    const branch = expected.events.filter((e) => blockOf(e.cursor) >= 14 && blockOf(e.cursor) <= 18).map((e) => at(e.cursor));
    t.same(branch, ['17:0', '17:2', '18:0', '18:1'], `${name}: the new branch's events`);
  }
});

t.test("feed-reorg-while-away: the consumer's block is abandoned while it is cut off", async (t) => {
  const { s, sim, expected } = load('feed-reorg-while-away');
  const [from, to] = cutOf(s);
  const held = heldBefore(sim.produced, from);
  t.equal(at(held.cursor), '16:0', 'its cursor when the cut starts');
  const reorg = sim.reorgs[0]!;
  t.ok(reorg.afterBlock >= from && reorg.afterBlock < to, 'the reorganisation happens during the cut');
  t.equal(reorg.forkNumber, 15, 'from block 15, below the cursor block');
  t.not(sim.canonicalHash(16), held.payload.blockHash, 'block 16 of its cursor is no longer canonical');
  t.same(
    expected.abandoned.map((e) => at(e.cursor)),
    ['15:2', '16:0'],
    'the abandoned events it holds',
  );
});

t.test("feed-canonical-while-away: the reorganisation while away stays above the consumer's block", async (t) => {
  const { s, sim, expected } = load('feed-canonical-while-away');
  const [from, to] = cutOf(s);
  const held = heldBefore(sim.produced, from);
  t.equal(at(held.cursor), '16:0', 'its cursor when the cut starts');
  const reorg = sim.reorgs[0]!;
  t.ok(reorg.afterBlock >= from && reorg.afterBlock < to, 'the reorganisation happens during the cut');
  t.ok(reorg.forkNumber > 16, 'above the cursor block');
  t.equal(sim.canonicalHash(16), held.payload.blockHash, 'block 16 stays canonical');
  t.same(
    expected.abandoned.map((e) => at(e.cursor)),
    ['19:0', '19:2'],
    'the abandoned events were never sent to it',
  );
});

t.test('feed-deep-reorg and feed-crash-snapshot: a revoke below the first snapshot', async (t) => {
  for (const name of ['feed-deep-reorg', 'feed-crash-snapshot']) {
    const { s, sim } = load(name);
    t.equal(sim.error, undefined, `${name}: the script runs`);
    const reorg = sim.reorgs[0]!;
    t.ok(reorg.deep, `${name}: a deep reorganisation`);
    // The first snapshots are taken at the safe height when the script starts: initial_blocks - confirmations.
    t.ok(reorg.forkNumber <= s.lab.chain.initialBlocks - s.lab.chain.confirmations, `${name}: fork ${reorg.forkNumber} at or below the first snapshot`);
  }
});

t.test('feed-resend-after-reconnect: the resent events are transfers the consumer holds', async (t) => {
  const { s, sim } = load('feed-resend-after-reconnect');
  const [from] = cutOf(s);
  const rule = s.lab.server.misbehaviour[0]!;
  t.equal(rule.action, 'resend');
  t.equal(rule.connection, 2, 'on the connection after the cut');
  t.equal(blockOf(rule.at), from, 'at the first event after the cut');
  const before = sim.produced.filter((e) => e.cursor < rule.at).slice(-2);
  t.same(
    before.map((e) => at(e.cursor)),
    ['19:0', '19:2'],
  );
  for (const e of before) t.ok(e.type === 'Transfer' && e.payload.from !== e.payload.to, `${at(e.cursor)} moves a balance`);
});
