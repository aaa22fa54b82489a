// Mutant "ignore-revoke": a `revoke` frame is read, accepted and then ignored: no transaction,
// nothing deleted, no balance undone, the cursor left where it was.
//
// It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt, T18):
//   「revoke は再編成の出口です。未確認を送るなら、直前のイベントの無効化を通知します。」
//   "revoke is the exit for reorganisations: a server that sends unconfirmed events notifies
//    the invalidation of the events it sent just before."
// and the contract (consumer/feed/CONTRACT.md, section 4): a revoke above the snapshot
// "delete[s] the events at or after fromCursor and undo[es] their effect on balances".
//
// Only the `revoke` step is replaced. feed-happy-path has no reorganisation, so no revoke ever
// comes: a near miss. Killed by: feed-reorg — three delivered events are revoked; this
// consumer keeps them in its activity list (the checker: "which a reorganisation abandoned: it
// was revoked but not removed"), and since its cursor stays on the abandoned head, the new
// branch's first events look like duplicates and are dropped.
// Python twin: consumer/feed/mutants/ignore-revoke.py.
import { main } from '../typescript/feed-client.js';

await main({
  revoke() {
    return 'revoked'; // BUG: the reorganisation is never undone
  },
});
