#!/usr/bin/env python3
"""Mutant "ack-before-commit" (Python twin of ack-before-commit.ts): writes ACK before COMMIT.

It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
  「まだコミットしていないのにACKを先に送って落ちると、パブリッシャーがイベントを消してしまうおそれがあります。」
  "If you send the ACK first, before committing, and then crash, the publisher may delete
   the event."

Only commit_and_ack is replaced: the ACK line is handed to the transport (asyncio sends it
at once when its buffer is empty) while the transaction is still open, then COMMIT, then the
ack fault point. A normal run looks perfect — a near miss.
Killed by: ack-crash — process 1 runs with exit@ack:1 and the scenario expects its
transcript to hold ACK 0 only; this mutant has already sent ACK 1.
Run: python3 consumer/ledger/mutants/ack-before-commit.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py


async def commit_and_ack(s: client.Session, seq: int, outcome: str) -> None:
    s.writer.write(f"ACK {seq}\n".encode("ascii"))  # BUG: on the wire before COMMIT returned
    s.con.execute("COMMIT")
    if outcome == "applied":
        s.fault("ack", seq)
    await client.with_timeout("write", s.config.timeout, s.writer.drain())


client.commit_and_ack = commit_and_ack

if __name__ == "__main__":
    client.main()
