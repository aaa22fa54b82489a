#!/usr/bin/env python3
"""Mutant "number-amount-accepted" (Python twin of number-amount-accepted.ts): an amount sent as
a JSON number is taken as if it were the decimal string ("it converted, so it is fine"): the
frame is rewritten before the reference parser sees it, so "amount":26 reads as "amount":"26".

It breaks these sentences of the contract (consumer/feed/CONTRACT.md, section 2):
  "Amount = a JSON string holding the canonical decimal ... never a JSON number." and
  "Invalid frame: apply nothing from it ... close the connection, and reconnect."

Near miss: a correct server always sends amounts as strings, which this rewrite never touches,
so feed-happy-path passes.
Killed by: feed-bad-frame-number-amount, whose 4th event comes with its amount as a JSON number
(off by one from the chain's): this consumer applies it, keeps it (the real event is a duplicate
of its cursor later), and never closes the connection.
Run: python3 consumer/feed/mutants/number-amount-accepted.py
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

reference_parse_frame = client.parse_frame
NUMBER_AMOUNT = re.compile(rb'("amount"\s*:\s*)([0-9]+)')


def parse_frame(line: bytes):
    # BUG: a number where a decimal string belongs is quoted and accepted
    return reference_parse_frame(NUMBER_AMOUNT.sub(rb'\1"\2"', line))


client.parse_frame = parse_frame

if __name__ == "__main__":
    client.main()
