// Where a feed chaos schedule's steps take effect: the chain and its script first (reorganisations
// on blocks the script mines one by one: ./reorgs.ts), then every fault on a block the script mines, then
// misbehaviour on events the simulated chain produces (./misbehave.ts), then the hooks. Rules that keep every
// schedule fair to a correct consumer, whatever else it holds:
//   - nothing lossy starts in the first second of the script, so the first snapshot is installed
//     before the link can lose it (hook counts rest on it);
//   - one half-open link, with feed-half-open's heartbeats (the server must not notice first), and
//     no cut, pause or packet loss beside it: a consumer that cannot reach the server in the
//     half-open stretch would be taken for one without an idle timeout;
//   - an `exit` hook only where it must fire (the checker holds a process still running with an
//     exit hook against it): apply/commit within the events surely applied, the first snapshot,
//     the first revoke only on a quiet link; otherwise it becomes a `stop`. One `stop` at most
//     (a SIGSTOP fault could swallow a second and shift the reads);
//   - an unknown op only on connection 1 of a schedule where nothing closes a connection (the
//     checker takes any later consumer-side close of that connection for a refusal);
//   - no toxic for a slow reader (a toxic's change waits for the blocked write), nor a bad frame
//     (the server's `reset slow-consumer` may close the connection before the consumer reads it,
//     and the checker holds the open connection against it); the oversized frame (1 MiB) never
//     through a slicer, a starved link or loss.
// ./events.ts places what rides on the chain's events; ./words.ts says the result in
// words; ./scenario.ts writes it as a scenario file.

import { firstFit, hides, overlaps, staleCut, stallSilence, toxicsWhereLinesFlow, type Window } from './aim.js';
import { type AimedReorg, type Guard, minedBlocks, type PlacedReorg, placeReorgs, placeReorgWindows } from './reorgs.js';
import { abandonsEvents, closes, hooks, quietAccount, sim } from './events.js';
import { misbehaviour } from './misbehave.js';
import { CHAIN, type Placed, SLOW, type Step, type StreamSchedule, TOPIC_SETS } from './steps.js';

export type { Placed };
import type { ChainPlan } from '../scenario/plan.js';

export interface Link {
  serverPingMs: number;
  serverIdleMs: number;
  consumerPingMs: number;
  consumerIdleMs: number;
}

export interface Placement {
  timeScale: number;
  chain: ChainPlan;
  topics: number[];
  blocks: number;
  link: Link;
  steps: Placed[];
  convergeMs: number;
}

const placements = new WeakMap<StreamSchedule, Placement>();
export function place(s: StreamSchedule): Placement {
  let p = placements.get(s);
  if (!p) {
    p = compute(s);
    placements.set(s, p);
  }
  return p;
}

type HalfOpenStep = Extract<Step, { layer: 'half-open' }>;
type StaleStep = Extract<Step, { layer: 'stale-cursor' }>;
type LossStep = Extract<Step, { layer: 'loss' }>;

function compute(s: StreamSchedule): Placement {
  const timeScale = s.slow ? SLOW.timeScale : 0.1;
  const period = CHAIN.blockIntervalMs * timeScale;
  const { halfOpen, stale, loss, steps } = keptSteps(s);

  // The script: long enough for a stale-cursor cut, which must outlast retention and the safe height.
  const minStart = Math.max(1, Math.ceil((s.slow ? 500 : 1000) / period) - 1);
  const staleBlocks = stale ? Math.max(stale.retention + 1, CHAIN.confirmations) + 2 + stale.extra : 0;
  // A slow reader's second without reading needs blocks produced meanwhile, and after.
  const slowBlocks = s.slow ? Math.ceil((1.5 * SLOW.stopMs) / period) : 0;
  // Room for the stale cursor's cut off a reorganisation's abandoned blocks (./aim.ts), and after a
  // slow reader's stretch, which has no cut in it (a reorganisation's new blocks, up to two more
  // than it abandons, are not mined one by one); a reorganisation while away keeps its guard
  // (./aim.ts awayGuard, some 6 blocks) from every other absence.
  const awayRoom = steps.some((x) => x.layer === 'reorg' && x.away) ? 6 : 0;
  const staleRoom = stale && steps.some((x) => x.layer === 'reorg') ? staleBlocks + awayRoom : 0;
  const reorgCount = steps.filter((x) => x.layer === 'reorg' || x.layer === 'deep-reorg').length;
  const newBlocks = 2 * reorgCount;
  // Packet loss closes connections at unpredictable times: beside reorganisations it comes after them, in blocks of its own.
  const lossRoom = loss && reorgCount > 0 ? LOSS_BLOCKS : 0;
  const blocks = Math.max(
    s.blocks,
    staleBlocks + staleRoom + minStart + 3,
    // a slow reader's reorganisations after its stretch: some 6 blocks each (dense blocks: 100 ms each)
    slowBlocks + (s.slow ? 6 * reorgCount + 2 : 0) + (s.slow && stale ? staleBlocks + newBlocks + staleRoom : 0) + minStart + 3,
    // loss after the reorganisations: some 6 blocks each (a cut while away included), then its own
    lossRoom ? minStart + 6 * reorgCount + lossRoom : 0,
    // each reorganisation past the previous one's stretch (placeReorgs): some 6 blocks each, and
    // the stale cut with the way back from it (a reset, a second reconnect) where none hides it
    minStart + 6 * reorgCount + (stale && reorgCount > 0 ? staleBlocks + 4 : 0) + 3,
    // a toxic downstream on one side of a stalled server's silence (./aim.ts toxicsWhereLinesFlow)
    minStart + stallRoom(steps, period) + 3,
  );
  const lastBlock = CHAIN.initialBlocks + blocks;

  // The followed accounts: a quiet one for a quiet stale-cursor schedule (known once the chain is).
  const quiet = quietStale(s, stale);
  const drawnTopics = s.slow ? [0, 1, 2, 3, 4, 5] : [...TOPIC_SETS[s.topics % TOPIC_SETS.length]!];
  // A slow reader's reorganisations come after its stretch: its `reset slow-consumer` takes it away there.
  const firstFree = CHAIN.initialBlocks + minStart + (s.slow ? slowBlocks + 2 : 0);
  let reorgs = placeReorgs(steps, firstFree, lastBlock - lossRoom, (so) => chainOf(s, stale, lastBlock, so), quiet ? undefined : drawnTopics, !halfOpen);
  const mined = minedBlocks(reorgs, lastBlock);
  const { placed, staleWindow } = placeOnBlocks(s, steps, reorgs, mined, { minStart, staleBlocks, slowBlocks, period }, halfOpen);

  let quietTopic: number | undefined;
  if (quiet && stale && staleWindow) {
    const followed = followQuiet(stale, staleWindow, placed, reorgs, (kept) => chainOf(s, stale, lastBlock, kept));
    quietTopic = followed.topic;
    reorgs = followed.reorgs;
  }
  const chain = chainOf(s, stale, lastBlock, reorgs);
  const topics = quiet ? [quietTopic ?? 1] : drawnTopics;
  const chainSim = sim(chain, topics);

  // A stall for good lasts until the consumer's idle timeout, at its longest before unknown ops are placed.
  placed.push(...misbehaviour(steps, chainSim, placed, (block, ms) => stallSilence(block, ms, LONGEST_IDLE_MS, period)));
  // The link with every unknown op still in: the consumer's idle timeout at its longest.
  toxicsWhereLinesFlow(placed, mined, minStart, period, linkOf(s, halfOpen, placed));
  const revokes = reorgs.some((r) => r.layer === 'deep-reorg' || r.firstHeld !== undefined);
  placed.push(...hooks(steps, chainSim, placed, s.slow, revokes, () => abandonsEvents(chain, topics)));
  // An unknown op is judged by what happens to its connection afterwards: nothing else may close it.
  const kept = placed.filter((p) => p.layer !== 'unknown-op' || (!s.slow && !placed.some(closes)));

  const link = linkOf(s, halfOpen, kept);
  const count = (layer: Placed['layer']) => kept.filter((p) => p.layer === layer).length;
  // Only a failing consumer waits it out: a correct one converges well before.
  const convergeMs =
    6000 + 1500 * count('kill') + link.consumerIdleMs * count('stall') + (halfOpen ? halfOpen.ms : 0) + (loss ? 8000 : 0) + (s.slow ? 10_000 : 0);
  return { timeScale, chain, topics, blocks, link, steps: kept, convergeMs: Math.min(convergeMs, 60_000) };
}

/** The schedule's steps that can take effect together: one half-open, stale-cursor or loss step, and what fits beside it. */
function keptSteps(s: StreamSchedule): { halfOpen?: HalfOpenStep; stale?: StaleStep; loss?: LossStep; steps: Step[] } {
  const first = <L extends Step['layer']>(layer: L) => s.steps.find((x): x is Extract<Step, { layer: L }> => x.layer === layer);
  const halfOpen = s.slow ? undefined : first('half-open');
  const stale = halfOpen ? undefined : first('stale-cursor');
  const loss = halfOpen ? undefined : first('loss');
  // A slow reader backs the link up: Toxiproxy answers a toxic's change only once the blocked
  // write to the consumer is through (seconds, not the 15 s the harness waits). Its `reset
  // slow-consumer` may close a connection before it reads a bad frame there. A hook that ends
  // process 1 restarts it, and the stretch may stop the new one before it has connected (seed
  // 20261202 run 11): a slow reader has no hook.
  const dropped = new Set<Step['layer']>([
    ...(halfOpen ? (['cut', 'pause'] as const) : []),
    ...(s.slow ? (['latency', 'slicer', 'bandwidth', 'byte-limit', 'reset', 'malformed', 'number-amount', 'hook'] as const) : []),
  ]);
  const steps = s.steps
    .filter((x) => {
      if (x.layer === 'half-open' || x.layer === 'stale-cursor' || x.layer === 'loss') return x === halfOpen || x === stale || x === loss;
      if (x.layer === 'deep-reorg' && stale) return false; // retention may have deleted what it would reach
      return !dropped.has(x.layer);
    })
    .map((x) => longEnough(x, halfOpen ? HALF_OPEN_SERVER_PING_MS : s.serverPing));
  return { ...(halfOpen ? { halfOpen } : {}), ...(stale ? { stale } : {}), ...(loss ? { loss } : {}), steps };
}

/**
 * A toxic meets only what crosses it. Upstream that is the consumer's subscribe, its pongs and,
 * after CHAOSLAB_PING_MS without sending, a ping: it lasts two of those (239 ms of reset_peer at
 * seed 42 met nothing). Downstream, events come only on blocks with a followed account's event,
 * and a ping after the server's ping_ms without one: it lasts two of those (310 ms of bandwidth at
 * seed 43 met nothing).
 */
function longEnough(x: Step, serverPingMs: number): Step {
  if (x.layer !== 'latency' && x.layer !== 'slicer' && x.layer !== 'bandwidth' && x.layer !== 'byte-limit' && x.layer !== 'reset') return x;
  const up = x.layer !== 'bandwidth' && x.up;
  return { ...x, ms: Math.max(x.ms, 2 * (up ? CONSUMER_PING_MS : serverPingMs)) };
}

/**
 * Mined blocks packet loss gets after a schedule's reorganisations (5 s of real time): loss that
 * closed a connection before the consumer was sent a reorganisation's abandoned events, and kept
 * it away until after the reorganisation, would leave it nothing to revoke (the proof's misses).
 */
const LOSS_BLOCKS = 20;

/** The consumer's longest CHAOSLAB_IDLE_MS in a link setting (linkOf: beside an unknown op, or for a slow reader). */
const LONGEST_IDLE_MS = 4000;

/** The consumer's CHAOSLAB_PING_MS (real ms) in every link setting (linkOf), and the server's beside a half-open link. */
const CONSUMER_PING_MS = 1000;
const HALF_OPEN_SERVER_PING_MS = 500;

/**
 * The steps that take effect on mined blocks (misbehaviour and hooks come once the chain is
 * known): first the windows that are a fault's own (the stale cursor's cut, a reorganisation's
 * while away), then cuts and kills where the consumer is connected (./aim.ts), then the rest.
 * A stale cut, kill or pause left inside a reorganisation's guard (no other place) leaves that
 * reorganisation connected. Kept in the schedule's order.
 */
function placeOnBlocks(
  s: StreamSchedule,
  steps: readonly Step[],
  reorgs: readonly AimedReorg[],
  mined: readonly number[],
  { minStart, staleBlocks, slowBlocks, period }: { minStart: number; staleBlocks: number; slowBlocks: number; period: number },
  halfOpen: HalfOpenStep | undefined,
): { placed: Placed[]; staleWindow: Window | undefined } {
  const len = mined.length;
  const room = len - 1 - minStart;
  const point = (at: number) => mined[minStart + (at % Math.max(1, len - minStart))] ?? mined[len - 1]!;
  /** A window [from, to) of `k` mined blocks starting at a mined block. */
  const windowAt = (at: number, k: number): Window => {
    const i = minStart + (at % room);
    return { from: mined[i]!, to: mined[Math.min(i + k, len - 1)]! };
  };
  const out = new Map<Step, Placed>();
  // A slow reader's stretch: its server's queue fills only while the link stays up.
  const slowFrom = mined[minStart] ?? mined[len - 1]!;
  const absent: Window[] = s.slow ? [{ from: slowFrom, to: slowFrom + slowBlocks }] : [];
  const outsideSlow = (w: Window) => !s.slow || !overlaps(absent[0]!, w);
  const { connected, guards } = placeReorgWindows(steps, reorgs, mined, minStart, !halfOpen, absent, out);
  const outsideGuards = (w: Window) => outsideSlow(w) && !guards.some((g) => overlaps(g.guard, w));
  /** The absences placed where no better place was left: a reorganisation while away that one touches is left connected. */
  const fallbacks: Window[] = [];
  /** Whether the consumer is connected over `w`, and no connected reorganisation's events are hidden by it. */
  const connectedOver = (w: Window) => !absent.some((a) => overlaps(a, w)) && !connected.some((r) => hides(w, r));
  // The stale cursor's cut: hiding no connected reorganisation's events, with two blocks more of way back than a cut (a reset, a reconnect, a snapshot: seed 20261204 run 2); else outside a slow reader's stretch.
  const stale = steps.find((x) => x.layer === 'stale-cursor');
  const back = (w: Window) => connectedOver({ from: w.from, to: w.to + 2 });
  const staleWindow = stale && room >= 1 ? staleCut(stale.at, mined, minStart, staleBlocks, [back, outsideGuards, outsideSlow]) : undefined;
  if (stale && staleWindow) {
    absent.push(staleWindow);
    fallbacks.push(staleWindow);
    out.set(stale, { layer: 'stale-cursor', retentionBlocks: stale.retention, ...staleWindow });
  }
  // A cut or a kill finds the consumer connected, and keeps no connected reorganisation's events
  // from it; a cut with no such place is left out (it would find the consumer away), a kill stays.
  for (const x of steps) {
    if (x.layer === 'cut' || x.layer === 'kill') {
      const candidate = (d: number) => windowAt(x.at + d, x.layer === 'cut' ? x.blocks : 2);
      const w = room < 1 ? undefined : firstFit(room, candidate, connectedOver);
      if (!w) {
        const kill =
          x.layer === 'kill' && (room < 1 ? point(x.at) : (firstFit(room, candidate, outsideGuards) ?? firstFit(room, candidate, outsideSlow))?.from);
        if (kill) {
          out.set(x, { layer: 'kill', at: kill });
          fallbacks.push({ from: kill, to: kill + 2 });
        }
        continue;
      }
      absent.push(w);
      out.set(x, x.layer === 'cut' ? { layer: 'cut', ...w } : { layer: 'kill', at: w.from });
    } else if (x.layer === 'half-open' || x.layer === 'byte-limit' || x.layer === 'reset') {
      // A link that lets nothing through for a while: not hiding a connected reorganisation's events,
      // and outside the guard of one while away, else that one is left connected (seed 20261201 run 7).
      const { at, ...rest } = x;
      const over = (b: number): Window => ({ from: b, to: b + Math.ceil(x.ms / period) + 2 });
      const clearOf = (b: number) => !connected.some((r) => hides(over(b), r));
      const candidate = (d: number) => point(at + d);
      const from =
        firstFit(len - minStart, candidate, (b) => clearOf(b) && outsideGuards(over(b))) ?? firstFit(len - minStart, candidate, clearOf) ?? point(at);
      fallbacks.push(over(from));
      out.set(x, { ...rest, from } as Placed);
    } else if (x.layer === 'pause') {
      // A pause keeps the consumer from reading: not where a reorganisation while away needs it to hold an abandoned event.
      const stopped = (b: number) => ({ from: b, to: b + Math.ceil(x.ms / period) + 1 });
      const from =
        firstFit(
          len - minStart,
          (d) => point(x.at + d),
          (b) => outsideGuards(stopped(b)),
        ) ?? point(x.at);
      fallbacks.push(stopped(from));
      out.set(x, { layer: 'pause', from, ms: x.ms });
    } else if (x.layer === 'latency' || x.layer === 'slicer' || x.layer === 'bandwidth') {
      const { at, ...rest } = x;
      out.set(x, { ...rest, from: point(at) } as Placed);
    } else if (x.layer === 'loss') out.set(x, lossAfter(x, reorgs, guards, mined));
    // misbehaviour and hooks: below, once the chain is known
  }
  for (const g of guards) if (fallbacks.some((w) => overlaps(w, g.guard))) out.set(g.step, g.reorg);
  return {
    placed: [...(s.slow ? [{ layer: 'slow-reader' as const, from: slowFrom, ms: SLOW.stopMs }] : []), ...steps.flatMap((x) => out.get(x) ?? [])],
    staleWindow,
  };
}

/**
 * Packet loss from the first mined block past every reorganisation's stretch (from before its
 * first abandoned event until two blocks after it, or after its cut while away), until the run
 * ends; from the consumer's start where there is none.
 */
function lossAfter(x: LossStep, reorgs: readonly AimedReorg[], guards: readonly Guard[], mined: readonly number[]): Placed {
  if (reorgs.length === 0) return x;
  const past = Math.max(...reorgs.map((r) => r.after + 3), ...guards.map((g) => g.guard.to + 1));
  return { ...x, from: mined.find((b) => b >= past) ?? mined.at(-1)! };
}

/** Blocks for a stall's silence (up to the longest idle timeout) and the longest toxic downstream beside it, where a schedule has both. */
function stallRoom(steps: readonly Step[], period: number): number {
  const down = steps.flatMap((x) => (((x.layer === 'latency' || x.layer === 'slicer') && !x.up) || x.layer === 'bandwidth' ? [x.ms] : []));
  if (!steps.some((x) => x.layer === 'stall') || down.length === 0) return 0;
  const silence = stallSilence(0, undefined, LONGEST_IDLE_MS, period);
  return silence.to - silence.from + Math.ceil(Math.max(...down) / period) + 2;
}

/**
 * The account a quiet stale-cursor schedule follows (./events.ts quietAccount), and the
 * reorganisations kept (also taken out of `placed`): they are not aimed (the account is chosen once
 * the chain is known), and one that abandons none of its events would reach no consumer, so it
 * goes, and the account is chosen again on the chain without it (seed 20261203 run 10).
 */
function followQuiet(
  stale: StaleStep,
  staleWindow: Window,
  placed: Placed[],
  reorgs: AimedReorg[],
  chainWith: (kept: readonly AimedReorg[]) => ChainPlan,
): { topic: number; reorgs: AimedReorg[] } {
  let kept = reorgs;
  for (;;) {
    const shallow = placed.flatMap((p) => (p.layer === 'reorg' ? [p] : []));
    // Each one's abandoned blocks, below its cut while away: where the account should hold an event.
    const needs = shallow.map((p) => ({ from: p.after - p.depth + 1, to: p.away ? p.away.from - 1 : p.after }));
    const followed = quietAccount(chainWith(kept), staleWindow, stale.at, needs);
    if (followed.unmet.length === 0) {
      const p = placed.find((x) => x.layer === 'stale-cursor');
      if (p?.layer === 'stale-cursor' && followed.quiet) p.quiet = followed.topic;
      return { topic: followed.topic, reorgs: kept };
    }
    const gone = new Set(followed.unmet.map((i) => shallow[i]!));
    kept = kept.filter((r) => !shallow.some((p) => gone.has(p) && p.after === r.after && r.layer === 'reorg'));
    for (let i = placed.length - 1; i >= 0; i--) if (gone.has(placed[i] as (typeof shallow)[number])) placed.splice(i, 1);
  }
}

/** A quiet account's stale cursor: never for a slow reader, which follows every account so that its queue fills. */
const quietStale = (s: StreamSchedule, stale: StaleStep | undefined): boolean => stale?.quiet === true && !s.slow;

function chainOf(s: StreamSchedule, stale: StaleStep | undefined, lastBlock: number, reorgs: readonly PlacedReorg[]): ChainPlan {
  const quiet = quietStale(s, stale);
  return {
    seed: s.seed,
    chainId: 1,
    accounts: quiet ? 12 : 6,
    confirmations: CHAIN.confirmations,
    blockIntervalMs: CHAIN.blockIntervalMs,
    logsPerBlock: s.slow ? { ...SLOW.logs } : quiet ? { min: 0, max: 2 } : { min: 0, max: 3 },
    approvalShare: 0.1,
    ...(s.bigAmounts ? {} : { amountBits: 48 }),
    initialBlocks: CHAIN.initialBlocks,
    lastBlock,
    ...(stale ? { retentionMs: stale.retention * CHAIN.blockIntervalMs } : {}),
    reorgs: reorgs.map(({ after, depth, length, layer }) => ({ afterBlock: after, depth, length, deep: layer === 'deep-reorg' })),
  };
}

/** Heartbeats and idle timeouts that the schedule's latency cannot trip for a correct consumer. */
function linkOf(s: StreamSchedule, halfOpen: HalfOpenStep | undefined, kept: readonly Placed[]): Link {
  const worst = (up: boolean) => Math.max(0, ...kept.map((p) => (p.layer === 'latency' && p.up === up ? p.latency + p.jitter : 0)));
  return halfOpen
    ? {
        serverPingMs: HALF_OPEN_SERVER_PING_MS,
        serverIdleMs: 20_000,
        consumerPingMs: CONSUMER_PING_MS,
        consumerIdleMs: Math.max(2000, 1000 + worst(false) + 300),
      }
    : s.slow
      ? { serverPingMs: 1000, serverIdleMs: 5000 + worst(true), consumerPingMs: 2000, consumerIdleMs: Math.max(LONGEST_IDLE_MS, 2000 + worst(false) + 300) }
      : {
          serverPingMs: s.serverPing,
          serverIdleMs: 5000 + worst(true),
          consumerPingMs: CONSUMER_PING_MS,
          consumerIdleMs: Math.max(kept.some((p) => p.layer === 'unknown-op') ? LONGEST_IDLE_MS : 2000, 2 * s.serverPing + worst(false) + 300),
        };
}
