// The jitter test of the restart storm (issue 12): a one-sample Kolmogorov–Smirnov test of the
// normalised delays (delay / min(BASE × 2^n, CAP)) against U(0.5, 1.5), the contract's factor.
//
// It must not false-fail on a correct consumer under load. Scheduling noise only ever adds delay
// (a late timer, a late accept): it moves the sample's CDF right, which can only lower
// D⁺ = max(F_sample − F_U), the side that measures delays shorter or more regular than
// U(0.5, 1.5) allows, and can raise D⁻ = max(F_U − F_sample) as much as it likes (on this
// 2-core machine at a load of 20, the 250 ms step came back up to 250 ms late). The verdict
// therefore rests on D⁺, with the bound
//
//   fail when D⁺ > sqrt(ln(2/α) / (2N)) + TOLERANCE,  α = 1e-5, TOLERANCE = 0.05
//
// (the two-sided DKW bound, conservative for one side); D⁻ and the two-sided D are reported.
// No jitter (everything at 1), a factor clamped at 1 (half the sample at 1), too little growth
// (delays below their step) all raise D⁺ to about 0.5. The attempts before the cap and at the
// cap are tested separately, never pooled: pooled, the many correct pre-cap steps would hide
// a factor clamped at the cap.

export const KS_ALPHA = 1e-5;
export const KS_TOLERANCE = 0.05;

/** The contract's jitter factor: U(0.5, 1.5). */
export const U_LOW = 0.5;
export const U_HIGH = 1.5;

/** CDF of U(0.5, 1.5). */
export const uniformCdf = (x: number): number => Math.min(1, Math.max(0, x - U_LOW));

/**
 * The distances between the sample's empirical CDF and U(0.5, 1.5)'s: `plus` where the sample
 * lies above (delays too short or piled up), `minus` where below (too long), `d` the larger,
 * and `at` the normalised delay where `plus` is largest.
 */
export function ksDistance(sample: readonly number[]): { d: number; plus: number; minus: number; at: number } {
  const xs = [...sample].sort((a, b) => a - b);
  const n = xs.length;
  let plus = 0;
  let minus = 0;
  let at = Number.NaN;
  for (let i = 0; i < n; i++) {
    const f = uniformCdf(xs[i]!);
    if ((i + 1) / n - f > plus) {
      plus = (i + 1) / n - f;
      at = xs[i]!;
    }
    minus = Math.max(minus, f - i / n);
  }
  return { d: Math.max(plus, minus), plus, minus, at };
}

/** The largest D a sample of `n` may show and still pass. */
export const ksThreshold = (n: number, alpha = KS_ALPHA, tolerance = KS_TOLERANCE): number => Math.sqrt(Math.log(2 / alpha) / (2 * n)) + tolerance;

export interface KsResult {
  n: number;
  /** D⁺, what is judged; D⁻ and the two-sided D, reported. */
  plus: number;
  minus: number;
  d: number;
  /** The normalised delay where the distance is largest. */
  at: number;
  threshold: number;
  pass: boolean;
}

/** The test on one sample; an empty sample passes (there is nothing to judge). */
export function ksTest(sample: readonly number[]): KsResult {
  if (sample.length === 0) return { n: 0, plus: 0, minus: 0, d: 0, at: Number.NaN, threshold: Number.POSITIVE_INFINITY, pass: true };
  const { d, plus, minus, at } = ksDistance(sample);
  const threshold = ksThreshold(sample.length);
  return { n: sample.length, plus, minus, d, at, threshold, pass: plus <= threshold };
}

/** The q-quantile (0..1) of a sample, by linear interpolation; NaN for an empty one. */
export function quantile(sample: readonly number[], q: number): number {
  if (sample.length === 0) return Number.NaN;
  const xs = [...sample].sort((a, b) => a - b);
  const pos = (xs.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return xs[lo]! + (xs[hi]! - xs[lo]!) * (pos - lo);
}

/**
 * What a failed sample looks like, in words a reader can act on (only asked once the test has
 * failed, so it can never fail a run by itself): no spread at all (no jitter), or a spread with
 * nothing above 1 (the jittered delay clamped to the nominal step), or just another shape.
 * U(0.5, 1.5)'s middle half spans half its median; "no jitter" is under a tenth.
 */
/**
 * Whether normalised delays show jitter that scheduling cannot fake: a loaded machine only ever
 * lengthens a wait, so it can spread a jitterless sample above 1 but never below it, where
 * U(0.5, 1.5) puts 40 % of them under 0.9. (A spread alone, shapeOf's test, is faked by load.)
 */
export const jitteredBelowStep = (sample: readonly number[]): boolean => sample.length > 0 && sample.filter((x) => x < 0.9).length >= 0.2 * sample.length;

export function shapeOf(sample: readonly number[]): 'no-jitter' | 'clamped' | 'other' {
  // Relative to the median, so that a factor that is jittered but wrongly scaled is not "no jitter".
  const spread = (quantile(sample, 0.75) - quantile(sample, 0.25)) / quantile(sample, 0.5);
  if (!(spread >= 0.1)) return 'no-jitter';
  // Clamped: a pile at 1 (smeared right by scheduling, rarely by a quarter step) and almost
  // nothing above 1.25, where U(0.5, 1.5) puts a quarter; but not all of it below 1.
  const above = sample.filter((x) => x > 1.25).length / sample.length;
  const below = sample.filter((x) => x < 0.95).length / sample.length;
  const pile = sample.filter((x) => x >= 0.98 && x <= 1.25).length / sample.length;
  if (above < 0.1 && below > 0.25 && pile > 0.25) return 'clamped';
  return 'other';
}
