// Mutant "stale-cursor-resubscribe": `reset stale-cursor` is handled like any other reset: the
// consumer closes and subscribes again with its stored (stale) cursor.
//
// It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
//   「reset は必須です。有限窓の外まで離れたクライアントに、reset なしで黙って何も補わないと
//     最新だと誤認します。」
//   "reset is required: a client that was away beyond the finite window, silently given
//    nothing, mistakes itself for up to date."
// and the contract (section 4): after `reset stale-cursor` "the next subscribe carries
// `cursor: null`".
//
// A consumer that never falls behind the retention window never gets that reset — a near miss
// (feed-happy-path keeps every row).
// Killed by: feed-stale-cursor — 3 h away with a 1 h window: the server answers the stale
// cursor with `reset stale-cursor`, and this one comes back with the same cursor (and is reset
// again, for ever): the checker names the subscribe that should have carried null.
// Python twin: consumer/feed/mutants/stale-cursor-resubscribe.py.
import { main, onReset, type Session } from '../typescript/feed-client.js';

await main({
  onReset(s: Session, reason: string): void {
    if (reason === 'stale-cursor') return; // BUG: as if it were slow-consumer or shutdown
    onReset(s, reason);
  },
});
