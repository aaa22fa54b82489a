// The feed chaos placement's part on the chain's events (./place.ts places the rest): the
// server's misbehaviour on events the simulated chain produces for the followed accounts, process
// 1's hooks (an `exit` only where it must fire), and the quiet account of a quiet stale-cursor
// schedule. The simulated chain is remembered: one schedule is placed for its scenario, its words
// and its layers.

import { SimChain } from '../../../../publisher/feed/chain/chain.js';
import { ChainScript, chainConfig, type SimulatedChain, simulate } from '../scenario/chain-script.js';
import { CHAIN, MALFORMED, type Placed, SLOW, type Step } from './steps.js';
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

/** The account (1..11 of 12) with no event around the stale-cursor cut, starting the search at `at`. */
export function quietAccount(chain: ChainPlan, w: { from: number; to: number }, at: number): number | undefined {
  const all = sim(
    chain,
    Array.from({ length: chain.accounts }, (_, i) => i),
  );
  const busy = new Set<string>();
  for (const e of all.produced) {
    const b = blockOf(e.cursor);
    if (b < w.from - 3 || b > w.to + 3) continue;
    const p = e.payload as Record<string, unknown>;
    for (const k of ['from', 'to', 'owner', 'spender']) if (typeof p[k] === 'string') busy.add(p[k] as string);
  }
  for (let k = 0; k < chain.accounts - 1; k++) {
    const q = 1 + ((at + k) % (chain.accounts - 1));
    if (!busy.has(all.topics[q]!)) return q;
  }
  return undefined;
}

/** The first block before which a placed step ends connection 1 (a cut, a kill, a toxic that closes), if one does. */
function firstClosingBlock(placed: readonly Placed[]): number | undefined {
  const blocks = placed.flatMap((p) => {
    if (!closes(p)) return [];
    if (p.layer === 'kill') return [p.at];
    if (p.layer === 'reorg') return p.away ? [p.away.from] : [];
    if (p.layer === 'deep-reorg') return [p.after];
    return 'from' in p ? [p.from] : [];
  });
  return blocks.length ? Math.min(...blocks) : undefined;
}

/**
 * Server misbehaviour on events the script produces for the followed accounts (1-based, as
 * `event:` counts them), on a connection that carries its event: connection 1 where nothing
 * closes a connection, and on connection 1 an event sent before the first step that closes it.
 */
export function misbehaviour(steps: readonly Step[], chain: SimulatedChain, placed: readonly Placed[]): Placed[] {
  const produced = chain.produced;
  if (produced.length === 0) return [];
  // The server finds a rule's event by its cursor, and acts on the first event sent with it: after
  // a reorganisation a cursor comes again, on another block's event (maybe not a Transfer). So an
  // anchor is always the first event with its cursor.
  const first = new Map<string, number>();
  for (const [i, e] of produced.entries()) if (!first.has(e.cursor)) first.set(e.cursor, i);
  const closing = firstClosingBlock(placed);
  const anyClose = placed.some(closes);
  /** The first event a bad frame or a stall ends connection 1 at: a resend there comes before it. */
  let endsFirst = Number.POSITIVE_INFINITY;
  // The block the script had reached when it produced event j (a reorganisation's new branch comes after its block).
  const reached: number[] = [];
  for (const [j, e] of produced.entries()) reached.push(Math.max(reached[j - 1] ?? 0, blockOf(e.cursor)));
  const beforeClosing = (j: number) => closing === undefined || reached[j]! < closing - 1;
  const afterSlow = slowReaderRides(placed, reached);
  const onFirst = (j: number) => j < endsFirst && beforeClosing(j);
  /** The connection after that bad frame or stall: it resumes there, and carries the events after it. */
  const onSecond = (j: number) => j > endsFirst && beforeClosing(j);
  const anchor = (i: number, transfer: boolean, fits: (j: number) => boolean): number | undefined => {
    for (let k = 0; k < produced.length; k++) {
      const j = (i + k) % produced.length;
      if (first.get(produced[j]!.cursor) === j && (!transfer || produced[j]!.type === 'Transfer') && fits(j)) return j;
    }
    return undefined;
  };
  const heavyLink = placed.some((p) => p.layer === 'slicer' || p.layer === 'bandwidth' || p.layer === 'loss');
  const out = new Map<Step, Placed>();
  const taken = new Set<string>();
  const ending = (x: Step) => x.layer === 'malformed' || x.layer === 'number-amount' || x.layer === 'stall';
  // The ones that end their connection first, then resends and unknown ops before them.
  for (const x of [...steps.filter(ending), ...steps.filter((y) => y.layer === 'resend'), ...steps.filter((y) => y.layer === 'unknown-op')]) {
    if (x.layer !== 'resend' && x.layer !== 'malformed' && x.layer !== 'number-amount' && x.layer !== 'unknown-op' && x.layer !== 'stall') continue;
    if (x.layer === 'unknown-op' && (anyClose || [...out.values()].some((p) => p.layer !== 'resend'))) continue; // left out beside anything that closes (./place.ts): its event stays free
    let connection = x.layer === 'unknown-op' || !anyClose ? 1 : x.connection;
    let fits = connection === 1 ? onFirst : () => true;
    let fallback: (j: number) => boolean = () => true;
    if (x.layer === 'stall' && afterSlow) {
      // A slow reader's connection delivers until its queue overflows: a stall goes to the next one, after that.
      connection = 2;
      fits = afterSlow.fits;
      fallback = afterSlow.late;
    }
    // Past the bad frame or stall that ends connection 1 (a second one, or a resend with no event before it): on connection 2.
    else if (connection === 1 && x.layer !== 'unknown-op' && Number.isFinite(endsFirst) && (ending(x) || anchor(x.at, false, onFirst) === undefined)) {
      connection = 2;
      fits = onSecond;
    }
    const anyOf = (a: number, transfer: boolean) => anchor(a, transfer, fits) ?? anchor(a, transfer, fallback);
    let i = anyOf(x.at % produced.length, false);
    let form = x.layer === 'malformed' ? MALFORMED[x.form % MALFORMED.length]! : undefined;
    if (form === 'oversized' && heavyLink) form = 'trailing-comma';
    if (i !== undefined && (x.layer === 'number-amount' || form === 'noncanonical-amount')) {
      const t = anyOf(i, true);
      if (t === undefined) form = 'trailing-comma';
      i = t ?? (x.layer === 'number-amount' ? undefined : i);
    }
    if (i === undefined) continue;
    const key = `${i}/${connection}`;
    if (taken.has(key)) continue; // the server takes the first rule for an event on a connection
    taken.add(key);
    if (connection === 1 && ending(x)) endsFirst = Math.min(endsFirst, i);
    const at = { event: i + 1, cursor: produced[i]!.cursor };
    if (x.layer === 'resend') out.set(x, { layer: 'resend', ...at, count: x.count, connection });
    else if (x.layer === 'malformed') out.set(x, { layer: 'malformed', ...at, form: form!, connection });
    else if (x.layer === 'number-amount') out.set(x, { layer: 'number-amount', ...at, connection });
    else if (x.layer === 'unknown-op') out.set(x, { layer: 'unknown-op', ...at });
    else out.set(x, { layer: 'stall', ...at, ...(x.forever ? {} : { ms: x.ms }), connection });
  }
  return steps.flatMap((x) => out.get(x) ?? []);
}

/**
 * Where a slow reader's schedule may stall the server: the events produced once its stretch (a
 * second without reading, and as long again for the queue to fill) is over, so on the connection
 * after its `reset slow-consumer`; best before the next step that closes that one.
 */
function slowReaderRides(placed: readonly Placed[], reached: readonly number[]): { late: (j: number) => boolean; fits: (j: number) => boolean } | undefined {
  const slow = placed.find((p) => p.layer === 'slow-reader');
  if (!slow) return undefined;
  const end = slow.from + Math.ceil((1.5 * slow.ms) / (CHAIN.blockIntervalMs * SLOW.timeScale));
  const next = firstClosingBlock(placed.filter((p) => p !== slow && !(p.layer === 'kill' ? p.at < end : 'from' in p && p.from < end)));
  const late = (j: number) => reached[j]! >= end;
  return { late, fits: (j) => late(j) && (next === undefined || reached[j]! < next - 1) };
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
