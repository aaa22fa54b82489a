// Where the feed chaos placement (./place.ts) aims a fault so that it meets the consumer: a
// reorganisation on blocks that hold events of the followed accounts, which the subscribed
// consumer has been sent (the script starts once it has subscribed, and the first snapshot is
// below every block the script mines); a reorganisation "while away" with a cut that starts after
// such an event, so that the consumer resumes from a cursor inside the abandoned blocks; a cut
// where the consumer is connected (not inside another cut, nor hiding a reorganisation's
// abandoned events from it). Each search starts at the drawn position and takes the first that
// fits, else keeps the drawn one: a schedule stays data, and any shrink of it is placed the same way.

import { CHAIN, type Placed } from './steps.js';
import { sim } from './events.js';
import type { ChainPlan } from '../scenario/plan.js';

export type Window = { from: number; to: number };

const blockOf = (cursor: string): number => Number(cursor.split(':')[1]);

/**
 * The blocks that hold an event of the followed accounts on the chain as it stands before the
 * next reorganisation (the plan holds the ones placed so far: the blocks up to the next one's
 * fork are the same whatever comes after it, as the chain's PRNG sees the same calls).
 */
export function heldBlocks(plan: ChainPlan, topics: readonly number[]): Set<number> {
  const { events } = sim({ ...plan, retentionMs: undefined } as ChainPlan, topics);
  return new Set(events.map((e) => blockOf(e.cursor)).filter((b) => b > CHAIN.initialBlocks - CHAIN.confirmations));
}

/** The first held block in [from, to], if any. */
export const heldIn = (held: ReadonlySet<number>, from: number, to: number): number | undefined => {
  for (let b = from; b <= to; b++) if (held.has(b)) return b;
  return undefined;
};

/**
 * The block a shallow reorganisation follows: the first position from the drawn one (cyclic over
 * `free + 1 .. lastBlock`) whose abandoned blocks hold a held event — for one while away, below
 * its top block, so that a cut can start after it; else the drawn position.
 */
export function aimReorg(held: ReadonlySet<number>, free: number, lastBlock: number, at: number, depth: number, away: boolean): number {
  const span = lastBlock - free;
  for (let k = 0; k < span; k++) {
    const after = free + 1 + ((at + k) % span);
    if (heldIn(held, after - depth + 1, away ? after - 1 : after) !== undefined) return after;
  }
  return free + 1 + (at % span);
}

/**
 * Whether a cut over `w` keeps the consumer from a connected reorganisation's abandoned events:
 * away from before the first of them until the reorganisation, or back less than two blocks
 * before it (a reconnect waits out its backoff, up to two blocks).
 */
export const hides = (w: Window, r: { after: number; firstHeld?: number }): boolean => r.firstHeld !== undefined && w.from <= r.firstHeld && w.to + 2 > r.after;

/** The first of `count` candidates, from the drawn one on (`d` = 0), that fits. */
export function firstFit<T>(count: number, candidate: (d: number) => T, fits: (c: T) => boolean): T | undefined {
  for (let d = 0; d < count; d++) {
    const c = candidate(d);
    if (fits(c)) return c;
  }
  return undefined;
}

/** Whether two windows of absence overlap (a cut inside another finds the consumer already away). */
export const overlaps = (a: Window, b: Window): boolean => a.from < b.to && b.from < a.to;

/**
 * The cut of a reorganisation "while away": from inside the abandoned blocks until after the
 * reorganisation, starting after the first of them that holds a followed account's event, so that
 * the consumer resumes from a cursor the reorganisation abandoned.
 */
export function awayWindow(
  r: { after: number; depth: number; firstHeld?: number },
  x: { awayAt: number; awayFor: number },
  mined: readonly number[],
  minStart: number,
): Window | undefined {
  const fork = r.after - r.depth + 1;
  let inside = r.after - (x.awayAt % Math.max(1, r.after - fork));
  if (r.firstHeld !== undefined && r.firstHeld < r.after && inside <= r.firstHeld) inside = r.firstHeld + 1;
  // A block an earlier reorganisation's new branch produced is never mined one by one: no fault point.
  const from = mined.includes(inside) ? inside : r.after;
  const i = mined.indexOf(r.after);
  if (from < (mined[minStart] ?? Number.POSITIVE_INFINITY) || i < 0 || i + 1 >= mined.length) return undefined;
  return { from, to: mined[Math.min(i + 1 + x.awayFor, mined.length - 1)]! };
}

/**
 * The stretch a reorganisation while away needs for itself: from its first abandoned event (two
 * blocks before its cut at the latest: a reconnect waits out its backoff) until two blocks after
 * its cut, so that the consumer holds an abandoned event when the cut comes and subscribes with it
 * after. Another absence there (a stale cut, a cut, a kill, a pause) would have it resume from
 * below the fork, or not at all (seed 42: a stale cut over it, and it resumed from 29:12).
 */
export const awayGuard = (r: { firstHeld?: number }, away: Window): Window => ({
  from: Math.min(r.firstHeld ?? away.from, away.from - 2),
  to: away.to + 2,
});

/** The stale cursor's cut of `staleBlocks` mined blocks: the first that passes the first test, else the second, else the drawn one. */
export function staleCut(at: number, mined: readonly number[], minStart: number, staleBlocks: number, tests: ((w: Window) => boolean)[]): Window {
  const room = mined.length - 1 - minStart;
  const count = Math.max(0, room - staleBlocks) + 1;
  const windowOf = (d: number): Window => {
    const i = minStart + (room - staleBlocks > 0 ? (at + d) % count : 0);
    return { from: mined[i]!, to: mined[Math.min(i + staleBlocks, mined.length - 1)]! };
  };
  for (const test of tests) {
    const w = firstFit(count, windowOf, test);
    if (w) return w;
  }
  return windowOf(0);
}

/**
 * The stretches in which lines do not flow to the consumer (`up`: from it): away (a cut, a stale
 * cut, a cut while away, a half-open link, a kill's restart) and, downstream only, a server
 * stalled until its time is up or the consumer's idle timeout ends the connection. Each with two
 * blocks more for the reconnect. A stall for good lasts until the consumer's idle timeout (`idleMs`).
 */
export function silences(placed: readonly Placed[], period: number, up: boolean, idleMs: number): Window[] {
  const blocks = (ms: number) => Math.ceil(ms / period);
  return placed.flatMap((p): Window[] => {
    if (p.layer === 'cut' || p.layer === 'stale-cursor') return [{ from: p.from, to: p.to + 2 }];
    if (p.layer === 'reorg') return p.away ? [{ from: p.away.from, to: p.away.to + 2 }] : [];
    if (p.layer === 'half-open') return [{ from: p.from, to: p.from + blocks(p.ms) + 2 }];
    if (p.layer === 'kill') return [{ from: p.at, to: p.at + 2 }];
    if (p.layer === 'stall' && !up) return [stallSilence(blockOf(p.cursor), p.ms, idleMs, period)];
    return [];
  });
}

/** A stall's silence from its event's block: its time, or for good until the consumer's idle timeout (`idleMs`), and two blocks for the reconnect. */
export const stallSilence = (block: number, ms: number | undefined, idleMs: number, period: number): Window => ({
  from: block,
  to: block + Math.ceil((ms ?? idleMs) / period) + 2,
});

/**
 * A toxic meets only the lines that cross it while it lasts: latency, slicing and a starved link
 * move, from the drawn block on, to the first mined block where they overlap no silence, else to
 * the one that leaves them the most blocks clear, if that is long enough for two pings of the
 * sender, else stay (seed 20261203 run 5: 604 ms of latency inside a stall for good met nothing).
 */
export function toxicsWhereLinesFlow(
  placed: Placed[],
  mined: readonly number[],
  minStart: number,
  period: number,
  link: { serverPingMs: number; consumerPingMs: number; consumerIdleMs: number },
): void {
  const count = mined.length - minStart;
  if (count < 1) return;
  for (const [i, p] of placed.entries()) {
    if (p.layer !== 'latency' && p.layer !== 'slicer' && p.layer !== 'bandwidth') continue;
    const up = p.layer !== 'bandwidth' && p.up;
    const quiet = silences(placed, period, up, link.consumerIdleMs);
    const blocks = Math.ceil(p.ms / period) + 1;
    const clear = (b: number) => {
      let n = 0;
      for (let k = b; k < b + blocks; k++) if (!quiet.some((s) => k >= s.from && k < s.to)) n++;
      return n;
    };
    const start = Math.max(0, mined.indexOf(p.from) - minStart);
    let best = { from: p.from, clear: -1 };
    for (let d = 0; d < count && best.clear < blocks; d++) {
      const b = mined[minStart + ((start + d) % count)]!;
      const c = clear(b);
      if (c > best.clear) best = { from: b, clear: c };
    }
    if (best.clear >= Math.ceil((2 * (up ? link.consumerPingMs : link.serverPingMs)) / period)) placed[i] = { ...p, from: best.from };
  }
}
