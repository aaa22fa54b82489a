// Mutant "always-null-subscribe": every subscribe carries `cursor: null` (and `blockHash: null`),
// whatever the store holds, and lets the snapshot put the state right.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 2):
//   "Never ask for a snapshot you do not need: an unneeded snapshot empties the user's activity
//    list and is graded as a failure."
// and the seed's cursor (seeds/002_2e30d52b5b4dd016.txt): 「接続して購読し…」 — the cursor in
// `subscribe { topics, cursor }` is "既読位置付き購読", a subscription from where you have read.
//
// A fresh store needs a snapshot anyway, and feed-happy-path never reconnects: its only
// subscribe is rightly null — a near miss. The stores even end right (balances from the
// snapshot), only the activity list before it is gone.
// Killed by: feed-quiet-account — after 3 h away the process reconnects with a store that holds
// a cursor, and nothing (no stale-cursor reset, no revoke into its snapshot) called for a
// snapshot: the checker names the unneeded snapshot.
// Python twin: consumer/feed/mutants/always-null-subscribe.py.
import { main, type Session, type Subscription } from '../typescript/feed-client.js';

await main({
  subscription(_s: Session): Subscription {
    return { cursor: null, blockHash: null }; // BUG: a snapshot on every connect
  },
});
