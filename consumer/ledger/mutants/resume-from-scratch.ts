// Mutant "resume-from-scratch": always sends `RESUME -1` and relies on the ledger to
// recognise everything it already has (an event whose (seq, delta) is in the ledger is
// ACKed as a duplicate, new ones are applied — the reference's own duplicate rule).
//
// It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
//   「run_clientはストアを開き、TCPで接続して、RESUME lastとLFを送ります。」
//   "run_client opens the store, connects over TCP and sends RESUME last and an LF."
//   「2つ目のプロセスはRESUME 1を送り、サーバーがわざと再送した1と、新しいイベント2を受け取ります。」
//   "The second process sends RESUME 1 and receives 1, which the server deliberately
//    redelivers, and the new event 2."
//
// The store stays correct as long as the publisher can replay from 0, and a fresh happy run
// sends RESUME -1 anyway — a near miss. But every restart asks for the whole history again,
// and once the publisher's retention log no longer starts at 0 the answer is RESYNC.
// Killed by: ack-crash — its transcript expects `RESUME 1` from the restarted process (the
// final ledger and total would be right, the cursor on the wire is not).
// Python twin: consumer/ledger/mutants/resume-from-scratch.py.
import { main } from '../typescript/ledger-client.js';

await main({
  resumeFrom: () => -1, // BUG: the committed cursor is never sent; the ledger will sort it out
});
