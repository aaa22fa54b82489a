// Mutant "revoke-keeps-balances": a revoke deletes the revoked events and moves the cursor back,
// in one transaction as it should, but never undoes their effect on the balances.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 4), the seed's
// "revoke は再編成の出口です" (revoke is the exit for reorganisations) made precise: a revoke
// above the snapshot must "delete the events at or after fromCursor and undo their effect on
// balances" — "the balances after a revoke are exactly those before the revoked events".
// Section 9 lists it among the typical ways to fail: "a revoke that deletes the events but
// forgets the balances".
//
// Only the `revoke` step is replaced (the into-the-snapshot case goes to the reference).
// feed-happy-path has no reorganisation: a near miss. Killed by: feed-reorg — the activity list
// and the cursor are right after the three events are revoked, but the followed accounts keep
// the revoked transfers' amounts (the checker: "off by exactly the effect of the revoked ...:
// revoked without undoing its balance change?").
// Python twin: consumer/feed/mutants/revoke-keeps-balances.py.
import { main, readState, revoke } from '../typescript/feed-client.js';

await main({
  revoke(s, fromCursor) {
    const { db } = s;
    const { snapshotCursor } = readState(db);
    if (snapshotCursor !== null && fromCursor <= snapshotCursor) return revoke(s, fromCursor);
    db.exec('BEGIN IMMEDIATE');
    try {
      const n = ++s.counters.revoke;
      const st = readState(db);
      // BUG: no balance is undone; the events simply disappear.
      db.prepare('DELETE FROM feed_events WHERE cursor >= ?').run(fromCursor);
      const last = db.prepare('SELECT cursor, payload FROM feed_events ORDER BY cursor DESC LIMIT 1').get() as { cursor: string; payload: string } | undefined;
      const [cursor, blockHash] = last
        ? [last.cursor, (JSON.parse(last.payload) as { blockHash: string }).blockHash]
        : [st.snapshotCursor, st.snapshotBlockHash];
      db.prepare('UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1').run(cursor, blockHash);
      s.fault('revoke', n);
      db.exec('COMMIT');
      return 'revoked';
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  },
});
