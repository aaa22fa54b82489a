#!/usr/bin/env python3
"""Mutant "jitter-clamped-at-cap" (Python twin of jitter-clamped-at-cap.ts): the jittered delay is clamped to CAP, so at the cap half the waits are exactly CAP.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
  "... also after the cap is reached (clamping the jittered value to the cap would bring every client back in step)"

Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
Killed by: feed-restart-storm — at the cap almost no delay exceeds CAP, where U(0.5, 1.5) puts half of them above it: "the delay is clamped after the jitter".
Run: python3 consumer/feed/mutants/jitter-clamped-at-cap.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.backoff_delay

def backoff_delay(config: client.Config, n: int, rnd) -> float:
    return min(_reference(config, n, rnd), config.backoff_cap_ms)  # BUG: the jittered value clamped to CAP


client.backoff_delay = backoff_delay

if __name__ == "__main__":
    client.main()
