#!/usr/bin/env python3
"""Mutant "no-dedupe" (Python twin of no-dedupe.ts): an exact duplicate is added to total
again (the ledger keeps its single row) and ACKed.

It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
  「同じseqとdeltaが再び来たら、結果を加算せずにFalseを返します。」
  "When the same seq and delta come again, it returns False without adding the result."

Without redeliveries there is no duplicate — a near miss.
Killed by: duplicate-delivery — the publisher sends an EVENT twice and this total ends off
by that delta from the control's. ack-crash too (total 14 instead of 9).
Run: python3 consumer/ledger/mutants/no-dedupe.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.apply_in_transaction


async def apply_in_transaction(s: client.Session, seq: int, delta: int) -> str:
    row = s.con.execute("SELECT delta FROM ledger WHERE seq = ?", (seq,)).fetchone()
    if row is None or row[0] != delta:
        return await _reference(s, seq, delta)  # new, conflict, gap: reference
    s.con.execute("UPDATE checkpoint SET total = total + ? WHERE id = 1", (delta,))  # BUG: counted again
    await client.commit_and_ack(s, seq, "duplicate")
    return "duplicate"


client.apply_in_transaction = apply_in_transaction

if __name__ == "__main__":
    client.main()
