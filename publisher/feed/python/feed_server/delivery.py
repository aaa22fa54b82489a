"""What a connection sends next, decided from the outbox alone (server contract, section 3).
Each function is one decision in one read transaction; the connection only carries out the
result (frames, hooks, the reset).

Two positions describe a connection: `read`, how far it has read the outbox, and `held`, the
greatest position its client may already hold (its resume cursor, its snapshot, an event sent
or queued). A reorganisation rewinds `read` to the fork point, and is revoked only when `held`
reaches into it."""

from __future__ import annotations

from dataclasses import dataclass, field

from .outbox import Outbox, Row
from .wire import AFTER_LAST_LOG, BEFORE_FIRST_LOG, Position, encode_event, format_cursor, parse_cursor


@dataclass(frozen=True)
class Tracking:
    read: Position
    held: Position
    reorg_seen: int  # the last reorganisation this connection has dealt with


@dataclass(frozen=True)
class Snapshot:
    position: Position  # the safe point's cursor
    block_hash: str
    balances: dict[str, int]
    head: int  # the chain's head when the snapshot was read
    reorg_seen: int


@dataclass(frozen=True)
class Resume:
    """The answer to a subscribe with a cursor: `stale` says why a reset stale-cursor is due;
    otherwise replay from `start`, after a revoke from `revoke_from` (a block) when set."""

    stale: str | None = None
    start: Position = Position(0, BEFORE_FIRST_LOG)
    revoke_from: int | None = None
    reorg_seen: int = 0


@dataclass
class Delivery:
    tracking: Tracking
    revokes: list[int] = field(default_factory=list)  # fork blocks, in order
    stale: str | None = None  # retention deleted a row this connection never read
    rows: list[Row] = field(default_factory=list)
    caught_up: bool = False  # the rows reach the head


def read_snapshot(outbox: Outbox, topics: tuple[str, ...]) -> Snapshot:
    """The followed accounts' balances at the safe point, with its cursor and hash."""
    with outbox.read():
        position, block_hash = outbox.safe_point()
        balances = outbox.safe_balances(topics)
        return Snapshot(position, block_hash, balances, outbox.head_number(), outbox.latest_reorg_id())


def plan_resume(outbox: Outbox, cursor: str, block_hash: str, topics: tuple[str, ...]) -> Resume:
    """A canonical cursor: rows above it. An abandoned hash: revoke from the fork point, then
    rows from there. Another chain, a hash never seen, a hash of another height, or history
    retention deleted: stale (stale wins over revoke)."""
    chain_id, at = parse_cursor(cursor)
    with outbox.read():
        if chain_id != outbox.chain_id:
            return Resume(stale=f"cursor {cursor} is of chain {chain_id}, this outbox is chain {outbox.chain_id}")
        where = outbox.locate(block_hash)
        if where is None:
            return Resume(stale=f"block hash {block_hash[:80]} was never seen on this chain")
        if where.number != at.block:
            return Resume(stale=f"block hash {block_hash[:80]} is block {where.number}, the cursor says {at.block}")
        start = at if where.canonical else Position(where.fork_number, BEFORE_FIRST_LOG)
        pruned = outbox.pruned_after(start, topics)
        if pruned is not None:
            return Resume(stale=_stale_words(outbox, pruned))
        revoke_from = None if where.canonical else where.fork_number
        return Resume(start=start, revoke_from=revoke_from, reorg_seen=outbox.latest_reorg_id())


def next_delivery(outbox: Outbox, tracking: Tracking, topics: tuple[str, ...], limit: int) -> Delivery:
    """Reorganisations since the last step (revoked where the client holds what they
    abandoned), then at most `limit` rows after `read`, in cursor order."""
    with outbox.read():
        read, held, revokes = tracking.read, tracking.held, []
        reorgs = outbox.reorgs_after(tracking.reorg_seen)
        for reorg in reorgs:
            fork_start = Position(reorg.fork_number, BEFORE_FIRST_LOG)
            if held > fork_start:
                revokes.append(reorg.fork_number)
                held = fork_start
            read = min(read, fork_start)
        reorg_seen = reorgs[-1].id if reorgs else tracking.reorg_seen
        pruned = outbox.pruned_after(read, topics)
        if pruned is not None:
            return Delivery(Tracking(read, held, reorg_seen), revokes, stale=_stale_words(outbox, pruned))
        rows = outbox.rows_after(read, topics, limit)
        caught_up = len(rows) < limit
        # A short page is the end of the outbox: everything up to the head has been read.
        read = Position(outbox.head_number(), AFTER_LAST_LOG) if caught_up else rows[-1].position
        held = rows[-1].position if rows else held
        return Delivery(Tracking(read, held, reorg_seen), revokes, None, rows, caught_up)


def start_after_snapshot(conn, snapshot: Snapshot) -> Tracking | None:  # noqa: ARG001 (a mutant uses conn)
    """Where `conn` goes on reading once its snapshot is queued (None: the step calls
    `conn.follow` itself later). Subscribe, buffer, snapshot, release: the outbox is the buffer,
    so it reads on from the snapshot's cursor, and whatever was committed after it (also while
    the snapshot was being read or sent) comes next."""
    return Tracking(snapshot.position, snapshot.position, snapshot.reorg_seen)


def _stale_words(outbox: Outbox, pruned: tuple[str, Position]) -> str:
    account, position = pruned
    return f"retention deleted {format_cursor(outbox.chain_id, position)} of {account}"


def event_frame(chain_id: int, row: Row) -> bytes:
    """An outbox row as its event frame: a Transfer moves `amount` from `from` to `to`; an
    Approval lets `spender` move up to `amount` of `owner`'s tokens."""
    if row.type == "Transfer":
        parties = {"from": row.from_account, "to": row.to_account}
    else:
        parties = {"owner": row.from_account, "spender": row.to_account}
    payload = {**parties, "amount": row.amount, "txHash": row.tx_hash, "blockHash": row.block_hash}
    return encode_event(format_cursor(chain_id, row.position), row.type, payload)
