#!/usr/bin/env python3
"""Mutant "split-commit" (Python twin of split-commit.ts): the ledger row + total and the
cursor are committed in two separate transactions; the apply fault point sits between them.

It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
  「切れた接続はもう一度開けますが、すでに行った処理をやり直すかどうかを判断するには、
    業務の結果と処理カーソルを同じトランザクションで残す必要があります。」
  "A dropped connection can be opened again, but to decide whether work already done has to
   be redone, the business result and the processing cursor must be kept in the same
   transaction."

A run without faults commits the same rows and ACKs — a near miss.
Killed by: apply-crash (exit@apply:k) — after the crash the file holds k in the ledger and
total beyond last = k-1, and the restart fails inserting k again. mid-transaction-visibility
(stop@apply:k) too: while the process is stopped, k's ledger row and total are visible.
Run: python3 consumer/ledger/mutants/split-commit.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.apply_in_transaction


async def apply_in_transaction(s: client.Session, seq: int, delta: int) -> str:
    con = s.con
    (last,) = con.execute("SELECT last FROM checkpoint WHERE id = 1").fetchone()
    if seq != last + 1:
        return await _reference(s, seq, delta)  # duplicates, conflicts, gaps
    con.execute("INSERT INTO ledger(seq, delta) VALUES (?, ?)", (seq, delta))
    con.execute("UPDATE checkpoint SET total = total + ? WHERE id = 1", (delta,))
    con.execute("COMMIT")  # BUG: the business result is committed without its cursor
    s.fault("apply", seq)  # now between the two transactions
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE checkpoint SET last = ? WHERE id = 1", (seq,))
    await client.commit_and_ack(s, seq, "applied")
    return "applied"


client.apply_in_transaction = apply_in_transaction

if __name__ == "__main__":
    client.main()
