// The harness's own stalls (harness/record/loop-lag.ts): a blocked event loop is measured, and a
// stall as long as half the consumer's timeout becomes a harness error naming both numbers.
// The block is made here (a busy wait), so load can only make the measured lag larger.
import t from 'tap';
import { stallError, watchLoopLag } from '../../../harness/record/loop-lag.js';

t.test('a blocked event loop shows as lag', async (t) => {
  const lag = watchLoopLag(20);
  await new Promise((resolve) => setTimeout(resolve, 30));
  const until = performance.now() + 300;
  while (performance.now() < until) {
    // the harness stalled
  }
  await new Promise((resolve) => setTimeout(resolve, 60));
  lag.stop();
  t.ok(lag.maxMs() >= 250, `at least the 300 ms block less one period, got ${lag.maxMs()}`);
});

t.test('a block while not counting, or followed by rebase(), is no lag', async (t) => {
  let counting = false;
  const lag = watchLoopLag(20, () => counting);
  const block = () => {
    const until = performance.now() + 1500;
    while (performance.now() < until) {
      // the harness's own synchronous work
    }
  };
  await new Promise((resolve) => setTimeout(resolve, 30));
  block();
  await new Promise((resolve) => setTimeout(resolve, 60));
  counting = true;
  await new Promise((resolve) => setTimeout(resolve, 60));
  block();
  lag.rebase();
  await new Promise((resolve) => setTimeout(resolve, 60));
  lag.stop();
  t.ok(lag.maxMs() < 1000, `neither 1.5 s block counted, got ${lag.maxMs()}`);
});

t.test('a stall under half the timeout is no error; from half on it is, with its numbers', async (t) => {
  t.equal(stallError(999, 2000), undefined);
  t.match(stallError(1000, 2000), /stalled for 1000 ms .*CHAOSLAB_TIMEOUT_MS 2000 ms.*not judged/);
  t.match(stallError(4321.4, 500), /stalled for 4321 ms/);
});
