// Where a feed chaos schedule's reorganisations go (./place.ts places the rest): on blocks the
// script mines one by one, each past the stretch of the one before, aimed (./aim.ts) at blocks
// holding the followed accounts' events; and, for one drawn "while away", its cut and the guard
// around it that no other absence may touch.

import { aimReorg, awayGuard, awayWindow, heldBlocks, heldIn, overlaps, type Window } from './aim.js';
import { CHAIN, type Placed, type Step } from './steps.js';
import type { ChainPlan } from '../scenario/plan.js';

export type PlacedReorg = Extract<Placed, { layer: 'reorg' | 'deep-reorg' }>;

/** The safe height when the script starts: where both consumers' first snapshots are taken. */
const FIRST_SNAPSHOT = CHAIN.initialBlocks - CHAIN.confirmations;

/** A placed reorganisation, and the first block it abandons that holds a followed account's event (a shallow one, where known). */
export type AimedReorg = PlacedReorg & { firstHeld?: number };

/**
 * Reorganisations, in block order, each after the head the previous one left; a shallow one
 * abandons only blocks past the previous one's stretch (its new branch, and the way back from a
 * cut while away). A shallow one is aimed (./aim.ts) at blocks holding events of `topics`
 * (unknown for a quiet account: not aimed here, the account is chosen to hold some, ./events.ts);
 * one while away abandons two blocks at least, so that the consumer can hold one before its cut.
 * The first may follow block `firstFree` + 1.
 */
export function placeReorgs(
  steps: readonly Step[],
  firstFree: number,
  lastBlock: number,
  planOf: (reorgs: readonly PlacedReorg[]) => ChainPlan,
  topics: readonly number[] | undefined,
  awayAllowed: boolean,
): AimedReorg[] {
  const reorgs: AimedReorg[] = [];
  // A link closed for a while starts after a reorganisation's held events: leave it a mined block for that.
  const closesLink = steps.some((x) => x.layer === 'half-open' || x.layer === 'byte-limit' || x.layer === 'reset');
  let free = firstFree;
  for (const r of steps.filter((x): x is Extract<Step, { layer: 'reorg' | 'deep-reorg' }> => x.layer === 'reorg' || x.layer === 'deep-reorg')) {
    if (r.layer === 'reorg') {
      const away = r.away && awayAllowed;
      const depth = Math.max(away ? 2 : 1, 1 + ((r.depth - 1) % CHAIN.confirmations));
      // Its abandoned blocks all past the previous one's stretch: blocks the consumer was sent live,
      // not a new branch it may be sent only on resuming (seed 20261202 run 4: it was not back yet).
      const lowest = free + depth - 1;
      if (lowest >= lastBlock) break;
      let after = lowest + 1 + (r.at % (lastBlock - lowest));
      let firstHeld: number | undefined;
      if (topics) {
        const held = heldBlocks(planOf(reorgs), topics);
        after = aimReorg(held, lowest, Math.max(lowest + 1, lastBlock - (closesLink ? 1 + r.extra : 0)), r.at, depth, away);
        firstHeld = heldIn(held, after - depth + 1, after);
      }
      reorgs.push({ layer: 'reorg', after, depth, length: depth + r.extra, ...(firstHeld === undefined ? {} : { firstHeld }) });
      // Back from a cut while away: it ends up to 1 + awayFor mined blocks after the new head (./aim.ts awayWindow), and a reconnect takes up to two more.
      free = after + r.extra + (away ? 3 + r.awayFor : 0);
    } else {
      if (free >= lastBlock) break;
      const after = free + 1 + (r.at % (lastBlock - free));
      // A deep one forks at or below the first snapshots (the safe height when the script starts).
      const depth = after - (2 + (r.depth % (FIRST_SNAPSHOT - 1))) + 1;
      reorgs.push({ layer: 'deep-reorg', after, depth, length: depth + r.extra });
      free = after + r.extra;
    }
  }
  return reorgs;
}

/** The blocks the script mines one by one (a reorganisation's new branch is not among them). */
export function minedBlocks(reorgs: readonly PlacedReorg[], lastBlock: number): number[] {
  const mined: number[] = [];
  for (let head = CHAIN.initialBlocks; head < lastBlock; ) {
    mined.push(++head);
    const r = reorgs.find((x) => x.after === head);
    if (r) head = r.after - r.depth + r.length;
  }
  return mined;
}

/** A reorganisation while away, with the stretch no other absence may touch (./aim.ts awayGuard). */
export type Guard = { step: Step; reorg: Placed; guard: Window };

/**
 * The reorganisations into `out`, each with its cut while away where drawn and allowed: its guard
 * outside every absence so far (a slow reader's stretch, another one's guard), then added to them.
 * The rest are connected: what other absences must not hide.
 */
export function placeReorgWindows(
  steps: readonly Step[],
  reorgs: readonly AimedReorg[],
  mined: readonly number[],
  minStart: number,
  awayAllowed: boolean,
  absent: Window[],
  out: Map<Step, Placed>,
): { connected: AimedReorg[]; guards: Guard[] } {
  const reorgOf = new Map(steps.filter((x) => x.layer === 'reorg' || x.layer === 'deep-reorg').map((x, i) => [x, reorgs[i]]));
  const connected: AimedReorg[] = [];
  const guards: Guard[] = [];
  for (const x of steps) {
    if (x.layer !== 'reorg' && x.layer !== 'deep-reorg') continue;
    const r = reorgOf.get(x);
    if (!r) continue;
    const { firstHeld, ...reorg } = r;
    const drawnAway = x.layer === 'reorg' && x.away && awayAllowed ? awayWindow(r, x, mined, minStart) : undefined;
    const guard = drawnAway && awayGuard(r, drawnAway);
    const away = guard && !absent.some((a) => overlaps(a, guard)) ? drawnAway : undefined;
    if (away && guard) {
      absent.push(guard);
      guards.push({ step: x, reorg, guard });
    } else if (r.layer === 'reorg') connected.push(r);
    out.set(x, { ...reorg, ...(away ? { away } : {}) });
  }
  return { connected, guards };
}
