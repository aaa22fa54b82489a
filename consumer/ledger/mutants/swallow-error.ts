// Mutant "swallow-error": an error while applying an event (the injected `raise`, a SQLite
// error, also Gap/Conflict) is logged and swallowed: no ROLLBACK, no ACK for that seq, and
// the session carries on reading. The transaction stays open, so every later event fails
// too (BEGIN inside a transaction is an error — logged and swallowed as well), and the
// session ends when the publisher closes (exit 0, and closing the database rolls the open
// transaction back) or when a read times out.
//
// It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
//   「途中でエラーが起きたらROLLBACKして、元のエラーを呼び出し元に返します。」
//   "If an error happens midway, it does a ROLLBACK and returns the original error to the
//    caller."
//   「単に「例外を捕捉した」という出力を、原子性の証拠にすることはしません。」
//   "A mere 'exception caught' in the output is not taken as evidence of atomicity."
//
// Without errors it is the reference — a near miss.
// Killed by: apply-raise (raise@apply:k) — the process must roll back and end with a
// non-zero exit; this one keeps the connection open without acknowledging anything more,
// and when the publisher gives up on the missing ACKs and closes, it exits 0. That needs
// the publisher to close first: apply-raise sets ack_deadline_ms (1000) below timeout_ms
// (4000). The other way round this mutant exits 5 on its read timeout, which the exit
// status alone cannot tell from the reference's 1.
// Python twin: consumer/ledger/mutants/swallow-error.py.
import { main } from '../typescript/ledger-client.js';

await main({
  async applyEvent(s, seq, delta) {
    try {
      s.db.exec('BEGIN IMMEDIATE');
      return await s.steps.applyInTransaction(s, seq, delta);
    } catch (err) {
      process.stderr.write(`ignored error at seq ${seq}: ${String(err)}\n`); // BUG: no ROLLBACK, no rethrow
      return 'duplicate'; // i.e. "nothing new": the return value is not used
    }
  },
});
