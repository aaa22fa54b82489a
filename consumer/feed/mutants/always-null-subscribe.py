#!/usr/bin/env python3
"""Mutant "always-null-subscribe" (Python twin of always-null-subscribe.ts): every subscribe
carries cursor null (and blockHash null), whatever the store holds.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 2):
  "Never ask for a snapshot you do not need: an unneeded snapshot empties the user's activity
   list and is graded as a failure."

A fresh store needs a snapshot anyway, and feed-happy-path never reconnects — a near miss.
Killed by: feed-quiet-account — after 3 h away it reconnects with a cursor in its store and
nothing calling for a snapshot: the checker names the unneeded snapshot.
Run: python3 consumer/feed/mutants/always-null-subscribe.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py


def subscription(s: client.Session) -> tuple[str | None, str | None]:  # noqa: ARG001
    return (None, None)  # BUG: a snapshot on every connect


client.subscription = subscription

if __name__ == "__main__":
    client.main()
