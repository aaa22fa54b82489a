// Mutant "split-commit": commits the business result (ledger row + total) and the cursor
// (`last`) in two separate transactions; the `apply` fault point sits between them.
//
// It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
//   「切れた接続はもう一度開けますが、すでに行った処理をやり直すかどうかを判断するには、
//     業務の結果と処理カーソルを同じトランザクションで残す必要があります。」
//   "A dropped connection can be opened again, but to decide whether work already done has
//    to be redone, the business result and the processing cursor must be kept in the same
//    transaction."
//
// Only the new-event branch is replaced (duplicates, conflicts and gaps go to the reference
// inside the same BEGIN IMMEDIATE). A run without faults commits the same rows and sends the
// same ACKs — a near miss. Between the two COMMITs the file says "event k counted, cursor
// still at k-1": a crash there leaves a total that includes k, and the restart (RESUME k-1)
// gets k again, tries to insert it as new and fails on the ledger's primary key.
// Killed by: apply-crash (exit@apply:k) — the independent read after the crash finds k in
// the ledger (and in total) beyond the cursor last = k-1, and the restart, given k again,
// cannot complete. mid-transaction-visibility (stop@apply:k) kills it too: while the process
// is stopped, k's ledger row and total are already visible to an independent reader.
// Python twin: consumer/ledger/mutants/split-commit.py.
import { applyInTransaction, main } from '../typescript/ledger-client.js';

await main({
  async applyInTransaction(s, seq, delta) {
    const { last } = s.db.prepare('SELECT last FROM checkpoint WHERE id = 1').get() as { last: number };
    if (seq !== last + 1) return applyInTransaction(s, seq, delta);
    s.db.prepare('INSERT INTO ledger(seq, delta) VALUES (?, ?)').run(seq, delta);
    s.db.prepare('UPDATE checkpoint SET total = total + ? WHERE id = 1').run(delta);
    s.db.exec('COMMIT'); // BUG: the business result is committed without its cursor
    s.fault('apply', seq); // now between the two transactions
    s.db.exec('BEGIN IMMEDIATE');
    s.db.prepare('UPDATE checkpoint SET last = ? WHERE id = 1').run(seq);
    await s.steps.commitAndAck(s, seq, 'applied');
    return 'applied';
  },
});
