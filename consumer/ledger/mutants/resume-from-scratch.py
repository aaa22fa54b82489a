#!/usr/bin/env python3
"""Mutant "resume-from-scratch" (Python twin of resume-from-scratch.ts): always sends
RESUME -1 and relies on the ledger to recognise what it already has (the reference's own
duplicate rule ACKs those, new ones are applied).

It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
  「run_clientはストアを開き、TCPで接続して、RESUME lastとLFを送ります。」
  "run_client opens the store, connects over TCP and sends RESUME last and an LF."
  「2つ目のプロセスはRESUME 1を送り、サーバーがわざと再送した1と、新しいイベント2を受け取ります。」
  "The second process sends RESUME 1 and receives 1, which the server deliberately
   redelivers, and the new event 2."

A fresh run sends RESUME -1 anyway, and the store stays right while the publisher can replay
from 0 — a near miss (after retention moves past 0 the answer is RESYNC).
Killed by: ack-crash — its transcript expects RESUME 1 from the restarted process.
Run: python3 consumer/ledger/mutants/resume-from-scratch.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py


def resume_from(con) -> int:
    return -1  # BUG: the committed cursor is never sent; the ledger will sort it out


client.resume_from = resume_from

if __name__ == "__main__":
    client.main()
