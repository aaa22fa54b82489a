#!/usr/bin/env python3
"""Mutant "float-amounts" (Python twin of float-amounts.ts): every Transfer amount goes through
a float before it moves a balance (float(amount), as a student's json.loads(...,
parse_int=float) or Decimal-free arithmetic would), so the low digits of an amount above 2^53
are rounded away.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 2, "Amount"):
  "Use exact integer arithmetic (BigInt, Python `int`): a double or a 64-bit integer is wrong."

Near miss: below 2^53 a float holds every integer exactly, and feed-happy-path keeps its amounts
below 2^48 (chain.amount_bits), so its balances come out right.
Killed by: feed-big-amounts, whose Transfers move amounts above 2^53 and above 2^64: the
balances this consumer stores are off from the chain's by the rounding.
Run: python3 consumer/feed/mutants/float-amounts.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

reference_balance_effect = client.balance_effect


def balance_effect(s, transfer):
    frm, to, amount = transfer
    # BUG: the amount is a float for a moment, and a float has 53 bits
    return reference_balance_effect(s, (frm, to, int(float(amount))))


client.balance_effect = balance_effect

if __name__ == "__main__":
    client.main()
