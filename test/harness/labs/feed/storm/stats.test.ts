// The restart storm's statistics (harness/labs/feed/storm/ks.ts, crowd.ts): the KS distance and
// its bound, and — the point of the design — a simulation of many seeded storms: a correct
// U(0.5, 1.5) sampler with scheduling noise never fails, a clamped or jitter-free one always does.
import t from 'tap';
import { BIN_MS, histogram, simulateCrowd } from '../../../../../harness/labs/feed/storm/crowd.js';
import { KS_ALPHA, KS_TOLERANCE, ksDistance, ksTest, ksThreshold, quantile, shapeOf, uniformCdf } from '../../../../../harness/labs/feed/storm/ks.js';
import { Prng } from '../../../../../publisher/feed/chain/prng.js';

const BASE = 250;
const CAP = 2000;
const N_CAP = 3; // 250, 500, 1000 before the cap

t.test('the distance and its bound', (t) => {
  t.equal(uniformCdf(0.4), 0);
  t.equal(uniformCdf(1), 0.5);
  t.equal(uniformCdf(2), 1);
  t.same(ksDistance([1]), { d: 0.5, plus: 0.5, minus: 0.5, at: 1 }, 'one point in the middle is half a CDF away on both sides');
  t.equal(ksDistance([0.75, 1.25]).d, 0.25);
  // Late by half a step: only D⁻ grows, and D⁻ is not judged (scheduling only adds delay).
  const rng = new Prng(9);
  const exact = Array.from({ length: 300 }, () => 0.5 + rng.next() / 2 ** 32);
  const late = ksTest(exact.map((x) => x + 0.5));
  t.ok(late.minus > 0.4 && late.plus < 0.05, `a sample shifted late: D⁻ ${late.minus.toFixed(2)}, D⁺ ${late.plus.toFixed(2)}`);
  t.equal(late.pass, true, 'passes: lateness is what noise does');
  const early = ksTest(exact.map((x) => x - 0.25));
  t.equal(early.pass, false, 'a sample shifted early fails (D⁺)');
  t.equal(ksThreshold(100), Math.sqrt(Math.log(2 / 1e-5) / 200) + 0.05, 'sqrt(ln(2/α)/2N) + 0.05');
  t.equal(KS_ALPHA, 1e-5);
  t.equal(KS_TOLERANCE, 0.05);
  t.match(ksTest([]), { n: 0, pass: true }, 'nothing to judge passes');
  const flat = ksTest(new Array(200).fill(1));
  t.equal(flat.pass, false, 'no spread fails');
  t.equal(flat.d, 0.5);
  t.equal(quantile([3, 1, 2], 0.5), 2);
  t.equal(quantile([1, 2], 0.5), 1.5);
  t.ok(Number.isNaN(quantile([], 0.5)));
  t.end();
});

t.test('what a failed sample looks like', (t) => {
  const rng = new Prng(1);
  const u = () => rng.next() / 2 ** 32;
  const uniform = Array.from({ length: 400 }, () => 0.5 + u());
  t.equal(shapeOf(new Array(50).fill(1.003)), 'no-jitter');
  t.equal(shapeOf(uniform.map((x) => Math.min(x, 1))), 'clamped');
  t.equal(shapeOf(uniform.map((x) => x * 2)), 'other');
  t.end();
});

/** One storm's normalised delays: K processes, 2 restarts, 3 steps before the cap and `atCap` at it. */
function storm(rng: Prng, k: number, atCap: number, factor: (u: number) => number) {
  const u = () => rng.next() / 2 ** 32;
  const pre: number[] = [];
  const cap: number[] = [];
  for (let p = 0; p < k * 2; p++) {
    for (let n = 0; n < N_CAP + atCap; n++) {
      const step = Math.min(BASE * 2 ** n, CAP);
      // Scheduling noise only adds: a few ms usually, now and then tens of ms.
      const noise = -Math.log(1 - u()) * 4 + (u() < 0.05 ? u() * 60 : 0);
      const delay = step * factor(0.5 + u()) + noise;
      (n < N_CAP ? pre : cap).push(delay / step);
    }
  }
  return { pre: ksTest(pre), cap: ksTest(cap) };
}

t.test('a correct sampler never false-fails over many seeded storms', (t) => {
  for (const [k, runs] of [
    [20, 600],
    [4, 600],
  ] as const) {
    let failures = 0;
    for (let seed = 1; seed <= runs; seed++) {
      const r = storm(new Prng(seed), k, 4, (x) => x);
      if (!r.pre.pass || !r.cap.pass) failures++;
    }
    t.equal(failures, 0, `K = ${k}: no false failure in ${runs} storms`);
  }
  t.end();
});

t.test('a clamped factor and no factor are always caught, for their reason', (t) => {
  let clamped = 0;
  let flat = 0;
  const runs = 300;
  for (let seed = 1; seed <= runs; seed++) {
    // Clamped: the jittered value min(step × U, CAP); only the cap shows it.
    const rng = new Prng(seed);
    const u = () => rng.next() / 2 ** 32;
    const capSample = Array.from({ length: 20 * 2 * 4 }, () => Math.min(CAP * (0.5 + u()), CAP) / CAP + u() * 0.003);
    const r = ksTest(capSample);
    if (!r.pass && shapeOf(capSample) === 'clamped') clamped++;
    const none = storm(new Prng(seed), 20, 4, () => 1);
    if (!none.pre.pass && !none.cap.pass) flat++;
  }
  t.equal(clamped, runs, `clamped caught at the cap in ${runs} of ${runs}`);
  t.equal(flat, runs, `no jitter caught before and at the cap in ${runs} of ${runs}`);
  // At small K too.
  const rng = new Prng(7);
  const u = () => rng.next() / 2 ** 32;
  const small = Array.from({ length: 4 * 2 * 4 }, () => Math.min(CAP * (0.5 + u()), CAP) / CAP);
  t.equal(ksTest(small).pass, false, 'clamped is caught with K = 4 as well');
  t.end();
});

t.test('the histogram and the crowd', (t) => {
  const h = histogram(
    [
      { t: 0, lane: 0 },
      { t: 50, lane: 1 },
      { t: 150, lane: 1 },
      { t: -1, lane: 0 },
      { t: 99_999, lane: 0 },
      { t: 10, lane: 7 },
    ],
    2,
    300,
  );
  t.same(h, [
    [1, 1],
    [0, 1],
    [0, 0],
  ]);
  t.equal(BIN_MS, 100);
  const spec = { baseMs: BASE, capMs: CAP, spanMs: 12_000, preCap: [0.5, 1, 1.5], atCap: [0.5, 1, 1.5] };
  const crowd = simulateCrowd(spec, 1000);
  t.equal(crowd.peakUnjittered, 1000 * 10, 'without jitter all clients arrive in the same 100 ms: 10 000 accepts per second');
  t.ok(crowd.peakJittered < crowd.peakUnjittered, `jitter spreads them (${crowd.peakJittered} per second)`);
  t.equal(crowd.unjittered.reduce((a, b) => a + b, 0) / 1000, 8, 'every twin client retries at 0.25, 0.75, 1.75, 3.75, 5.75, 7.75, 9.75 and 11.75 s');
  const stuck = simulateCrowd({ ...spec, preCap: [0], atCap: [0] }, 10);
  t.equal(stuck.peakJittered, 10 * 200 * 10, 'a crowd that retries at once is bounded (200 attempts each)');
  const empty = simulateCrowd({ ...spec, preCap: [], atCap: [] }, 10);
  t.equal(empty.peakJittered, empty.peakUnjittered, 'no measurement: the crowd behaves as the twin');
  t.end();
});
