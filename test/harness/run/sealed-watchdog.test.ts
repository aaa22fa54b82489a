// A sealed run's verdict comes whatever the worker is stuck in (harness/run/sealed.ts
// watchWorker): a worker that falls silent is killed, and so is one that does not stop after an
// abort; one that keeps saying it is alive is left alone, and so is one whose runner was busy.
import { performance } from 'node:perf_hooks';
import t from 'tap';
import { watchWorker } from '../../../harness/run/sealed.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const timing = { stallMs: 300, abortGraceMs: 300, tickMs: 20 };

function fakePlace() {
  const place = { lastHeard: performance.now(), killed: [] as string[], kill: (reason: string) => void place.killed.push(reason) };
  return place;
}

t.test('a silent worker is killed after the stall time, with the reason', async (t) => {
  const place = fakePlace();
  const stop = watchWorker(place, () => undefined, timing);
  t.teardown(stop);
  await sleep(150);
  t.same(place.killed, [], 'not before');
  await sleep(400);
  t.match(place.killed[0], /stopped answering for 0\.3 s .*named pipe.*: the harness killed it/);
});

t.test('a worker that says it is alive is never killed', async (t) => {
  const place = fakePlace();
  const stop = watchWorker(place, () => undefined, timing);
  const alive = setInterval(() => (place.lastHeard = performance.now()), 50);
  await sleep(800);
  clearInterval(alive);
  stop();
  t.same(place.killed, []);
});

t.test('a worker that does not stop after an abort is killed, even while it still talks', async (t) => {
  const place = fakePlace();
  const abortedAt = performance.now();
  const stop = watchWorker(place, () => abortedAt, timing);
  const alive = setInterval(() => (place.lastHeard = performance.now()), 50);
  await sleep(600);
  clearInterval(alive);
  stop();
  t.match(place.killed[0], /did not stop within 0\.3 s of the interrupt/);
});

t.test('a late tick (the runner itself was busy) judges nothing', async (t) => {
  const place = fakePlace();
  const stop = watchWorker(place, () => undefined, { ...timing, stallMs: 150 });
  t.teardown(stop);
  const until = performance.now() + 200; // busy: no tick, no message
  while (performance.now() < until);
  await sleep(60);
  t.same(place.killed, [], 'the silence was the runner’s');
});
