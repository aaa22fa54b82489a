// The feed chaos placement's part on the chain's events (./place.ts places the rest, and
// ./misbehave.ts the server's misbehaviour): process 1's hooks (an `exit` only where it must
// fire), and the quiet account of a quiet stale-cursor schedule. The simulated chain is
// remembered: one schedule is placed for its scenario, its words and its layers.

import { SimChain } from '../../../../publisher/feed/chain/chain.js';
import { ChainScript, chainConfig, type SimulatedChain, simulate } from '../scenario/chain-script.js';
import { CHAIN, type Placed, type Step } from './steps.js';
import type { ChainPlan } from '../scenario/plan.js';

/** Steps that can end a connection of the consumer under test (or its process). */
const CLOSING = new Set<Placed['layer']>([
  'cut',
  'byte-limit',
  'reset',
  'half-open',
  'kill',
  'malformed',
  'number-amount',
  'stall',
  'deep-reorg',
  'stale-cursor',
  'loss',
  'slow-reader',
]);
export const closes = (p: Placed): boolean =>
  CLOSING.has(p.layer) || (p.layer === 'reorg' && p.away !== undefined) || (p.layer === 'hook' && !p.item.startsWith('stop@'));

const blockOf = (cursor: string): number => Number(cursor.split(':')[1]);

const sims = new Map<string, SimulatedChain>();
/** simulate(), remembered: the same schedule is placed for its scenario, its words and its layers. */
export function sim(chain: ChainPlan, topics: readonly number[]): SimulatedChain {
  const key = JSON.stringify([chain, topics]);
  let s = sims.get(key);
  if (!s) {
    if (sims.size > 200) sims.clear();
    s = simulate(chain, topics);
    sims.set(key, s);
  }
  return s;
}

/** A block range [from, to] where the followed account should have an event a reorganisation abandons. */
export type Need = { from: number; to: number };

/**
 * The account (1..11 of 12) to follow, the search starting at `at`: one with no event around the
 * stale-cursor cut (`quiet`) where there is one, and of those the first with an abandoned event
 * in every `needs` range, else in the most (a reorganisation that abandons none of the account's
 * events reaches no consumer: seed 20261201 run 7); `unmet`: the needs it has none in.
 */
export function quietAccount(
  chain: ChainPlan,
  w: { from: number; to: number },
  at: number,
  needs: readonly Need[] = [],
): { topic: number; quiet: boolean; unmet: number[] } {
  const all = sim(
    chain,
    Array.from({ length: chain.accounts }, (_, i) => i),
  );
  const busy = new Set<string>();
  const abandoned = new Map<string, number[]>();
  for (const e of all.produced) {
    const b = blockOf(e.cursor);
    const p = e.payload as Record<string, unknown>;
    const accounts = ['from', 'to', 'owner', 'spender'].flatMap((k) => (typeof p[k] === 'string' ? [p[k] as string] : []));
    if (b >= w.from - 3 && b <= w.to + 3) for (const a of accounts) busy.add(a);
    if (all.canonicalHash(b) !== p.blockHash) for (const a of accounts) abandoned.set(a, [...(abandoned.get(a) ?? []), b]);
  }
  const candidates = Array.from({ length: chain.accounts - 1 }, (_, k) => 1 + ((at + k) % (chain.accounts - 1)));
  const quiet = candidates.filter((q) => !busy.has(all.topics[q]!));
  const unmet = (q: number) => needs.flatMap((n, i) => ((abandoned.get(all.topics[q]!) ?? []).some((b) => b >= n.from && b <= n.to) ? [] : [i]));
  const best = (among: number[]) => among.reduce((a, q) => (unmet(q).length < unmet(a).length ? q : a), among[0]!);
  const topic = best(quiet.length > 0 ? quiet : candidates);
  return { topic, quiet: quiet.length > 0, unmet: unmet(topic) };
}

/** The first block before which a placed step ends connection 1 (a cut, a kill, a toxic that closes), if one does. */
export function firstClosingBlock(placed: readonly Placed[]): number | undefined {
  const blocks = placed.flatMap((p) => {
    if (!closes(p)) return [];
    if (p.layer === 'kill') return [p.at];
    if (p.layer === 'reorg') return p.away ? [p.away.from] : [];
    if (p.layer === 'deep-reorg') return [p.after];
    return 'from' in p && p.from !== undefined ? [p.from] : [];
  });
  return blocks.length ? Math.min(...blocks) : undefined;
}

/**
 * Process 1's CHAOSLAB_FAULT items, each made a `stop` where an `exit` might never fire, and each
 * on a point process 1 reaches: an apply or commit among the events it applies before a SIGKILL
 * ends it; a revoke only where a reorganisation revokes events it holds (`revokes`), else the
 * apply; a second snapshot only where something takes one.
 */
export function hooks(
  steps: readonly Step[],
  chain: SimulatedChain,
  placed: readonly Placed[],
  slow: boolean,
  revokes: boolean,
  abandons: () => boolean,
): Placed[] {
  const asDrawn = steps
    .filter((x): x is Extract<Step, { layer: 'hook' }> => x.layer === 'hook')
    .map((x) => (x.point === 'revoke' && !revokes ? { ...x, point: 'apply' as const } : x));
  if (asDrawn.length === 0) return [];
  // The events process 1 surely applies: above the first snapshot (taken once both have
  // subscribed, at the safe height; later when a raise rolled it back), unless a later snapshot
  // (a stale cursor, a revoke into the snapshot) skips some.
  const snapshotRetaken = asDrawn.some((x) => x.point === 'snapshot' && x.action === 'raise' && x.at % 2 === 0);
  const above = CHAIN.initialBlocks - CHAIN.confirmations + 2 + (snapshotRetaken ? 4 : 0);
  const skipped = placed.some((p) => p.layer === 'stale-cursor' || p.layer === 'deep-reorg');
  const appliedBefore = (block: number) => (skipped ? 0 : chain.events.filter((e) => blockOf(e.cursor) > above && blockOf(e.cursor) < block).length);
  const applied = appliedBefore(Number.POSITIVE_INFINITY);
  // The events process 1 surely gets before a SIGKILL ends it or a snapshot taken again skips some
  // (a stale cursor's reset, a revoke into the snapshot), a block early: that may land first. With
  // none (a quiet account: seed 42's stop@commit:1 never fired), an apply or commit hook goes to
  // the first snapshot, which process 1 always takes.
  const ends = placed.flatMap((p) =>
    p.layer === 'kill' ? [p.at - 1] : p.layer === 'stale-cursor' && p.quiet === undefined ? [p.from - 1] : p.layer === 'deep-reorg' ? [p.after - 1] : [],
  );
  const end = Math.min(...ends);
  const reached = Math.min(chain.events.filter((e) => blockOf(e.cursor) > above && blockOf(e.cursor) < end).length, 40);
  const drawn = asDrawn.map((x) => (reached === 0 && (x.point === 'apply' || x.point === 'commit') ? { ...x, point: 'snapshot' as const } : x));
  const secondSnapshot = skipped || snapshotRetaken;
  // The first revoke: a shallow reorganisation abandons delivered events on a link nothing disturbs.
  const quietLink = !slow && !placed.some((p) => closes(p) && p.layer !== 'kill') && !drawn.some((x) => x.action === 'raise');
  const revokeSure = quietLink && placed.some((p) => p.layer === 'reorg') && abandons();
  const nth = (x: Extract<Step, { layer: 'hook' }>) =>
    x.point === 'apply' || x.point === 'commit' ? 1 + (x.at % reached) : x.point === 'snapshot' && !secondSnapshot ? 1 : 1 + (x.at % 2);
  // A raise inside event n's transaction rolls it back: that event never reaches commit:n.
  const rolledBack = new Set(drawn.filter((x) => x.action === 'raise' && x.point === 'apply').map(nth));
  const out: Placed[] = [];
  const points = new Set<string>();
  let stops = 0;
  for (const x of drawn) {
    const n = nth(x);
    const sure =
      x.point === 'apply' ? applied >= 1 : x.point === 'commit' ? applied >= 1 && !rolledBack.has(n) : x.point === 'snapshot' ? n === 1 : n === 1 && revokeSure;
    const madeStop = x.action === 'exit' && !sure;
    const action = madeStop ? 'stop' : x.action;
    const key = `${x.point}:${n}`;
    if (points.has(key) || (action === 'stop' && stops > 0)) continue;
    points.add(key);
    if (action === 'stop') stops++;
    out.push({ layer: 'hook', item: `${action}@${key}`, madeStop });
  }
  // An exit or a raise ends process 1: an apply or commit after it never comes (seed 43: exit@apply:3 before exit@apply:6).
  const processEnds = Math.min(...out.flatMap((p) => (p.layer === 'hook' && !p.item.startsWith('stop@') ? (hookOrder(p.item) ?? []) : [])));
  return out.filter((p) => p.layer !== 'hook' || !/@(apply|commit):/.test(p.item) || hookOrder(p.item)! <= processEnds);
}

/** Where a hook comes in process 1's life: the first snapshot, then apply 1, commit 1, apply 2…; a revoke or later snapshot: unknown. */
function hookOrder(item: string): number | undefined {
  const [, point, n] = /@(\w+):(\d+)$/.exec(item)!;
  return point === 'apply' ? 2 * Number(n) : point === 'commit' ? 2 * Number(n) + 1 : point === 'snapshot' && n === '1' ? 0 : undefined;
}

/**
 * Whether the script's first reorganisation abandons an event of the followed accounts below its
 * top block (delivered a block before it happens, so the connection surely holds it).
 */
export function abandonsEvents(plan: ChainPlan, topics: readonly number[]): boolean {
  const chain = new SimChain(chainConfig(plan));
  const followed = new Set(topics.map((i) => chain.accounts[i]!));
  const script = new ChainScript(chain, plan);
  script.mineInitial();
  for (let step = script.next(); step; step = script.next()) {
    const change = script.perform(step);
    if (change.kind !== 'reorg') continue;
    const top = Math.max(...change.abandoned.map((b) => b.number));
    return change.abandoned.some((b) => b.number < top && b.logs.some((l) => followed.has(l.from) || followed.has(l.to)));
  }
  return false;
}
