"""The store (consumer/feed/CONTRACT.md, sections 3 and 4): the SQLite schema, and every frame
that changes it applied in ONE transaction together with the cursor: event, snapshot, revoke."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .wire import Frame, is_cursor

if TYPE_CHECKING:
    from .connection import Session

BUSY_TIMEOUT_S = 1.5  # short, so a lock held elsewhere cannot delay SIGTERM past 2 s

SCHEMA = """
CREATE TABLE IF NOT EXISTS feed_state (id INTEGER PRIMARY KEY CHECK (id = 1),
  cursor TEXT, block_hash TEXT,
  snapshot_cursor TEXT, snapshot_block_hash TEXT);
CREATE TABLE IF NOT EXISTS feed_events (cursor TEXT PRIMARY KEY, type TEXT NOT NULL,
  payload TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS feed_balances (account TEXT PRIMARY KEY, amount TEXT NOT NULL);
INSERT OR IGNORE INTO feed_state (id) VALUES (1);
"""


@dataclass
class FeedState:
    cursor: str | None
    block_hash: str | None
    snapshot_cursor: str | None
    snapshot_block_hash: str | None


def read_state(con: sqlite3.Connection) -> FeedState:
    row = con.execute(
        "SELECT cursor, block_hash, snapshot_cursor, snapshot_block_hash FROM feed_state WHERE id = 1"
    ).fetchone()
    return FeedState(*row) if row else FeedState(None, None, None, None)


def open_store(path: str) -> sqlite3.Connection:
    """Creates the tables and the row (1, NULL, NULL, NULL, NULL) only when absent, never
    resetting what an earlier process committed; refuses a file that is not such a store."""
    # isolation_level=None: no implicit BEGIN, so BEGIN/COMMIT/ROLLBACK below are the only ones.
    con = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    try:
        con.execute("BEGIN IMMEDIATE")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                con.execute(statement)
        con.execute("COMMIT")
        con.execute("SELECT cursor, type, payload FROM feed_events LIMIT 0").fetchall()
        con.execute("SELECT account, amount FROM feed_balances LIMIT 0").fetchall()
        st = read_state(con)
        for c in (st.cursor, st.snapshot_cursor):
            if c is not None and not is_cursor(c):
                raise ValueError(f"the stored cursor {c!r} is not a cursor")
        return con
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()
        raise


def balance_of(con: sqlite3.Connection, account: str) -> int:
    row = con.execute("SELECT amount FROM feed_balances WHERE account = ?", (account,)).fetchone()
    return 0 if row is None else int(row[0])


def add_balance(con: sqlite3.Connection, account: str, delta: int) -> None:
    amount = balance_of(con, account) + delta
    con.execute("INSERT OR REPLACE INTO feed_balances (account, amount) VALUES (?, ?)", (account, str(amount)))


def stored_transfer(payload: str) -> tuple[str, str, int]:
    p = json.loads(payload)
    return (p["from"], p["to"], int(p["amount"]))


def apply_event(s: Session, ev: Frame) -> str:
    """BEGIN IMMEDIATE around apply_event_in_transaction; any error rolls back."""
    con = s.con
    con.execute("BEGIN IMMEDIATE")
    try:
        return s.steps.apply_event_in_transaction(s, ev)
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def apply_event_in_transaction(s: Session, ev: Frame) -> str:
    """The cursor is read inside the transaction; the event, its balance changes and the new
    cursor become visible together at COMMIT, or not at all."""
    con = s.con
    cursor = read_state(con).cursor
    if cursor is not None and ev.cursor <= cursor:
        con.execute("COMMIT")  # a resend: nothing changed, no hook
        return "duplicate"
    s.counters["apply"] += 1
    n = s.counters["apply"]
    con.execute("INSERT INTO feed_events (cursor, type, payload) VALUES (?, ?, ?)", (ev.cursor, ev.type, ev.payload))
    if ev.transfer is not None:
        for account, delta in s.steps.balance_effect(s, ev.transfer).items():
            add_balance(con, account, delta)
    con.execute("UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1", (ev.cursor, ev.block_hash))
    if s.config.apply_delay_ms > 0:
        s.pause(s.config.apply_delay_ms)  # the slow reader: still reading, answering, pinging
    s.fault("apply", n)
    con.execute("COMMIT")
    s.fault("commit", n)
    return "applied"


def balance_effect(s: Session, transfer: tuple[str, str, int]) -> dict[str, int]:
    """+amount for a followed `to`, -amount for a followed `from`; a self-transfer changes nothing."""
    frm, to, amount = transfer
    effect: dict[str, int] = {}
    if frm == to:
        return effect
    if to in s.followed:
        effect[to] = amount
    if frm in s.followed:
        effect[frm] = -amount
    return effect


def install_snapshot(s: Session, snap: Frame) -> None:
    con = s.con
    con.execute("BEGIN IMMEDIATE")
    try:
        s.counters["snapshot"] += 1
        n = s.counters["snapshot"]
        con.execute("DELETE FROM feed_events")
        con.execute("DELETE FROM feed_balances")
        for account in s.config.topics:
            amount = str(snap.balances.get(account, 0))  # absent: "0"
            con.execute("INSERT INTO feed_balances (account, amount) VALUES (?, ?)", (account, amount))
        con.execute(
            "UPDATE feed_state SET cursor = ?, block_hash = ?,"
            " snapshot_cursor = ?, snapshot_block_hash = ? WHERE id = 1",
            (snap.cursor, snap.block_hash, snap.cursor, snap.block_hash),
        )
        s.fault("snapshot", n)
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    s.snapshot_needed = False


def revoke(s: Session, from_cursor: str) -> str:
    """Above the snapshot: one transaction deletes the events at or after from_cursor, undoes
    their balance changes and moves the cursor back. At or below it: no transaction, and the
    next subscribe asks for a snapshot. Returns "revoked" or "snapshot-needed"."""
    con = s.con
    snapshot_cursor = read_state(con).snapshot_cursor
    if snapshot_cursor is not None and from_cursor <= snapshot_cursor:
        s.snapshot_needed = True
        return "snapshot-needed"
    con.execute("BEGIN IMMEDIATE")
    try:
        s.counters["revoke"] += 1
        n = s.counters["revoke"]
        st = read_state(con)
        gone = con.execute(
            "SELECT type, payload FROM feed_events WHERE cursor >= ? ORDER BY cursor DESC", (from_cursor,)
        ).fetchall()
        for type_, payload in gone:
            if type_ == "Transfer":
                for account, delta in s.steps.balance_effect(s, stored_transfer(payload)).items():
                    add_balance(con, account, -delta)
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
