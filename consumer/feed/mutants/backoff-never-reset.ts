// Mutant "backoff-never-reset": n counts every attempt of the process and never returns to 0, so after a first outage every later one starts at the cap.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
//   "n returns to 0 after a connection on which at least one valid snapshot or event arrived"
//
// Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
// Killed by: feed-restart-storm — after the event served between the two restarts, the first retry of the second restart waits about CAP instead of about BASE: "n was not reset after a successful subscription".
// Python twin: consumer/feed/mutants/backoff-never-reset.py.
import { type Config, main, referenceSteps } from '../typescript/feed-client.js';

// BUG: its own count of attempts stands in for n, and nothing ever resets it.
let attempts = 0;
await main({ backoffDelay: (config: Config, _n: number, random: () => number) => referenceSteps.backoffDelay(config, attempts++, random) });
