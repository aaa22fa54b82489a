#!/usr/bin/env python3
"""Mutant "no-dedupe" (Python twin of no-dedupe.ts): every event is applied as new, resends
included: its row written again (INSERT OR REPLACE), its amounts added to the balances again,
the cursor set to it.

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt, T18, 実践):
  「重複が届いた場合、除去が機能したか？」 — "When duplicates arrive, did removing them work?"
and the contract, section 4: an event at or below the stored cursor is a duplicate: change
nothing, whatever its content.

Only `apply_event_in_transaction` is replaced. feed-happy-path never resends: a near miss.
Killed by: feed-resend-after-reconnect — the event resent after the reconnect is counted twice
("off by exactly the effect of ...: applied twice?").
Run: python3 consumer/feed/mutants/no-dedupe.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py


def apply_event_in_transaction(s: client.Session, ev: client.Frame) -> str:
    con = s.con
    # BUG: no "cursor <= stored cursor" check: a resend is applied like a new event.
    s.counters["apply"] += 1
    n = s.counters["apply"]
    con.execute(
        "INSERT OR REPLACE INTO feed_events (cursor, type, payload) VALUES (?, ?, ?)", (ev.cursor, ev.type, ev.payload)
    )
    if ev.transfer is not None:
        for account, delta in client.balance_effect(s, ev.transfer).items():
            client.add_balance(con, account, delta)
    con.execute("UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1", (ev.cursor, ev.block_hash))
    if s.config.apply_delay_ms > 0:
        s.pause(s.config.apply_delay_ms)
    s.fault("apply", n)
    con.execute("COMMIT")
    s.fault("commit", n)
    return "applied"


client.apply_event_in_transaction = apply_event_in_transaction

if __name__ == "__main__":
    client.main()
