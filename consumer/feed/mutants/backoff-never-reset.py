#!/usr/bin/env python3
"""Mutant "backoff-never-reset" (Python twin of backoff-never-reset.ts): n counts every attempt of the process and never returns to 0, so after a first outage every later one starts at the cap.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 6):
  "n returns to 0 after a connection on which at least one valid snapshot or event arrived"

Why feed-happy-path misses it: its one connection never ends before SIGTERM, so the process never waits to reconnect.
Killed by: feed-restart-storm — after the event served between the two restarts, the first retry of the second restart waits about CAP instead of about BASE: "n was not reset after a successful subscription".
Run: python3 consumer/feed/mutants/backoff-never-reset.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.backoff_delay

_attempts = 0


def backoff_delay(config: client.Config, n: int, rnd) -> float:  # noqa: ARG001
    global _attempts
    _attempts += 1  # BUG: its own count of attempts stands in for n, and nothing resets it
    return _reference(config, _attempts - 1, rnd)


client.backoff_delay = backoff_delay

if __name__ == "__main__":
    client.main()
