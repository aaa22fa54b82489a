#!/usr/bin/env python3
"""Mutant "no-timeout" (Python twin of no-timeout.ts): CHAOSLAB_TIMEOUT_MS is validated but
never applied: every network wait (connect, each line, each drain) is unbounded
(asyncio.wait_for(..., None) waits forever).

It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
  「timeoutは各ネットワークawaitの待機上限であり、セッション全体やDB作業を含めた総期限
    ではありません。」
  "timeout is the upper bound of each network await's wait, not an overall deadline for the
   whole session including the DB work."

A publisher that keeps talking and closes cleanly never lets a wait run out — a near miss.
Killed by: stall — the publisher falls silent without closing; the consumer must give up
after CHAOSLAB_TIMEOUT_MS, and this one waits until the harness kills it.
Run: python3 consumer/ledger/mutants/no-timeout.py
"""

import dataclasses
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.parse_env


def parse_env(env: dict[str, str]) -> client.Config:
    return dataclasses.replace(_reference(env), timeout=None)  # BUG: checked, then never used


client.parse_env = parse_env

if __name__ == "__main__":
    client.main()
