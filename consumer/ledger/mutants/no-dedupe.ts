// Mutant "no-dedupe": an exact duplicate (seq <= last, same delta in the ledger) is added to
// `total` again (the ledger keeps its single row) and ACKed.
//
// It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
//   「同じseqとdeltaが再び来たら、結果を加算せずにFalseを返します。」
//   "When the same seq and delta come again, it returns False without adding the result."
//
// A run without redeliveries never sees a duplicate — a near miss. Each redelivered event
// counts twice: after ack-crash's restart the total is 14 instead of 9.
// Killed by: duplicate-delivery — the publisher sends an EVENT twice; the reference's total
// equals the control's, this one's total is off by that delta (the ledger and `last` look
// right, only the independent read of `total` shows it). ack-crash kills it as well.
// Python twin: consumer/ledger/mutants/no-dedupe.py.
import { applyInTransaction, main } from '../typescript/ledger-client.js';

await main({
  async applyInTransaction(s, seq, delta) {
    const row = s.db.prepare('SELECT delta FROM ledger WHERE seq = ?').get(seq) as { delta: number } | undefined;
    if (row?.delta !== delta) return applyInTransaction(s, seq, delta); // new, conflict, gap: reference
    s.db.prepare('UPDATE checkpoint SET total = total + ? WHERE id = 1').run(delta); // BUG: counted again
    await s.steps.commitAndAck(s, seq, 'duplicate');
    return 'duplicate';
  },
});
