#!/usr/bin/env python3
"""Mutant "stale-cursor-resubscribe" (Python twin of stale-cursor-resubscribe.ts): reset
stale-cursor is handled like any other reset: the consumer resubscribes with its stale cursor.

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
  「reset は必須です。有限窓の外まで離れたクライアントに、reset なしで黙って何も補わないと
    最新だと誤認します。」
  "reset is required: a client that was away beyond the finite window, silently given
   nothing, mistakes itself for up to date."
and the contract (section 4): after reset stale-cursor "the next subscribe carries cursor: null".

A consumer that never falls behind the retention window never gets that reset — a near miss.
Killed by: feed-stale-cursor — it comes back with the stale cursor after the reset.
Run: python3 consumer/feed/mutants/stale-cursor-resubscribe.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.on_reset


def on_reset(s: client.Session, reason: str) -> None:
    if reason == "stale-cursor":
        return  # BUG: as if it were slow-consumer or shutdown
    _reference(s, reason)


client.on_reset = on_reset

if __name__ == "__main__":
    client.main()
