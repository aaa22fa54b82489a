#!/usr/bin/env python3
"""Mutant "no-jitter" (Python twin of no-jitter.ts): every reconnect waits exactly min(BASE x 2^n, CAP): the random factor is always 1.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
  "Every later connect attempt ... waits min(BASE × 2^n, CAP) × U, with U drawn uniformly from [0.5, 1.5] for every attempt."

Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
Killed by: feed-restart-storm — the normalised delays at the cap (and before it) have no spread, so the Kolmogorov-Smirnov test fails with "no jitter at the cap".
Run: python3 consumer/feed/mutants/no-jitter.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py


def backoff_delay(config: client.Config, n: int, rnd) -> float:  # noqa: ARG001
    return min(config.backoff_base_ms * 2 ** min(n, 40), config.backoff_cap_ms)  # BUG: no random factor


client.backoff_delay = backoff_delay

if __name__ == "__main__":
    client.main()
