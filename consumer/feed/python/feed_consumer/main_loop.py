"""The main loop (consumer/feed/CONTRACT.md, sections 1, 2 and 5): check the environment, open
the store, then connect, subscribe, handle frames and reconnect with backoff until SIGTERM."""

from __future__ import annotations

import errno
import os
import selectors
import signal
import socket
import sqlite3
import time
from typing import TYPE_CHECKING

from .backoff import Reconnects
from .connection import Connection, Session, Stopped, close, log, next_item
from .environment import EXIT_ENV, EXIT_ERROR, EXIT_OK, EnvError
from .store import read_state
from .wire import chain_of, encode_frame

if TYPE_CHECKING:
    from types import ModuleType


def connect(s: Session) -> socket.socket:
    """A non-blocking connect bounded by IDLE_MS (a connect that hangs counts as failed)."""
    host, port = s.config.host, s.config.port
    deadline = time.monotonic() + s.config.idle_ms / 1000
    last_err: Exception = OSError(f"no address for {host}")
    for family, type_, proto, _, addr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, type_, proto)
        sock.setblocking(False)
        try:
            err = sock.connect_ex(addr)
            if err not in (0, errno.EINPROGRESS):
                raise OSError(err, os.strerror(err))
            s.selector.register(sock, selectors.EVENT_WRITE, "connect")
            try:
                while True:
                    if s.stopping:
                        raise Stopped("SIGTERM")
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError(f"connect to {host}:{port} timed out after {s.config.idle_ms} ms")
                    if any(key.data == "connect" for key, _ in s.selector.select(left)):
                        break
            finally:
                s.selector.unregister(sock)
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise OSError(err, os.strerror(err))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except BaseException as err:
            sock.close()
            if isinstance(err, (Stopped, TimeoutError)) or not isinstance(err, OSError):
                raise
            last_err = err
    raise last_err


def run_connection(s: Session) -> tuple[bool, float]:
    """One connection from connect to its end: (a snapshot or an event arrived, end seen at)."""
    try:
        sock = connect(s)
    except Stopped:
        return (False, time.monotonic())
    except OSError as err:
        log(f"cannot connect: {err}")
        return (False, time.monotonic())
    conn = Connection(sock)
    s.conn = conn
    s.selector.register(sock, selectors.EVENT_READ, "conn")
    try:
        cursor, block_hash = s.steps.subscription(s)
        conn.subscribed_null = cursor is None
        s.send(
            encode_frame(
                {
                    "op": "subscribe",
                    "client": s.config.client_id,
                    "topics": list(s.config.topics),
                    "cursor": cursor,
                    "blockHash": block_hash,
                }
            )
        )
        while True:
            item = next_item(s, conn)
            if item[0] == "frame":
                frame = item[1]
                if s.steps.handle_frame(s, frame) == "close":
                    why = f"reset {frame.reason!r}" if frame.op == "reset" else "revoke into the snapshot"
                    close(s, conn, why)
                    log(f"{why}: reconnecting{' for a snapshot' if s.snapshot_needed else ''}")
                    break
                continue
            if item[0] == "invalid":
                log(f"invalid frame, reconnecting: {item[1]}")
            elif item[0] == "idle":
                log(f"nothing received for {s.config.idle_ms} ms: reconnecting")
            elif item[0] == "end":
                log(f"{item[1]}: reconnecting")
            break
    except Stopped:
        pass
    except Exception as err:  # noqa: BLE001 - the normal error path: rolled back where it failed
        log(f"{type(err).__name__}: {err}; reconnecting")
    finally:
        close(s, conn)
        s.conn = None
    return (conn.got_data, conn.end_seen_at)


def run_client(env: dict[str, str], steps: ModuleType) -> int:
    """Check the environment, open the store, then connect, subscribe, handle frames and
    reconnect with backoff until SIGTERM. Returns the exit status. `steps` is the module the
    named steps are looked up in (client.py's, as a mutant may have patched it)."""
    try:
        config = steps.parse_env(env)  # before anything is opened or connected
    except EnvError as err:
        log(f"{err} (exit 64)")
        return EXIT_ENV
    try:
        con = steps.open_store(config.db)
    except (sqlite3.Error, ValueError, OSError) as err:
        log(f"CHAOSLAB_DB={config.db!r} cannot be opened as the feed store: {err} (exit 64)")
        return EXIT_ENV
    stored = read_state(con)
    cursor = stored.cursor or stored.snapshot_cursor
    s = Session(config, con, steps, chain_of(cursor) if cursor else None)

    def on_signal(signum, frame):  # noqa: ARG001
        s.stopping = True  # the wakeup fd interrupts the select in progress

    signal.set_wakeup_fd(s.wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    reconnects = Reconnects()
    try:
        while not s.stopping:
            reconnects.wait_before_connect(s)
            if s.stopping:
                break
            reconnects.ended(*run_connection(s))
        return EXIT_OK
    except Exception as err:  # noqa: BLE001
        log(f"unexpected {type(err).__name__}: {err} (exit 1)")
        return EXIT_ERROR
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()
