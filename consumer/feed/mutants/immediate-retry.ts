// Mutant "immediate-retry": every reconnect happens at once, with no wait at all.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
//   "Every later connect attempt — the n-th consecutive one, n = 0, 1, 2, … — waits min(BASE × 2^n, CAP) × U"
//
// Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
// Killed by: feed-restart-storm — retries arrive within a millisecond or two of the close, far earlier than half the base: "earlier than half the base".
// Python twin: consumer/feed/mutants/immediate-retry.py.
import { main } from '../typescript/feed-client.js';

// BUG: no backoff at all: a restarted server is hammered by every client at once, again and again.
await main({ backoffDelay: () => 0 });
