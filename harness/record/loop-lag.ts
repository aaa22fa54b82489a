// How late this thread's event loop ran: the publisher, the proxy's hooks and the fault timing
// all run on it, so a tick that comes seconds late means the harness itself was stalled (a
// loaded machine), not the consumer. A stall as long as the consumer's timeout can decide the
// run — a consumer that gives up waiting for a publisher the harness starved, which then passes
// a scenario it should fail (issue 29: `conflict` passed under load) — so the lab turns a long
// stall into a harness error: the run is re-run, never judged on that timing.

/**
 * Starts watching; `maxMs()` is the longest lateness of a tick seen so far, counted only while
 * `counts()` held at both ends of it (e.g. while a consumer runs: the harness's own synchronous
 * work between incarnations, like reading the store, keeps no consumer waiting).
 */
export function watchLoopLag(periodMs = 50, counts: () => boolean = () => true): { maxMs: () => number; rebase: () => void; stop: () => void } {
  let max = 0;
  let expected = performance.now() + periodMs;
  let counted = counts();
  const timer = setInterval(() => {
    const now = performance.now();
    const counting = counts();
    if (counted && counting) max = Math.max(max, now - expected);
    counted = counting;
    expected = now + periodMs;
  }, periodMs);
  timer.unref();
  // After the harness's own synchronous work (a store read while the consumer is stopped): the next tick is late by design.
  const rebase = () => {
    expected = performance.now() + periodMs;
  };
  return { maxMs: () => max, rebase, stop: () => clearInterval(timer) };
}

/** The harness error for a stall of `lagMs` in a run whose consumer gives up after `timeoutMs`, or undefined when it is short enough not to matter (under half the timeout). */
export function stallError(lagMs: number, timeoutMs: number): string | undefined {
  if (lagMs < timeoutMs / 2) return undefined;
  return `the harness itself was stalled for ${Math.round(lagMs)} ms (a loaded machine), at least half the consumer's timeout (CHAOSLAB_TIMEOUT_MS ${timeoutMs} ms): the run's timing was the harness's, so it is not judged (run it again)`;
}
