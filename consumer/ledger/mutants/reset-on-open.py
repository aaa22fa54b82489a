#!/usr/bin/env python3
"""Mutant "reset-on-open" (Python twin of reset-on-open.ts): opening the store resets the
checkpoint row to (1, -1, 0) with INSERT OR REPLACE (the ledger is kept).

It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
  「open_storeは既存の行を初期値で上書きしません。再起動のたびにlast=-1へ初期化すると、
    ファイルを使う意味がなくなります。」
  "open_store does not overwrite an existing row with the initial values. If you reset last
   to -1 on every restart, there is no point in using the file."

A fresh file starts at (1, -1, 0) anyway — a near miss.
Killed by: ack-crash — the restarted process must send RESUME 1; this one sends RESUME -1
and then collides with its own ledger rows.
Run: python3 consumer/ledger/mutants/reset-on-open.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.open_store


def open_store(path: str):
    con = _reference(path)
    con.execute("INSERT OR REPLACE INTO checkpoint(id, last, total) VALUES (1, -1, 0)")  # BUG: "start clean"
    return con


client.open_store = open_store

if __name__ == "__main__":
    client.main()
