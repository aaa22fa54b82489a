#!/usr/bin/env python3
"""Mutant "gap-skip" (Python twin of gap-skip.ts): on a gap it applies the event anyway, so
last jumps to seq.

It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
  「seqがlast+1より大きければGapです。4まで処理したのに6を受け取ってlast=6へ飛ばすと、
    あとから届いた5をすでに処理したものと誤解してしまいます。」
  "If seq is greater than last+1, it is a Gap. If you have processed up to 4, receive 6 and
   jump to last=6, you will mistake 5, arriving later, for one already processed."

Consecutive events never hit it — a near miss.
Killed by: gap — the later event is ACKed and applied, the ledger misses a seq, the total
differs from the control's, and the session ends with exit 0.
Run: python3 consumer/ledger/mutants/gap-skip.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.apply_in_transaction


async def apply_in_transaction(s: client.Session, seq: int, delta: int) -> str:
    (last,) = s.con.execute("SELECT last FROM checkpoint WHERE id = 1").fetchone()
    if seq > last + 1:
        s.con.execute("UPDATE checkpoint SET last = ? WHERE id = 1", (seq - 1,))  # BUG: jump the gap
    return await _reference(s, seq, delta)


client.apply_in_transaction = apply_in_transaction

if __name__ == "__main__":
    client.main()
