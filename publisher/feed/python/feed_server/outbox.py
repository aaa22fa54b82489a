"""The outbox database (server contract, section 2): the only thing the server reads, and all
it knows of the chain. Opened read-only (a `file:...?mode=ro` URI: this process can never write
it); every decision groups its queries in one read transaction (`with outbox.read():`), so it
is about a state of the chain that really existed. Replay is paged: a page is never larger than
the caller asks for, so a client far behind is never loaded whole into memory."""

from __future__ import annotations

import pathlib
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, TypeVar

from .wire import Position


class OutboxError(Exception):
    pass


@dataclass(frozen=True)
class Row:
    """One log of the canonical chain, as the indexer wrote it."""

    position: Position
    block_hash: str
    tx_hash: str
    type: str
    from_account: str  # Transfer: the sender; Approval: the owner
    to_account: str  # Transfer: the recipient; Approval: the spender
    amount: str  # canonical decimal text: uint256 does not fit an SQLite integer


@dataclass(frozen=True)
class Reorg:
    id: int
    fork_number: int  # the first abandoned block


@dataclass(frozen=True)
class HashLocation:
    number: int  # the block's number
    canonical: bool
    fork_number: int  # abandoned: the first block where its branch left the chain


_READ_ATTEMPTS = 100  # of a read transaction's start, 1 ms apart (see _again_if_mid_commit)
T = TypeVar("T")
_ROW_COLUMNS = "block_number, log_index, block_hash, tx_hash, type, from_account, to_account, amount"
# The accounts a connection follows travel as one JSON array parameter.
_INVOLVES = "(from_account IN (SELECT value FROM json_each(?)) OR to_account IN (SELECT value FROM json_each(?)))"


class Outbox:
    def __init__(self, path: str):
        uri = pathlib.Path(path).absolute().as_uri() + "?mode=ro"
        try:
            # Autocommit: the read transactions below are explicit BEGIN ... COMMIT.
            self.db = sqlite3.connect(uri, uri=True, isolation_level=None)
            row = self.db.execute("SELECT chain_id FROM chain").fetchone()
        except sqlite3.Error as err:
            raise OutboxError(f"{path} cannot be read as an outbox: {err}") from None
        if row is None:
            raise OutboxError(f"{path} has no chain row: not an outbox")
        self.chain_id: int = row[0]

    @contextmanager
    def read(self):
        """One read transaction: every query inside sees the same committed state."""
        self._begin()
        try:
            yield self
        finally:
            self.db.execute("COMMIT")  # a read transaction has nothing to keep or undo

    def _begin(self) -> None:
        """BEGIN, and the transaction's first read, which fixes the state it sees."""

        def begin() -> None:
            self.db.execute("BEGIN")
            try:
                self.db.execute("SELECT 1 FROM chain LIMIT 1").fetchone()
            except sqlite3.OperationalError:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise

        _again_if_mid_commit(begin)

    def data_version(self) -> int:
        """Changes whenever another connection (the indexer) commits: the cheap poll."""
        return _again_if_mid_commit(lambda: self.db.execute("PRAGMA data_version").fetchone()[0])

    def head_number(self) -> int:
        sql = "SELECT max(number) FROM blocks WHERE chain_id = ? AND canonical = 1"
        return self.db.execute(sql, (self.chain_id,)).fetchone()[0]

    def safe_point(self) -> tuple[Position, str]:
        """The confirmed height snapshots are taken at: its cursor (the block's last log) and hash."""
        sql = "SELECT block_number, log_index, block_hash FROM safe_point WHERE chain_id = ?"
        number, log_index, block_hash = self.db.execute(sql, (self.chain_id,)).fetchone()
        return Position(number, log_index), block_hash

    def safe_balances(self, accounts: tuple[str, ...]) -> dict[str, int]:
        """Every account's balance at the safe point; an account never seen holds 0."""
        sql = "SELECT amount FROM safe_balances WHERE chain_id = ? AND account = ?"
        balances = {}
        for account in accounts:
            row = self.db.execute(sql, (self.chain_id, account)).fetchone()
            balances[account] = int(row[0]) if row else 0
        return balances

    def locate(self, block_hash: str) -> HashLocation | None:
        """Where a block hash stands: on the chain, or on an abandoned branch (followed back
        through parent links to where it left the chain); None for a hash never seen."""
        sql = "SELECT number, parent_hash, canonical FROM blocks WHERE chain_id = ? AND hash = ?"
        start = self.db.execute(sql, (self.chain_id, block_hash)).fetchone()
        if start is None:
            return None
        block = start
        while block is not None and not block[2]:
            block = self.db.execute(sql, (self.chain_id, block[1])).fetchone()
        if block is None:
            return None  # a branch that never joins the chain: nothing we can place
        return HashLocation(start[0], bool(start[2]), block[0] + 1)

    def rows_after(self, after: Position, accounts: tuple[str, ...], limit: int) -> list[Row]:
        """One page: at most `limit` rows after `after` that involve one of `accounts`, in cursor order."""
        sql = (
            f"SELECT {_ROW_COLUMNS} FROM outbox WHERE chain_id = ? AND (block_number, log_index) > (?, ?)"
            f" AND {_INVOLVES} ORDER BY block_number, log_index LIMIT ?"
        )
        topics = _json_array(accounts)
        rows = self.db.execute(sql, (self.chain_id, after.block, after.log_index, topics, topics, limit))
        return [Row(Position(r[0], r[1]), *r[2:]) for r in rows]

    def latest_reorg_id(self) -> int:
        sql = "SELECT coalesce(max(id), 0) FROM reorgs WHERE chain_id = ?"
        return self.db.execute(sql, (self.chain_id,)).fetchone()[0]

    def reorgs_after(self, reorg_id: int) -> list[Reorg]:
        sql = "SELECT id, fork_number FROM reorgs WHERE chain_id = ? AND id > ? ORDER BY id"
        return [Reorg(*r) for r in self.db.execute(sql, (self.chain_id, reorg_id))]

    def pruned_after(self, after: Position, accounts: tuple[str, ...]) -> tuple[str, Position] | None:
        """A row of one of `accounts` that retention deleted after `after`: history a client
        reading from `after` can no longer get whole. (account, its greatest deleted position)."""
        sql = (
            "SELECT account, block_number, log_index FROM pruned WHERE chain_id = ?"
            " AND account IN (SELECT value FROM json_each(?)) AND (block_number, log_index) > (?, ?)"
            " ORDER BY block_number DESC, log_index DESC LIMIT 1"
        )
        row = self.db.execute(sql, (self.chain_id, _json_array(accounts), after.block, after.log_index)).fetchone()
        return None if row is None else (row[0], Position(row[1], row[2]))

    def close(self) -> None:
        self.db.close()


def _again_if_mid_commit(read: Callable[[], T]) -> T:
    """This process may not write the outbox's `-shm` file (a sealed run), so SQLite cannot
    repair a WAL index it caught in the middle of the indexer's commit: it says
    SQLITE_READONLY_RECOVERY ("attempt to write a readonly database") instead of waiting. That
    is transient: read again, a moment later."""
    for attempt in range(_READ_ATTEMPTS):
        try:
            return read()
        except sqlite3.OperationalError as err:
            if not _caught_mid_commit(err) or attempt == _READ_ATTEMPTS - 1:
                raise
            time.sleep(0.001)
    raise AssertionError("unreachable")


def _caught_mid_commit(err: sqlite3.OperationalError) -> bool:
    # Python before 3.11 has no error names; the message is SQLITE_READONLY's.
    name = getattr(err, "sqlite_errorname", None)
    return name == "SQLITE_READONLY_RECOVERY" if name else "readonly database" in str(err)


def _json_array(accounts: tuple[str, ...]) -> str:
    return "[" + ",".join(f'"{a}"' for a in accounts) + "]"  # accounts are checked 0x + hex digits


def open_outbox(path: str) -> Outbox:
    return Outbox(path)
