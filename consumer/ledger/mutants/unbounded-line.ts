// Mutant "unbounded-line": no 64-byte limit while reading: it buffers until it sees an LF,
// however long the fragment grows. The per-await timeout is kept, as in the reference, and
// a complete over-long line is still refused by parseLine once its LF arrives.
//
// It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
//   「1行の上限は64バイトで、open_connectionのStreamReader limitも64に設定します。」
//   "A line has at most 64 bytes, and open_connection's StreamReader limit is set to 64 as
//    well."
//
// Valid lines are never that long — a near miss. Given 10 KiB without LF on an open
// connection, the reference closes at once (exit 2); this one keeps buffering and waits for
// the rest until CHAOSLAB_TIMEOUT_MS runs out (exit 5).
// Killed by: oversized-no-newline — the consumer must close without waiting for an LF that
// can only make the line longer; this one would close only when its read times out, and
// that scenario's timeout (60 s) is longer than its deadline, so it is killed there.
// The line reader is internal to ledger-client.ts, so the mutant drops the overflow report
// of wire.ts's LineSplitter (in this process only) instead of overriding a step.
// Python twin: consumer/ledger/mutants/unbounded-line.py.
import { LineSplitter } from '../../../protocol/ledger/wire.js';
import { main } from '../typescript/ledger-client.js';

const push = LineSplitter.prototype.push;
LineSplitter.prototype.push = function (this: LineSplitter, chunk: Uint8Array) {
  return { lines: push.call(this, chunk).lines }; // BUG: an LF will come; keep buffering
};
await main();
