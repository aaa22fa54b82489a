#!/usr/bin/env python3
"""Mutant "stale-block-hash" (Python twin of stale-block-hash.ts): subscribes with its durable
cursor but with the block hash of its last snapshot (snapshot_block_hash) instead of the hash
of the cursor's own block (block_hash).

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 2): in subscribe,
"cursor is your stored cursor and blockHash the stored hash of its block" — the server compares
it with its chain to revoke what a reorganisation abandoned while the consumer was away.

Only `subscription` is replaced. feed-happy-path subscribes once with cursor null: a near miss.
Killed by: feed-reorg-while-away — after the cut it resubscribes with a hash that is not its
cursor block's ("subscribed from ... with block hash ..., but its store held block hash ...").
The server, which cannot trace that hash to the cursor's block, answers `reset stale-cursor`
(server contract, section 3); the store recovers through a snapshot, so the wire shows the fault.
Run: python3 consumer/feed/mutants/stale-block-hash.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.subscription


def subscription(s: client.Session) -> tuple[str | None, str | None]:
    cursor, block_hash = _reference(s)
    if cursor is None:
        return (cursor, block_hash)
    return (cursor, client.read_state(s.con).snapshot_block_hash)  # BUG: the snapshot's hash


client.subscription = subscription

if __name__ == "__main__":
    client.main()
