#!/usr/bin/env python3
"""Reference ledger-lab consumer (seed 000), standard library only.

Started by the harness as ``python3 consumer/ledger/python/client.py``; everything comes from the
environment (see consumer/ledger/CONTRACT.md). The TypeScript twin is
consumer/ledger/typescript/ledger-client.ts. The order of the steps is the lesson:
parse strictly -> BEGIN IMMEDIATE -> read last inside the transaction -> decide -> write
-> COMMIT -> (fault point ack) -> ACK.

Each step is a module-level function looked up by name at call time, so a mutant in
consumer/ledger/mutants/ imports this module and replaces one of them (never a copy of this file).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import sys
from dataclasses import dataclass, field

MAX_LINE_BYTES = 64  # including the LF
MIN_DELTA, MAX_DELTA = -1000, 1000
# Same bound as the TypeScript consumer: a seq that matched the grammar but is this large
# is "too large to store" and reported as malformed, never wrapped or rounded.
MAX_SEQ = 2**53 - 1

EXIT_OK, EXIT_ERROR, EXIT_MALFORMED, EXIT_GAP, EXIT_CONFLICT = 0, 1, 2, 3, 4
EXIT_TIMEOUT, EXIT_CONNECTION, EXIT_RESYNC, EXIT_ENV, EXIT_INJECTED = 5, 6, 7, 64, 86

# Byte patterns: [0-9] on bytes is ASCII only (int() would also accept e.g. '１').
EVENT_RE = re.compile(rb"EVENT (0|[1-9][0-9]*) (0|-?[1-9][0-9]*)\n")
RESYNC_RE = re.compile(rb"RESYNC (0|[1-9][0-9]*)\n")
FAULT_RE = re.compile(r"(exit|raise|stop)@(apply|ack):(0|[1-9][0-9]*)")


class EnvError(Exception):
    code = EXIT_ENV


class Malformed(Exception):
    code = EXIT_MALFORMED


class Gap(Exception):
    code = EXIT_GAP


class Conflict(Exception):
    code = EXIT_CONFLICT


class Timeout(Exception):
    code = EXIT_TIMEOUT


class ConnectionFailed(Exception):
    code = EXIT_CONNECTION


class ResyncRequired(Exception):
    code = EXIT_RESYNC


class InjectedFault(Exception):
    code = EXIT_ERROR


def exit_code_for(err: BaseException) -> int:
    return getattr(err, "code", EXIT_ERROR)


# ------------------------------------------------------------------ environment


@dataclass(frozen=True)
class Fault:
    action: str
    point: str
    seq: int


@dataclass(frozen=True)
class Config:
    host: str
    port: int
    db: str
    timeout: float  # seconds, per network await
    faults: tuple[Fault, ...] = field(default_factory=tuple)


def parse_fault_plan(text: str | None) -> tuple[Fault, ...]:
    """Unset means no faults; an empty or unparsable plan is an invalid environment."""
    if text is None:
        return ()
    if text == "":
        raise EnvError("CHAOSLAB_FAULT is set but empty (unset it for no faults)")
    faults = []
    for item in text.split(","):
        m = FAULT_RE.fullmatch(item)
        if not m or int(m.group(3)) > MAX_SEQ:
            raise EnvError(f"CHAOSLAB_FAULT item {item!r} is not <exit|raise|stop>@<apply|ack>:<seq>")
        faults.append(Fault(m.group(1), m.group(2), int(m.group(3))))
    return tuple(faults)


def _positive_int(env: dict[str, str], name: str, maximum: int) -> int:
    text = env.get(name)
    if not text:
        raise EnvError(f"{name} is missing")
    # str.isdigit() and int() accept non-ASCII digits and '+', '_': use the ASCII grammar.
    if not re.fullmatch(r"[1-9][0-9]*", text) or int(text) > maximum:
        raise EnvError(f"{name}={text!r} is not an integer in 1..{maximum}")
    return int(text)


def parse_env(env: dict[str, str]) -> Config:
    """Validates the whole environment before anything is opened or connected."""
    host = env.get("CHAOSLAB_HOST")
    if not host:
        raise EnvError("CHAOSLAB_HOST is missing")
    port = _positive_int(env, "CHAOSLAB_PORT", 65535)
    db = env.get("CHAOSLAB_DB")
    if not db:
        raise EnvError("CHAOSLAB_DB is missing")
    timeout_ms = _positive_int(env, "CHAOSLAB_TIMEOUT_MS", 2**31 - 1)
    return Config(host, port, db, timeout_ms / 1000, parse_fault_plan(env.get("CHAOSLAB_FAULT")))


def fire_faults(faults: tuple[Fault, ...], point: str, seq: int) -> None:
    for f in faults:
        if f.point != point or f.seq != seq:
            continue
        if f.action == "exit":
            os._exit(EXIT_INJECTED)  # no finally, no close: a real crash
        if f.action == "raise":
            raise InjectedFault(f"injected raise at {point}:{seq}")
        if f.action == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)  # continues here after SIGCONT


# ------------------------------------------------------------------ steps


def parse_line(line: bytes) -> tuple[str, int, int]:
    """Returns ("event", seq, delta) or ("resync", first_available, 0); raises Malformed."""
    # asyncio's limit=64 still hands us a 65-byte line, so the length is checked here.
    if len(line) > MAX_LINE_BYTES:
        raise Malformed(f"line longer than {MAX_LINE_BYTES} bytes: {line[:80]!r}")
    m = EVENT_RE.fullmatch(line)
    if m:
        seq, delta = int(m.group(1)), int(m.group(2))
        if seq > MAX_SEQ:
            raise Malformed(f"seq {seq} is too large: {line!r}")
        if not MIN_DELTA <= delta <= MAX_DELTA:
            raise Malformed(f"delta {delta} outside {MIN_DELTA}..{MAX_DELTA}: {line!r}")
        return ("event", seq, delta)
    m = RESYNC_RE.fullmatch(line)
    if m:
        return ("resync", int(m.group(1)), 0)
    raise Malformed(f'not "EVENT <seq> <delta>" or "RESYNC <seq>": {line!r}')


def open_store(path: str) -> sqlite3.Connection:
    """Creates the tables and the row (1, -1, 0) only when absent: a restart never resets last."""
    # isolation_level=None: no implicit BEGIN, so BEGIN/COMMIT/ROLLBACK below are the only ones.
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute(
            "CREATE TABLE IF NOT EXISTS checkpoint("
            "id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL)"
        )
        con.execute("CREATE TABLE IF NOT EXISTS ledger(seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL)")
        con.execute("INSERT OR IGNORE INTO checkpoint(id, last, total) VALUES (1, -1, 0)")
        con.execute("COMMIT")
        return con
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()
        raise


class Session:
    def __init__(self, config: Config, con: sqlite3.Connection, writer: asyncio.StreamWriter):
        self.config = config
        self.con = con
        self.writer = writer

    def fault(self, point: str, seq: int) -> None:
        fire_faults(self.config.faults, point, seq)

    async def send(self, text: str) -> None:
        self.writer.write(text.encode("ascii"))
        await with_timeout("write", self.config.timeout, self.writer.drain())


def resume_from(con: sqlite3.Connection) -> int:
    """The cursor for RESUME <last>: the last committed in the store, never a fresh -1."""
    (last,) = con.execute("SELECT last FROM checkpoint WHERE id = 1").fetchone()
    return last


async def apply_event(s: Session, seq: int, delta: int) -> str:
    """One BEGIN IMMEDIATE transaction around apply_in_transaction. Any error rolls back."""
    con = s.con
    con.execute("BEGIN IMMEDIATE")
    try:
        return await apply_in_transaction(s, seq, delta)
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


async def apply_in_transaction(s: Session, seq: int, delta: int) -> str:
    """The body of apply_event's transaction; last is read inside it. commit_and_ack ends it."""
    con = s.con
    (last,) = con.execute("SELECT last FROM checkpoint WHERE id = 1").fetchone()
    if seq <= last:
        row = con.execute("SELECT delta FROM ledger WHERE seq = ?", (seq,)).fetchone()
        # A reused seq with other content (or one we never stored) is not a duplicate.
        if row is None or row[0] != delta:
            stored = "no row" if row is None else f"delta {row[0]}"
            raise Conflict(f"seq {seq} with delta {delta} is at or below last={last}, ledger has {stored}")
        outcome = "duplicate"
    elif seq > last + 1:
        # Jumping ahead would make the missing events look processed.
        raise Gap(f"got seq {seq} but last committed is {last} (expected {last + 1})")
    else:
        con.execute("INSERT INTO ledger(seq, delta) VALUES (?, ?)", (seq, delta))
        con.execute("UPDATE checkpoint SET total = total + ? WHERE id = 1", (delta,))
        s.fault("apply", seq)  # total changed, last not yet: the grader looks from outside here
        con.execute("UPDATE checkpoint SET last = ? WHERE id = 1", (seq,))
        outcome = "applied"
    await commit_and_ack(s, seq, outcome)
    return outcome


async def commit_and_ack(s: Session, seq: int, outcome: str) -> None:
    """COMMIT, then the ack fault point (new events only), then ACK: never ACK before COMMIT."""
    s.con.execute("COMMIT")
    if outcome == "applied":
        s.fault("ack", seq)
    await s.send(f"ACK {seq}\n")


async def consume_line(s: Session, line: bytes) -> None:
    kind, seq, delta = parse_line(line)
    if kind == "resync":
        raise ResyncRequired(f"publisher demands a resync (first available seq {seq})")
    await apply_event(s, seq, delta)


# ------------------------------------------------------------------ network


# asyncio.timeout (3.11+) bounds an await in place; wait_for runs the awaitable as a task of its own
# (in 3.11, a task and a loop iteration more for every line and every ACK).
_timeout = getattr(asyncio, "timeout", None)


async def with_timeout(what: str, seconds: float, awaitable):
    try:
        if _timeout is None:
            return await asyncio.wait_for(awaitable, seconds)
        async with _timeout(seconds):
            return await awaitable
    except asyncio.TimeoutError:
        raise Timeout(f"timed out after {seconds * 1000:.0f} ms waiting to {what}") from None
    except (ConnectionError, OSError) as err:
        raise ConnectionFailed(f"connection error while waiting to {what}: {err}") from None


async def read_line(reader: asyncio.StreamReader, timeout: float) -> bytes | None:
    """A complete line, or None when the publisher closed at a line boundary."""
    try:
        return await with_timeout("read a line", timeout, reader.readuntil(b"\n"))
    except asyncio.IncompleteReadError as err:
        if err.partial:
            raise Malformed(f"stream ended inside a line (no LF): {err.partial[:80]!r}") from None
        return None
    except asyncio.LimitOverrunError as err:
        raise Malformed(f"no LF within {MAX_LINE_BYTES} bytes ({err})") from None


async def run_client(env: dict[str, str]) -> int:
    """One process = one session; never reconnects (a reconnect is a new process)."""
    try:
        config = parse_env(env)  # before anything is opened or connected
    except EnvError as err:
        return report(err)
    con = None
    writer = None
    try:
        con = open_store(config.db)
        try:
            # limit=64: the reader never buffers much more than one maximal line.
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(config.host, config.port, limit=MAX_LINE_BYTES), config.timeout
            )
        except asyncio.TimeoutError:
            raise Timeout(f"timed out connecting to {config.host}:{config.port}") from None
        except OSError as err:
            raise ConnectionFailed(f"cannot connect to {config.host}:{config.port}: {err}") from None
        s = Session(config, con, writer)
        await s.send(f"RESUME {resume_from(con)}\n")
        while True:
            line = await read_line(reader, config.timeout)
            if line is None:
                return EXIT_OK  # publisher closed at a line boundary, everything handled
            await consume_line(s, line)
    except Exception as err:  # noqa: BLE001 - every failure becomes a reported exit code
        return report(err)
    finally:
        if writer is not None:
            writer.close()  # at once: no later line on this connection is processed
            try:
                await asyncio.wait_for(writer.wait_closed(), config.timeout)
            except Exception:  # noqa: BLE001 - a reset while closing changes nothing
                pass
        if con is not None:
            con.close()


def report(err: BaseException) -> int:
    code = exit_code_for(err)
    print(f"ledger consumer: {type(err).__name__}: {err} (exit {code})", file=sys.stderr)
    return code


def main() -> None:
    sys.exit(asyncio.run(run_client(dict(os.environ))))


if __name__ == "__main__":
    main()
