// Mutant "no-duplicate-ack": an exact duplicate is recognised (nothing changes) but never
// acknowledged.
//
// It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
//   「内容が同じ重複にもACKを返します。結果を再び加算せずに、パブリッシャーがリトライを
//     終えられるようにするためです。」
//   "A duplicate with the same content gets an ACK too, so that the publisher can finish
//    retrying without the result being added again."
//
// The store is always right and a run without redeliveries sends every ACK — a near miss.
// The publisher, however, never learns that a redelivered event arrived and keeps it in
// flight (retrying it, or waiting for its ACK until its deadline).
// Killed by: duplicate-delivery — the publisher sends an EVENT twice and expects an ACK for
// each copy; the second ACK never comes. ack-crash kills it as well (no `ACK 1` from the
// restarted process, which received 1 again).
// Python twin: consumer/ledger/mutants/no-duplicate-ack.py.
import { commitAndAck, main } from '../typescript/ledger-client.js';

await main({
  async commitAndAck(s, seq, outcome) {
    if (outcome !== 'duplicate') return commitAndAck(s, seq, outcome);
    s.db.exec('COMMIT'); // BUG: "nothing to do" — and so nothing said
  },
});
