// Mutant "slow-as-stale": `reset slow-consumer` is handled like `reset stale-cursor`: the
// consumer comes back with `cursor: null` and installs a snapshot it did not need.
//
// It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
//   「接続ごとに例えば 1000 件の有界キューを持ち、満杯なら、その接続の全待機を消して reset します。」
//   "each connection has a bounded queue of, say, 1000; when it is full, everything waiting on
//    that connection is dropped and the server resets it."
// and the contract (section 4): `slow-consumer` changes nothing in the store; the consumer
// resumes from its stored cursor — only `stale-cursor` (or a revoke into the snapshot) calls
// for a snapshot, which empties the user's activity list.
//
// A consumer that keeps up is never reset as slow — a near miss (feed-happy-path).
// Killed by: feed-slow-reader — a reader at a tenth of the delivery speed overflows its queue
// at the server; this one answers `reset slow-consumer` with `cursor: null`, and the checker
// names the subscribe that should have carried its stored cursor.
// Python twin: consumer/feed/mutants/slow-as-stale.py.
import { main, onReset, type Session } from '../typescript/feed-client.js';

await main({
  onReset(s: Session, reason: string): void {
    onReset(s, reason === 'slow-consumer' ? 'stale-cursor' : reason); // BUG: slow is not stale
  },
});
