// Deterministic seeded delta generator for `events.generate` in scenario files.
//
// Algorithm (fixed; changing it changes every generated scenario, and test/harness/catalogue/load.test.ts
// pins the first outputs so such a change cannot go unnoticed):
//
// 1. PRNG: mulberry32 (Tommy Ettinger's 32-bit generator, widely used in JavaScript), exactly:
//      state = (state + 0x6D2B79F5) mod 2^32
//      t = imul(state ^ (state >>> 15), state | 1)
//      t = (t + imul(t ^ (t >>> 7), t | 61)) ^ t
//      output = (t ^ (t >>> 14)) as an unsigned 32-bit integer
//    where imul is 32-bit wrapping multiplication (Math.imul). The initial state is the seed
//    (an unsigned 32-bit integer). Only 32-bit integer operations are used, so the sequence is
//    the same on every machine and JavaScript engine.
// 2. Uniform integer in [min, max] without modulo bias: n = max - min + 1; draw outputs x,
//    rejecting x >= 2^32 - (2^32 mod n); delta = min + (x mod n). (For n <= 2001 a rejection
//    happens with probability < 5e-7, so almost every delta costs one draw.)
// 3. The script is `count` such deltas, in draw order; event i has seq i.

/** A mulberry32 generator; each call returns the next unsigned 32-bit output. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const TWO_POW_32 = 0x1_0000_0000;

/** An unbiased integer in [min, max] from a uint32 source (rejection sampling). */
export function uniformInt(next: () => number, min: number, max: number): number {
  const n = max - min + 1;
  const limit = TWO_POW_32 - (TWO_POW_32 % n);
  for (;;) {
    const x = next();
    if (x < limit) return min + (x % n);
  }
}

export interface GenerateOptions {
  count: number;
  seed: number;
  min: number;
  max: number;
}

/** `count` deltas, each uniform in [min, max], fully determined by `seed`. */
export function generateDeltas({ count, seed, min, max }: GenerateOptions): number[] {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer (got ${count})`);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) throw new RangeError(`seed must be an unsigned 32-bit integer (got ${seed})`);
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min > max || max - min + 1 > TWO_POW_32) {
    throw new RangeError(`need integers min <= max spanning at most 2^32 values (got ${min}..${max})`);
  }
  const next = mulberry32(seed);
  const deltas = new Array<number>(count);
  for (let i = 0; i < count; i++) deltas[i] = uniformInt(next, min, max);
  return deltas;
}
