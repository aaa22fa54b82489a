// Mutant "jitter-clamped-at-cap": the jittered delay is clamped to CAP, so at the cap half the waits are exactly CAP.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
//   "... also after the cap is reached (clamping the jittered value to the cap would bring every client back in step)"
//
// Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
// Killed by: feed-restart-storm — at the cap almost no delay exceeds CAP, where U(0.5, 1.5) puts half of them above it: "the delay is clamped after the jitter".
// Python twin: consumer/feed/mutants/jitter-clamped-at-cap.py.
import { type Config, main, referenceSteps } from '../typescript/feed-client.js';

// BUG: min(..., CAP) after the jitter: everything above the cap lands on the cap, in step.
await main({
  backoffDelay: (config: Config, n: number, random: () => number) => Math.min(referenceSteps.backoffDelay(config, n, random), config.backoffCapMs),
});
