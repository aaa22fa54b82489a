// Mutant "no-jitter": every reconnect waits exactly min(BASE x 2^n, CAP): the random factor is always 1.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
//   "Every later connect attempt ... waits min(BASE × 2^n, CAP) × U, with U drawn uniformly from [0.5, 1.5] for every attempt."
//
// Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
// Killed by: feed-restart-storm — the normalised delays at the cap (and before it) have no spread, so the Kolmogorov-Smirnov test fails with "no jitter at the cap".
// Python twin: consumer/feed/mutants/no-jitter.py.
import { type Config, main, referenceSteps } from '../typescript/feed-client.js';

// BUG: the factor is always 1 (0.5 + 0.5): every client of a restarted server comes back in the same instant.
await main({ backoffDelay: (config: Config, n: number) => referenceSteps.backoffDelay(config, n, () => 0.5) });
