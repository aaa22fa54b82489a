"""The reference's named steps that need the session (consumer/feed/CONTRACT.md, sections 2, 4
and 5): the one-chain rule, the subscribe's cursor, what each frame does, reset, pong."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .store import read_state
from .wire import Frame, InvalidFrame, chain_of, encode_ping_pong

if TYPE_CHECKING:
    from .connection import Connection, Session


def accept_frame(s: Session, conn: Connection, frame: Frame) -> None:
    """The one-chain rule and "a snapshot first after cursor: null"; raises InvalidFrame."""
    if frame.op in ("event", "snapshot", "revoke"):
        chain = chain_of(frame.cursor)
        if s.chain_id is not None and chain != s.chain_id:
            raise InvalidFrame(f"chain id {chain} differs from this run's chain id {s.chain_id}")
        if conn.subscribed_null and not conn.saw_snapshot and frame.op != "snapshot":
            raise InvalidFrame(f"{frame.op} before the snapshot that answers cursor: null")
        s.chain_id = chain
    if frame.op == "snapshot":
        conn.saw_snapshot = True


def subscription(s: Session) -> tuple[str | None, str | None]:
    """(cursor, blockHash) for the next subscribe: the durable ones, or both None."""
    if s.snapshot_needed:
        return (None, None)
    st = read_state(s.con)
    if st.cursor is None or st.block_hash is None:
        return (None, None)
    return (st.cursor, st.block_hash)


def handle_frame(s: Session, frame: Frame) -> str:
    """Returns "continue" or "close"."""
    if frame.op == "event":
        s.steps.apply_event(s, frame)
    elif frame.op == "snapshot":
        s.steps.install_snapshot(s, frame)
    elif frame.op == "revoke":
        if s.steps.revoke(s, frame.cursor) == "snapshot-needed":
            return "close"
    elif frame.op == "reset":
        s.steps.on_reset(s, frame.reason)
        return "close"  # the server closes at once; so do we
    return "continue"


def on_reset(s: Session, reason: str) -> None:
    """stale-cursor: the next subscribe asks for a snapshot. Any other reason: resume from the store."""
    if reason == "stale-cursor":
        s.snapshot_needed = True


def answer_ping(s: Session, id_text: str) -> None:
    s.send(encode_ping_pong("pong", id_text))
