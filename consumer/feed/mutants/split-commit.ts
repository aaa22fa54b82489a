// Mutant "split-commit": an event's row and its balance changes are committed in one
// transaction, its cursor (and block hash) in a second one; the `apply` fault point sits
// between the two.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 3): "Every frame
// that changes the store is handled in one transaction (BEGIN IMMEDIATE … COMMIT), the cursor
// included" — section 9: "writing the event and the cursor in two transactions (a crash between
// them applies the event twice)". It is the ledger seed's rule again: the business result and
// the processing cursor are kept in the same transaction.
//
// Only the new-event branch of `applyEventInTransaction` is replaced (duplicates go to the
// reference). Without faults the stores end the same: a near miss for feed-happy-path. Killed
// by: feed-mid-transaction-visibility — the process stops itself (stop@apply) between the two
// COMMITs, and an independent read already sees the event in the activity list with the cursor
// still before it (the checker: "stopped itself inside the transaction of event ..., and an
// independent read saw ...; uncommitted work must be invisible").
// Python twin: consumer/feed/mutants/split-commit.py.
import { applyEventInTransaction, main, readState } from '../typescript/feed-client.js';

await main({
  async applyEventInTransaction(s, ev) {
    const { db } = s;
    const { cursor } = readState(db);
    if (cursor !== null && ev.cursor <= cursor) return applyEventInTransaction(s, ev); // a resend
    const n = ++s.counters.apply;
    db.prepare('INSERT INTO feed_events (cursor, type, payload) VALUES (?, ?, ?)').run(ev.cursor, ev.type, ev.payloadText);
    if (ev.transfer) {
      for (const [account, delta] of s.steps.balanceEffect(s, ev.transfer)) {
        const row = db.prepare('SELECT amount FROM feed_balances WHERE account = ?').get(account) as { amount: string } | undefined;
        const amount = (row === undefined ? 0n : BigInt(row.amount)) + delta;
        db.prepare('INSERT OR REPLACE INTO feed_balances (account, amount) VALUES (?, ?)').run(account, amount.toString());
      }
    }
    if (s.config.applyDelayMs > 0) await s.pause(s.config.applyDelayMs);
    db.exec('COMMIT'); // BUG: the event is committed without its cursor
    s.fault('apply', n); // now between the two transactions
    db.exec('BEGIN IMMEDIATE');
    db.prepare('UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1').run(ev.cursor, ev.blockHash);
    db.exec('COMMIT');
    s.fault('commit', n);
    return 'applied';
  },
});
