// Mutant "number-amount-accepted": an amount sent as a JSON number is taken as if it were the
// decimal string ("it converted, so it is fine"): the frame is rewritten before the reference
// parser sees it, so `"amount":26` reads as `"amount":"26"`.
//
// It breaks these sentences of the contract (consumer/feed/CONTRACT.md, section 2):
//   "Amount = a JSON string holding the canonical decimal ... never a JSON number." and
//   "Invalid frame: apply nothing from it ... close the connection, and reconnect."
//
// Near miss: a correct server always sends amounts as strings, which this rewrite never
// touches, so feed-happy-path passes.
// Killed by: feed-bad-frame-number-amount, whose 4th event comes with its amount as a JSON
// number (off by one from the chain's): this consumer applies it, keeps it (the real event is a
// duplicate of its cursor later), and never closes the connection.
// Python twin: consumer/feed/mutants/number-amount-accepted.py.
import { main, parseFrame } from '../typescript/feed-client.js';

await main({
  parseFrame(line) {
    // BUG: a number where a decimal string belongs is quoted and accepted
    const text = Buffer.from(line)
      .toString('utf8')
      .replace(/("amount"\s*:\s*)([0-9]+)/g, '$1"$2"');
    return parseFrame(Buffer.from(text, 'utf8'));
  },
});
