#!/usr/bin/env python3
"""Mutant "revoke-keeps-balances" (Python twin of revoke-keeps-balances.ts): a revoke deletes
the revoked events and moves the cursor back in one transaction, but never undoes their effect
on the balances.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 4), the seed's
"revoke は再編成の出口です" (revoke is the exit for reorganisations) made precise: a revoke above
the snapshot must delete the events at or after fromCursor and undo their effect on balances;
section 9 names "a revoke that deletes the events but forgets the balances".

Only `revoke` is replaced (the into-the-snapshot case goes to the reference). feed-happy-path
has no reorganisation: a near miss. Killed by: feed-reorg — the activity list and cursor are
right, the balances keep the revoked transfers ("revoked without undoing its balance change?").
Run: python3 consumer/feed/mutants/revoke-keeps-balances.py
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.revoke


def revoke(s: client.Session, from_cursor: str) -> str:
    con = s.con
    snapshot_cursor = client.read_state(con).snapshot_cursor
    if snapshot_cursor is not None and from_cursor <= snapshot_cursor:
        return _reference(s, from_cursor)
    con.execute("BEGIN IMMEDIATE")
    try:
        s.counters["revoke"] += 1
        n = s.counters["revoke"]
        st = client.read_state(con)
        # BUG: no balance is undone; the events simply disappear.
        con.execute("DELETE FROM feed_events WHERE cursor >= ?", (from_cursor,))
        last = con.execute("SELECT cursor, payload FROM feed_events ORDER BY cursor DESC LIMIT 1").fetchone()
        if last is not None:
            cursor, block_hash = last[0], json.loads(last[1])["blockHash"]
        else:
            cursor, block_hash = st.snapshot_cursor, st.snapshot_block_hash
        con.execute("UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1", (cursor, block_hash))
        s.fault("revoke", n)
        con.execute("COMMIT")
        return "revoked"
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


client.revoke = revoke

if __name__ == "__main__":
    client.main()
