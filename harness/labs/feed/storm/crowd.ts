// The picture's numbers: the attempts the storm saw, per 100 ms, and the same restart played by
// a crowd (50 000 clients) whose delays follow the measured distribution, against a twin crowd
// without jitter. Seeded, so a run's report always shows the same crowd.

import { Prng } from '../../../../publisher/feed/chain/prng.js';

export const BIN_MS = 100;
export const CROWD = 50_000;
const CROWD_SEED = 12;
const MAX_ATTEMPTS = 200;

/** Attempts per BIN_MS from 0 to `spanMs`, counted per lane (lane = a process), for a stacked histogram. */
export function histogram(attempts: readonly { t: number; lane: number }[], lanes: number, spanMs: number): number[][] {
  const bins = Math.max(1, Math.ceil(spanMs / BIN_MS));
  const counts = Array.from({ length: bins }, () => new Array<number>(lanes).fill(0));
  for (const a of attempts) {
    const bin = Math.floor(a.t / BIN_MS);
    if (bin < 0 || bin >= bins || a.lane < 0 || a.lane >= lanes) continue;
    counts[bin]![a.lane]!++;
  }
  return counts;
}

export interface CrowdSpec {
  baseMs: number;
  capMs: number;
  /** How long the restart lasts: attempts after it are not counted. */
  spanMs: number;
  /** Measured normalised delays (delay / nominal step) before the cap and at the cap; the crowd draws from them. */
  preCap: readonly number[];
  atCap: readonly number[];
}

export interface CrowdResult {
  /** Attempts per BIN_MS of the crowd, and of its twin without jitter. */
  jittered: number[];
  unjittered: number[];
  /** Peak accepts per second (the busiest 100 ms bin, times 10). */
  peakJittered: number;
  peakUnjittered: number;
}

/**
 * Every client sees the server go away at 0 and retries with the nominal steps
 * min(BASE × 2^n, CAP) times a factor drawn from the measured factors of its region (an
 * empirical bootstrap); the twin uses the factor 1 for all. Neither ever gets through: the
 * server is down for the whole span.
 */
export function simulateCrowd(spec: CrowdSpec, clients = CROWD): CrowdResult {
  const bins = Math.max(1, Math.ceil(spec.spanMs / BIN_MS));
  const jittered = new Array<number>(bins).fill(0);
  const unjittered = new Array<number>(bins).fill(0);
  const prng = new Prng(CROWD_SEED);
  const draw = (pool: readonly number[]): number => (pool.length === 0 ? 1 : pool[prng.int(0, pool.length - 1)]!);
  const step = (n: number): number => Math.min(spec.baseMs * 2 ** Math.min(n, 40), spec.capMs);
  const capped = (n: number): boolean => spec.baseMs * 2 ** Math.min(n, 40) >= spec.capMs;
  // The twin: every client at the same instants.
  for (let n = 0, t = 0; ; n++) {
    t += step(n);
    if (t >= spec.spanMs) break;
    unjittered[Math.floor(t / BIN_MS)]! += clients;
  }
  // Each attempt's step and pool, once: the loop below runs up to CROWD × MAX_ATTEMPTS times.
  const steps = Array.from({ length: MAX_ATTEMPTS }, (_, n) => step(n));
  const pools = Array.from({ length: MAX_ATTEMPTS }, (_, n) => (capped(n) ? spec.atCap : spec.preCap));
  for (let c = 0; c < clients; c++) {
    // Bounded: a crowd that retries at once would never leave the span.
    for (let n = 0, t = 0; n < MAX_ATTEMPTS; n++) {
      t += steps[n]! * Math.max(0, draw(pools[n]!));
      if (t >= spec.spanMs) break;
      jittered[Math.floor(t / BIN_MS)]!++;
    }
  }
  const peak = (xs: number[]) => Math.max(0, ...xs) * (1000 / BIN_MS);
  return { jittered, unjittered, peakJittered: peak(jittered), peakUnjittered: peak(unjittered) };
}
