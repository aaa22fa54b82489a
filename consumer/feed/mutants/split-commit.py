#!/usr/bin/env python3
"""Mutant "split-commit" (Python twin of split-commit.ts): an event's row and balance changes
are committed in one transaction, its cursor and block hash in a second; the apply fault point
sits between the two.

It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 3): "Every frame
that changes the store is handled in one transaction (BEGIN IMMEDIATE … COMMIT), the cursor
included" (section 9: "writing the event and the cursor in two transactions").

Only the new-event branch of `apply_event_in_transaction` is replaced. Without faults the
stores end the same: a near miss. Killed by: feed-mid-transaction-visibility — stopped
(stop@apply) between the two COMMITs, an independent read sees the event with the cursor still
before it ("uncommitted work must be invisible").
Run: python3 consumer/feed/mutants/split-commit.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.apply_event_in_transaction


def apply_event_in_transaction(s: client.Session, ev: client.Frame) -> str:
    con = s.con
    cursor = client.read_state(con).cursor
    if cursor is not None and ev.cursor <= cursor:
        return _reference(s, ev)  # a resend
    s.counters["apply"] += 1
    n = s.counters["apply"]
    con.execute("INSERT INTO feed_events (cursor, type, payload) VALUES (?, ?, ?)", (ev.cursor, ev.type, ev.payload))
    if ev.transfer is not None:
        for account, delta in client.balance_effect(s, ev.transfer).items():
            client.add_balance(con, account, delta)
    if s.config.apply_delay_ms > 0:
        s.pause(s.config.apply_delay_ms)
    con.execute("COMMIT")  # BUG: the event is committed without its cursor
    s.fault("apply", n)  # now between the two transactions
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1", (ev.cursor, ev.block_hash))
    con.execute("COMMIT")
    s.fault("commit", n)
    return "applied"


client.apply_event_in_transaction = apply_event_in_transaction

if __name__ == "__main__":
    client.main()
