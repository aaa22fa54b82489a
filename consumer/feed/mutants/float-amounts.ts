// Mutant "float-amounts": every Transfer amount goes through a double before it moves a balance
// (Number(amount), as parseFloat or JSON.parse would leave it), so the low digits of an amount
// above 2^53 are rounded away.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 2, "Amount"):
//   "Use exact integer arithmetic (BigInt, Python `int`): a double or a 64-bit integer is wrong."
//
// Near miss: below 2^53 a double holds every integer exactly, and feed-happy-path keeps its
// amounts below 2^48 (chain.amount_bits), so its balances come out right.
// Killed by: feed-big-amounts, whose Transfers move amounts above 2^53 and above 2^64: the
// balances this consumer stores are off from the chain's by the rounding.
// Python twin: consumer/feed/mutants/float-amounts.py.
import { balanceEffect, main } from '../typescript/feed-client.js';

await main({
  balanceEffect(s, t) {
    // BUG: the amount is a double for a moment, and a double has 53 bits
    return balanceEffect(s, { ...t, amount: BigInt(Number(t.amount)) });
  },
});
