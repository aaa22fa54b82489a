#!/usr/bin/env python3
"""Mutant "slow-as-stale" (Python twin of slow-as-stale.ts): reset slow-consumer is handled like
reset stale-cursor: the consumer comes back with cursor null and installs a snapshot it did not
need.

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
  「接続ごとに例えば 1000 件の有界キューを持ち、満杯なら、その接続の全待機を消して reset します。」
  "each connection has a bounded queue of, say, 1000; when it is full, everything waiting on
   that connection is dropped and the server resets it."
and the contract (section 4): slow-consumer changes nothing in the store; the consumer resumes
from its stored cursor, and only stale-cursor (or a revoke into the snapshot) calls for a
snapshot, which empties the user's activity list.

A consumer that keeps up is never reset as slow — a near miss.
Killed by: feed-slow-reader — it answers reset slow-consumer with cursor null.
Run: python3 consumer/feed/mutants/slow-as-stale.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.on_reset


def on_reset(s: client.Session, reason: str) -> None:
    _reference(s, "stale-cursor" if reason == "slow-consumer" else reason)  # BUG: slow is not stale


client.on_reset = on_reset

if __name__ == "__main__":
    client.main()
