#!/usr/bin/env python3
"""Mutant "ignore-revoke" (Python twin of ignore-revoke.ts): a `revoke` frame is accepted and
then ignored: no transaction, nothing deleted, no balance undone, the cursor left in place.

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt, T18):
  「revoke は再編成の出口です。未確認を送るなら、直前のイベントの無効化を通知します。」
  "revoke is the exit for reorganisations: a server that sends unconfirmed events notifies the
   invalidation of the events it sent just before."
and the contract, section 4: a revoke above the snapshot deletes the events at or after
fromCursor and undoes their effect on balances.

Only `revoke` is replaced. feed-happy-path has no reorganisation, so no revoke comes: a near
miss. Killed by: feed-reorg — the three revoked events stay in the activity list ("which a
reorganisation abandoned: it was revoked but not removed"), and the new branch's first events
look like duplicates behind the unmoved cursor.
Run: python3 consumer/feed/mutants/ignore-revoke.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py


def revoke(s: client.Session, from_cursor: str) -> str:
    return "revoked"  # BUG: the reorganisation is never undone


client.revoke = revoke

if __name__ == "__main__":
    client.main()
