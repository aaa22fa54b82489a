// make bench §8's verdict and figure from made-up runs (no timing here): a slow client that was
// reset and cost at most its queue holds; one not reset, one that cost more, or readers reset do not;
// incomplete runs, or a growth within the baseline's own noise of the limit, are not judged.
import t from 'tap';
import type { FanOutRun } from '../../../harness/bench/fanout-figures.js';
import { slowClientFigures, slowClientVerdict } from '../../../harness/bench/slow-client-figures.js';

const MiB = 2 ** 20;

t.test('the verdict: reset slow-consumer and at most queue limit × frame size', async (t) => {
  const within = slowClientVerdict({ queueLimit: 1000, frameBytes: 400, growthBytes: 300_000, resets: ['slow-consumer', 'slow-consumer'], readerResets: 0 });
  t.equal(within.limitBytes, 400_000);
  t.equal(within.growthFrames, 750);
  t.ok(within.holds);
  t.match(within.words, /grew 750 frames' worth, within its queue limit of 1000/);
  const over = slowClientVerdict({ queueLimit: 1000, frameBytes: 400, growthBytes: 800_000, resets: ['slow-consumer'], readerResets: 0 });
  t.equal(over.holds, false);
  t.match(over.words, /grew 2000 frames' worth, over its queue limit of 1000/);
  const exact = slowClientVerdict({ queueLimit: 1000, frameBytes: 400, growthBytes: 400_000, resets: ['slow-consumer'], readerResets: 0 });
  t.ok(exact.holds, 'the limit itself is within');
  const shrank = slowClientVerdict({ queueLimit: 10, frameBytes: 400, growthBytes: -2 * MiB, resets: ['slow-consumer'], readerResets: 0 });
  t.ok(shrank.holds);
  t.match(shrank.words, /grew 0 frames' worth/, 'noise below the baseline is not a negative cost');
});

t.test("the verdict is not judged where the baseline's own spread is wider than the growth's distance to the limit", async (t) => {
  // make bench on a 2 × EPYC, 2026-12-07: the Python reference server's growth 4.18 MiB against
  // 3.69 MiB, its baseline's three peaks 6.73 MiB apart; the TypeScript one's 7.48 MiB, 1.31 apart.
  const verdict = (growthMiB: number, spreadMiB: number) =>
    slowClientVerdict({
      queueLimit: 10_000,
      frameBytes: 387,
      growthBytes: growthMiB * MiB,
      resets: ['slow-consumer', 'slow-consumer', 'slow-consumer'],
      readerResets: 0,
      baselineSpreadBytes: spreadMiB * MiB,
    });
  const noisy = verdict(4.18, 6.73);
  t.equal(noisy.holds, undefined, 'not judged: neither holds nor fails');
  t.match(noisy.words, /^grew 11326 frames' worth against its queue limit of 10000, nearer to it than the baseline's own spread/);
  t.equal(verdict(3.17, 6.73).holds, undefined, 'under the limit as well: which side it fell on is chance');
  t.equal(verdict(7.48, 1.31).holds, false, 'far over the limit, the spread does not save it');
  t.match(verdict(7.48, 1.31).words, /^grew 20267 frames' worth, over its queue limit/);
  t.ok(verdict(3.17, 0.11).holds, 'far under the limit with a tight baseline');
  t.match(verdict(3.17, 0.11).words, /within its queue limit/);
});

t.test('the verdict fails without a reset in every run, or with readers reset, whatever the memory', async (t) => {
  const noReset = slowClientVerdict({ queueLimit: 1000, frameBytes: 400, growthBytes: 0, resets: ['slow-consumer', undefined], readerResets: 0 });
  t.equal(noReset.holds, false);
  t.match(noReset.words, /not reset slow-consumer in 1 of 2 runs/);
  const wrongReason = slowClientVerdict({ queueLimit: 1000, frameBytes: 400, growthBytes: 0, resets: ['shutdown'], readerResets: 0 });
  t.equal(wrongReason.holds, false);
  const readers = slowClientVerdict({ queueLimit: 1000, frameBytes: 400, growthBytes: 0, resets: ['slow-consumer'], readerResets: 3 });
  t.equal(readers.holds, false);
  t.match(readers.words, /3 reader resets/);
  t.equal(slowClientVerdict({ queueLimit: 1000, frameBytes: 400, growthBytes: 0, resets: [], readerResets: 0 }).holds, undefined, 'no run: not judged');
  t.throws(() => slowClientVerdict({ queueLimit: 0, frameBytes: 400, growthBytes: 0, resets: [], readerResets: 0 }), /queueLimit 0/);
});

const run = (maxRssMiB: number, stalled?: { events: number; reset?: string }): FanOutRun =>
  ({
    client: {
      connections: 10,
      events: 1000,
      seconds: 1,
      eventsPerSec: 1000,
      resets: {},
      closedEarly: 0,
      eventBytes: 400,
      ...(stalled ? { stalled: [{ ...stalled, closed: false }] } : {}),
    },
    publisher: { maxRssMiB, rssMiB: maxRssMiB },
  }) as FanOutRun;

t.test('the figure: medians of peak RSS with and without, the verdict and the buffers in the note', async (t) => {
  const [figure] = slowClientFigures({
    server: 'TypeScript reference server',
    readers: 10,
    queueLimit: 5000,
    events: 20_000,
    socketBufferBytes: 4096,
    withSlow: [
      run(81, { events: 90, reset: 'slow-consumer' }),
      run(80, { events: 92, reset: 'slow-consumer' }),
      run(82, { events: 91, reset: 'slow-consumer' }),
    ],
    without: [run(80), run(79.8), run(80.3)],
  });
  t.equal(figure!.value!.median, 81);
  t.equal(figure!.floor!.value.median, 80);
  // 1 MiB over 400 B frames: 2621 frames, within 5000.
  t.match(figure!.note, /^HOLDS: grew 2621 frames' worth, within its queue limit of 5000/);
  t.match(figure!.note, /against 5000 × 400 B = 1\.91 MiB/);
  t.match(figure!.note, /read 91 events before its reset/);
  t.match(figure!.note, /socket buffers fixed at 4096 B/);
  const [unbounded] = slowClientFigures({
    server: 'a mutant',
    readers: 10,
    queueLimit: 5000,
    events: 20_000,
    withSlow: [run(95, { events: 90 })],
    without: [run(80)],
  });
  t.match(unbounded!.note, /^DOES NOT HOLD: the slow client was not reset slow-consumer in 1 of 1 runs/);
  t.match(unbounded!.note, /the kernel's own socket buffers/);
  const [none] = slowClientFigures({ server: 's', readers: 1, queueLimit: 1, events: 1, withSlow: [{ refused: 'needs ulimit' }], without: [] });
  t.equal(none!.value, undefined);
  t.match(none!.note, /not run: needs ulimit/);
});

t.test('runs left out as incomplete: the memory is not judged; a slow client not reset still fails', async (t) => {
  const incomplete = (maxRssMiB: number): FanOutRun => {
    const r = run(maxRssMiB, { events: 90, reset: 'slow-consumer' }) as unknown as { client: Record<string, unknown> };
    r.client.incomplete = '5 reset of 10 readers before the stream was read';
    return r as unknown as FanOutRun;
  };
  const samples = {
    server: 'Python reference server',
    readers: 10,
    queueLimit: 5000,
    events: 20_000,
    withSlow: [run(81, { events: 90, reset: 'slow-consumer' }), incomplete(90), incomplete(95)],
    without: [run(80), run(79), incomplete(70)],
  };
  const [figure] = slowClientFigures(samples);
  t.match(figure!.note, /^NOT JUDGED: 3 incomplete runs left out, the rest too few to vouch for it/, 'not judged, not failed');
  const [over] = slowClientFigures({ ...samples, withSlow: [run(99, { events: 90, reset: 'slow-consumer' }), incomplete(90)] });
  t.match(over!.note, /^NOT JUDGED: 2 incomplete runs/, 'nor a growth over the limit, on partial medians');
  t.match(figure!.note, /2 of 3 runs incomplete \(5 reset of 10 readers before the stream was read\)/, 'and the note names them');
  const [unreset] = slowClientFigures({ ...samples, withSlow: [run(81, { events: 90 }), incomplete(90)] });
  t.match(unreset!.note, /^DOES NOT HOLD: the slow client was not reset slow-consumer in 1 of 1 runs/);
  t.match(
    slowClientVerdict({ queueLimit: 10, frameBytes: 400, growthBytes: 0, resets: ['slow-consumer'], readerResets: 0, incompleteRuns: 1 }).words,
    /^1 incomplete run left out/,
  );
});
