// Mutant "no-timeout": never applies CHAOSLAB_TIMEOUT_MS; every network wait (connect, each
// line, each drain) is unbounded. The variable is still validated (a bad value still exits
// 64), then replaced by 2^31-1 ms (about 24.8 days, the longest wait setTimeout supports).
//
// It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
//   「timeoutは各ネットワークawaitの待機上限であり、セッション全体やDB作業を含めた総期限
//     ではありません。」
//   "timeout is the upper bound of each network await's wait, not an overall deadline for
//    the whole session including the DB work."
//
// A publisher that keeps talking and closes cleanly never lets a wait run out — a near miss.
// A publisher that falls silent with the connection open keeps this process waiting forever
// (until someone kills it).
// Killed by: stall — the publisher falls silent without closing; the consumer must give up
// after CHAOSLAB_TIMEOUT_MS with a non-zero exit, and this one is still waiting when the
// harness's deadline kills it.
// Python twin: consumer/ledger/mutants/no-timeout.py.
import { main } from '../typescript/ledger-client.js';

const LONGEST_MS = 2 ** 31 - 1;
const given = process.env.CHAOSLAB_TIMEOUT_MS ?? '';
// BUG: read, checked, and then not used — the session waits as long as it takes.
if (/^[1-9][0-9]*$/.test(given) && Number(given) <= LONGEST_MS) process.env.CHAOSLAB_TIMEOUT_MS = String(LONGEST_MS);
await main();
