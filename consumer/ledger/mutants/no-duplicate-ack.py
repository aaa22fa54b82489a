#!/usr/bin/env python3
"""Mutant "no-duplicate-ack" (Python twin of no-duplicate-ack.ts): an exact duplicate is
recognised (nothing changes) but never acknowledged.

It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
  「内容が同じ重複にもACKを返します。結果を再び加算せずに、パブリッシャーがリトライを
    終えられるようにするためです。」
  "A duplicate with the same content gets an ACK too, so that the publisher can finish
   retrying without the result being added again."

The store is always right, and without redeliveries every ACK is sent — a near miss.
Killed by: duplicate-delivery — the second copy of the EVENT never gets its ACK. ack-crash
too (no ACK 1 from the restarted process).
Run: python3 consumer/ledger/mutants/no-duplicate-ack.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.commit_and_ack


async def commit_and_ack(s: client.Session, seq: int, outcome: str) -> None:
    if outcome != "duplicate":
        return await _reference(s, seq, outcome)
    s.con.execute("COMMIT")  # BUG: "nothing to do" — and so nothing said


client.commit_and_ack = commit_and_ack

if __name__ == "__main__":
    client.main()
