// Mutant "conflict-as-duplicate": any seq at or below `last` counts as "already done",
// whatever its delta (and even without a ledger row): no change, ACK, carry on.
//
// It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
//   「同じseqでdeltaが違う場合はConflictです。イベントIDを再利用しながら内容を変える
//     パブリッシャーを、重複として黙って受け入れないためです。」
//   "The same seq with a different delta is a Conflict, so that a publisher that reuses an
//    event id while changing its content is not silently accepted as a duplicate."
//
// Exact duplicates are handled exactly like the reference (no change, ACK) — a near miss.
// A reused seq with other content is ACKed and dropped instead of stopping the session.
// Killed by: conflict — the publisher inserts the same seq with another delta; the
// reference closes without an ACK and exits non-zero, this one ACKs it and finishes with
// exit 0.
// Python twin: consumer/ledger/mutants/conflict-as-duplicate.py.
import { applyInTransaction, main } from '../typescript/ledger-client.js';

await main({
  async applyInTransaction(s, seq, delta) {
    const { last } = s.db.prepare('SELECT last FROM checkpoint WHERE id = 1').get() as { last: number };
    if (seq > last) return applyInTransaction(s, seq, delta);
    await s.steps.commitAndAck(s, seq, 'duplicate'); // BUG: the ledger's delta is never compared
    return 'duplicate';
  },
});
