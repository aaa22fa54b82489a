#!/usr/bin/env python3
"""Mutant "conflict-as-duplicate" (Python twin of conflict-as-duplicate.ts): any seq at or
below last counts as "already done", whatever its delta (even without a ledger row): no
change, ACK, carry on.

It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
  「同じseqでdeltaが違う場合はConflictです。イベントIDを再利用しながら内容を変える
    パブリッシャーを、重複として黙って受け入れないためです。」
  "The same seq with a different delta is a Conflict, so that a publisher that reuses an
   event id while changing its content is not silently accepted as a duplicate."

Exact duplicates behave exactly as in the reference — a near miss.
Killed by: conflict — the reused seq with another delta is ACKed and dropped, and the
session ends with exit 0 instead of closing non-zero without an ACK.
Run: python3 consumer/ledger/mutants/conflict-as-duplicate.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.apply_in_transaction


async def apply_in_transaction(s: client.Session, seq: int, delta: int) -> str:
    (last,) = s.con.execute("SELECT last FROM checkpoint WHERE id = 1").fetchone()
    if seq > last:
        return await _reference(s, seq, delta)
    await client.commit_and_ack(s, seq, "duplicate")  # BUG: the ledger's delta is never compared
    return "duplicate"


client.apply_in_transaction = apply_in_transaction

if __name__ == "__main__":
    client.main()
