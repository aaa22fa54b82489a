#!/usr/bin/env python3
"""Mutant "swallow-error" (Python twin of swallow-error.ts): an error while applying an
event (the injected raise, a SQLite error, also Gap/Conflict) is logged and swallowed: no
ROLLBACK, no ACK for that seq, and the session carries on reading. The transaction stays
open, so every later event fails too (BEGIN inside a transaction is an error, swallowed as
well); the session ends when the publisher closes (exit 0; closing the database rolls the
open transaction back) or when a read times out.

It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
  「途中でエラーが起きたらROLLBACKして、元のエラーを呼び出し元に返します。」
  "If an error happens midway, it does a ROLLBACK and returns the original error to the
   caller."
  「単に「例外を捕捉した」という出力を、原子性の証拠にすることはしません。」
  "A mere 'exception caught' in the output is not taken as evidence of atomicity."

Without errors it is the reference — a near miss.
Killed by: apply-raise (raise@apply:k) — the process must roll back and exit non-zero; this
one keeps the connection open and exits 0 when the publisher gives up on the missing ACKs
and closes. That needs the publisher to close first: apply-raise sets ack_deadline_ms (1000)
below timeout_ms (4000); the other way round this mutant exits 5 on its read timeout, which
the exit status alone cannot tell from the reference's 1.
Run: python3 consumer/ledger/mutants/swallow-error.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py


async def apply_event(s: client.Session, seq: int, delta: int) -> str:
    try:
        s.con.execute("BEGIN IMMEDIATE")
        return await client.apply_in_transaction(s, seq, delta)
    except Exception as err:  # noqa: BLE001
        print(f"ignored error at seq {seq}: {err!r}", file=sys.stderr)  # BUG: no ROLLBACK, no re-raise
        return "failed"


client.apply_event = apply_event

if __name__ == "__main__":
    client.main()
