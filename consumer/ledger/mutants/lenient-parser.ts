// Mutant "lenient-parser": parses with trim/split/Number instead of the strict grammar, so
// CRLF, '+5', '-0', leading zeros, tabs, double and trailing spaces (and '0x10', '1e2')
// pass as long as the keyword is exactly EVENT/RESYNC, there are the right number of fields,
// the numbers are integers and the delta is within -1000..1000.
//
// It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
//   「先頭の0、+符号、-0、CRLF、改行のない最後の断片は許可しません。厳格な文法は、
//     「数字に変換できたからよい」と「約束したメッセージである」を区別させるために、
//     著者が決めたものです。」
//   "Leading zeros, a + sign, -0, CRLF and a final fragment without a newline are not
//    allowed. The strict grammar was chosen by the author to make you tell 'it converted to
//    a number, so it is fine' from 'it is the message we promised'."
//
// Every valid line parses to the same event — a near miss (a final fragment without LF is
// still refused: that check lives in the line reader, not in parseLine).
// Killed by: malformed-plus-sign (and likewise malformed-crlf, -minus-zero, -leading-zero,
// -tab, -double-space): the line "converts to numbers", so this consumer applies and ACKs it
// and everything after it, and never hangs up.
// Python twin: consumer/ledger/mutants/lenient-parser.py (Python's int() is even more lenient).
import { MalformedLine, main } from '../typescript/ledger-client.js';

await main({
  parseLine(bytes) {
    // BUG: "it converted to a number" taken for "it is the promised message"
    const [word, ...fields] = Buffer.from(bytes).toString('utf8').trim().split(/\s+/);
    const nums = fields.map(Number);
    if (!nums.every(Number.isInteger)) throw new MalformedLine('not a number', bytes);
    if (word === 'EVENT' && nums.length === 2 && nums[0]! >= 0 && Math.abs(nums[1]!) <= 1000) {
      return { kind: 'event', seq: nums[0]!, delta: nums[1]! };
    }
    if (word === 'RESYNC' && nums.length === 1) return { kind: 'resync', firstAvailable: nums[0]! };
    throw new MalformedLine('not "EVENT <seq> <delta>" or "RESYNC <seq>"', bytes);
  },
});
