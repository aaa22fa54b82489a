// The feed lab's seeded randomness: mulberry32 (the same algorithm the scenario generator
// uses, written again here so the publisher stays free of harness imports). Only 32-bit
// integer operations, so one seed gives the same chain on every machine and engine.

const TWO_POW_32 = 0x1_0000_0000;

export class Prng {
  private state: number;

  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) throw new RangeError(`seed must be an unsigned 32-bit integer (got ${seed})`);
    this.state = seed >>> 0;
  }

  /** The next unsigned 32-bit output of mulberry32. */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), this.state | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** An unbiased integer in [min, max] (rejection sampling, no modulo bias). */
  int(min: number, max: number): number {
    const n = max - min + 1;
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || n < 1 || n > TWO_POW_32) throw new RangeError(`bad range ${min}..${max}`);
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    for (;;) {
      const x = this.next();
      if (x < limit) return min + (x % n);
    }
  }

  /** True with probability `p` (in steps of 2^-32). */
  chance(p: number): boolean {
    return this.next() < p * TWO_POW_32;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('cannot pick from an empty list');
    return items[this.int(0, items.length - 1)]!;
  }

  /** A uniform BigInt in [0, bound) (rejection over the bound's bit length). */
  bigintBelow(bound: bigint): bigint {
    if (bound <= 0n) throw new RangeError(`bound must be positive (got ${bound})`);
    const bits = bound.toString(2).length;
    const words = Math.ceil(bits / 32);
    const mask = (1n << BigInt(bits)) - 1n;
    for (;;) {
      let x = 0n;
      for (let i = 0; i < words; i++) x = (x << 32n) | BigInt(this.next());
      x &= mask;
      if (x < bound) return x;
    }
  }

  /** `bytes` random bytes as lowercase hex (no prefix). */
  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i += 4) out += this.next().toString(16).padStart(8, '0');
    return out.slice(0, bytes * 2);
  }
}
