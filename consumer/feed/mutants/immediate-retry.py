#!/usr/bin/env python3
"""Mutant "immediate-retry" (Python twin of immediate-retry.ts): every reconnect happens at once, with no wait at all.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
  "Every later connect attempt — the n-th consecutive one, n = 0, 1, 2, … — waits min(BASE × 2^n, CAP) × U"

Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
Killed by: feed-restart-storm — retries arrive within a millisecond or two of the close, far earlier than half the base: "earlier than half the base".
Run: python3 consumer/feed/mutants/immediate-retry.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py


def backoff_delay(config: client.Config, n: int, rnd) -> float:  # noqa: ARG001
    return 0.0  # BUG: reconnect at once


client.backoff_delay = backoff_delay

if __name__ == "__main__":
    client.main()
