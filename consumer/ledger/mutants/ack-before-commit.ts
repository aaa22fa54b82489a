// Mutant "ack-before-commit": writes ACK before COMMIT.
//
// It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
//   「まだコミットしていないのにACKを先に送って落ちると、パブリッシャーがイベントを消してしまうおそれがあります。」
//   "If you send the ACK first, before committing, and then crash, the publisher may delete
//    the event."
//
// Everything else is the reference consumer; only the commit->ack step is replaced. The ACK
// line is handed to the socket while the transaction is still open, then COMMIT runs, then
// the `ack` fault point. A normal run looks perfect (same ACKs, same ledger) — a near miss.
// A crash between the early ACK and the COMMIT loses an event the publisher already
// dropped. The order is visible from outside: with `exit@ack:k` the publisher still
// receives `ACK k`, and while another connection holds a read lock (so COMMIT cannot
// finish) `ACK k` arrives anyway.
// Killed by: ack-crash — process 1 runs with `exit@ack:1`, and the scenario expects its
// transcript to hold `ACK 0` only; this mutant has already put `ACK 1` on the wire.
// Python twin: consumer/ledger/mutants/ack-before-commit.py.
// Started as `node dist/consumer/ledger/mutants/ack-before-commit.js`.
import { encodeAck } from '../../../protocol/ledger/wire.js';
import { main } from '../typescript/ledger-client.js';

await main({
  async commitAndAck(s, seq, outcome) {
    s.write(encodeAck(seq)); // BUG: on the wire before the COMMIT below has returned
    s.db.exec('COMMIT');
    if (outcome === 'applied') s.fault('ack', seq);
    await s.drain();
  },
});
