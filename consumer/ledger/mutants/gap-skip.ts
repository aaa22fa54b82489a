// Mutant "gap-skip": on a gap (seq > last + 1) it applies the event anyway, so `last` jumps
// to seq.
//
// It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
//   「seqがlast+1より大きければGapです。4まで処理したのに6を受け取ってlast=6へ飛ばすと、
//     あとから届いた5をすでに処理したものと誤解してしまいます。」
//   "If seq is greater than last+1, it is a Gap. If you have processed up to 4, receive 6
//    and jump to last=6, you will mistake 5, arriving later, for one already processed."
//
// Consecutive events never hit it — a near miss. Inside the same transaction it moves the
// cursor to seq - 1 and lets the reference apply the event as if it were next.
// Killed by: gap — the publisher skips a seq; the reference stops without an ACK and exits
// non-zero, this one ACKs the later event, ends with a ledger missing a seq and a total that
// differs from the control's, and exits 0.
// Python twin: consumer/ledger/mutants/gap-skip.py.
import { applyInTransaction, main } from '../typescript/ledger-client.js';

await main({
  async applyInTransaction(s, seq, delta) {
    const { last } = s.db.prepare('SELECT last FROM checkpoint WHERE id = 1').get() as { last: number };
    if (seq > last + 1) s.db.prepare('UPDATE checkpoint SET last = ? WHERE id = 1').run(seq - 1); // BUG: jump the gap
    return applyInTransaction(s, seq, delta);
  },
});
