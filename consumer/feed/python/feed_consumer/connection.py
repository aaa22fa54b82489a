"""One TCP connection and the session that reads it (consumer/feed/CONTRACT.md, sections 2 and
5): frames checked and queued as they come, pings answered at once, idleness judged fairly."""

from __future__ import annotations

import os
import selectors
import socket
import sqlite3
import sys
import time
from collections import deque
from typing import TYPE_CHECKING

from .hooks import fire_faults
from .wire import MAX_LINE_BYTES, InvalidFrame, encode_ping_pong

if TYPE_CHECKING:
    from types import ModuleType

    from .environment import Config

QUEUE_HIGH_FRAMES = 256  # read-ahead bound: past it we stop reading and TCP pushes back
QUEUE_HIGH_BYTES = 4 * 1024 * 1024
READ_CHUNK = 65536


class Stopped(Exception):
    """SIGTERM arrived while we were waiting."""


def log(msg: str) -> None:
    print(f"feed consumer: {msg}", file=sys.stderr, flush=True)


class Connection:
    """One TCP connection: bytes read as they come (pings answered at once), split into
    frames, checked and queued in arrival order; the queue is bounded (past it we stop
    reading, and TCP pushes back on the server)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()  # an unterminated line
        self.out = bytearray()  # written but not yet taken by the kernel
        self.queue: deque = deque()  # ("frame", Frame, size) or ("invalid", reason)
        self.queued_bytes = 0
        self.reading = True
        self.done = False  # nothing more will be read: end, error, a terminal frame, our close
        self.end_reason = ""
        self.end_seen_at = 0.0
        self.last_rx = self.last_tx = time.monotonic()
        self.subscribed_null = False
        self.saw_snapshot = False
        self.got_data = False  # a snapshot or an event arrived (moves the backoff's n back to 0)


class Session:
    """What one consumer process holds while it runs. `steps` is the module every named step is
    looked up in at call time (client.py, or a mutant's patched copy of its names)."""

    def __init__(self, config: Config, con: sqlite3.Connection, steps: ModuleType, chain_id: str | None):
        self.config = config
        self.con = con
        self.steps = steps
        self.followed = frozenset(config.topics)
        self.snapshot_needed = False  # in memory only
        self.chain_id = chain_id  # of the stored cursor (main_loop reads it), None before the first frame
        self.counters = {"apply": 0, "revoke": 0, "snapshot": 0}
        self.conn: Connection | None = None
        self.stopping = False
        self.ping_id = 0
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")

    def fault(self, point: str, n: int) -> None:
        fire_faults(self.config.faults, point, n)

    def send(self, data: bytes) -> None:
        conn = self.conn
        if conn is None or conn.done:
            return
        conn.out += data
        conn.last_tx = time.monotonic()
        flush(self, conn)

    def pause(self, ms: float) -> None:
        """Waits ms while the connection keeps reading and pinging; raises Stopped on SIGTERM."""
        deadline = time.monotonic() + ms / 1000
        while True:
            if self.stopping:
                raise Stopped("SIGTERM")
            left = deadline - time.monotonic()
            if left <= 0:
                return
            pump(self, left)


def flush(s: Session, conn: Connection) -> None:
    while conn.out and not conn.done:
        try:
            sent = conn.sock.send(conn.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as err:
            finish(s, conn, f"connection error: {err}")
            return
        del conn.out[:sent]


def finish(s: Session, conn: Connection, reason: str) -> None:
    if not conn.done:
        conn.done = True
        conn.end_reason = reason
        conn.end_seen_at = time.monotonic()
        if conn.buf:
            log(f"discarded {len(conn.buf)} bytes of an unterminated line")
        try:
            s.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass


def close(s: Session, conn: Connection, reason: str = "closed by the consumer") -> None:
    """Closes the connection at once; nothing more is read from it."""
    finish(s, conn, reason)
    try:
        conn.sock.close()
    except OSError:
        pass


def terminal(s: Session, conn: Connection, item: tuple) -> None:
    """Queues the last item of this connection (after what came before it) and closes."""
    conn.queue.append(item)
    close(s, conn, f"invalid frame: {item[1]}" if item[0] == "invalid" else "reset")


def on_line(s: Session, conn: Connection, line: bytes) -> None:
    try:
        frame = s.steps.parse_frame(line)
        s.steps.accept_frame(s, conn, frame)
    except InvalidFrame as err:
        terminal(s, conn, ("invalid", str(err)))
        return
    if frame.op == "ping":
        s.steps.answer_ping(s, frame.id)  # at once, also while a transaction waits
        return
    if frame.op in ("pong", "unknown"):
        return  # every byte already counted as a sign of life
    item = ("frame", frame, len(line))
    if frame.op == "reset":
        terminal(s, conn, item)  # the server closes at once
        return
    if frame.op in ("event", "snapshot"):
        conn.got_data = True
    conn.queue.append(item)
    conn.queued_bytes += len(line)


def on_readable(s: Session, conn: Connection) -> None:
    try:
        chunk = conn.sock.recv(READ_CHUNK)
    except (BlockingIOError, InterruptedError):
        return
    except OSError as err:
        finish(s, conn, f"connection error: {err}")
        return
    if not chunk:
        finish(s, conn, "the server closed the connection")
        return
    conn.last_rx = time.monotonic()
    pos = 0
    while not conn.done:
        lf = chunk.find(b"\n", pos)
        if lf == -1:
            conn.buf += chunk[pos:]
            if len(conn.buf) > MAX_LINE_BYTES:  # can never become a valid line: refuse at once
                terminal(s, conn, ("invalid", f"no LF within {MAX_LINE_BYTES} bytes"))
            break
        if len(conn.buf) + lf - pos > MAX_LINE_BYTES:
            terminal(s, conn, ("invalid", f"line longer than {MAX_LINE_BYTES} bytes"))
            break
        line = bytes(conn.buf) + chunk[pos:lf]
        conn.buf.clear()
        pos = lf + 1
        on_line(s, conn, line)
    if len(conn.queue) >= QUEUE_HIGH_FRAMES or conn.queued_bytes >= QUEUE_HIGH_BYTES:
        conn.reading = False


def pump(s: Session, timeout: float) -> bool:
    """One wait (at most timeout seconds) on the socket, the SIGTERM pipe and the ping timer.
    Reads what arrived (answering pings at once), writes what is pending, sends a ping when
    due. Returns True when the socket was readable."""
    conn = s.conn
    readable = False
    if conn is not None and not conn.done:
        mask = (selectors.EVENT_READ if conn.reading else 0) | (selectors.EVENT_WRITE if conn.out else 0)
        ping_at = conn.last_tx + s.config.ping_ms / 1000
        timeout = max(0.0, min(timeout, ping_at - time.monotonic()))
        registered = conn.sock in s.selector.get_map()
        if mask and registered:
            s.selector.modify(conn.sock, mask, "conn")
        elif mask:
            s.selector.register(conn.sock, mask, "conn")
        elif registered:
            s.selector.unregister(conn.sock)
    for key, events in s.selector.select(max(0.0, timeout)):
        if key.data == "wake":
            try:
                while os.read(s.wake_r, 512):
                    pass
            except BlockingIOError:
                pass
        elif conn is not None and not conn.done:
            if events & selectors.EVENT_WRITE:
                flush(s, conn)
            if events & selectors.EVENT_READ:
                readable = True
                on_readable(s, conn)
    if conn is not None and not conn.done and time.monotonic() - conn.last_tx >= s.config.ping_ms / 1000:
        s.ping_id += 1
        s.send(encode_ping_pong("ping", str(s.ping_id)))
    return readable


def next_item(s: Session, conn: Connection) -> tuple:
    """The next frame in arrival order, or ("end", reason), ("idle",), ("stop",).
    Idleness is decided only after a wait that found the socket with nothing to read: time
    spent committing is not the server's silence."""
    while True:
        if conn.queue:
            item = conn.queue.popleft()
            if item[0] == "frame":
                conn.queued_bytes -= item[2]
            return item
        if s.stopping:
            return ("stop",)
        if conn.done:
            return ("end", conn.end_reason)
        if not conn.reading:
            conn.reading = True  # caught up: read again, and count silence from now on
            conn.last_rx = time.monotonic()
        idle_at = conn.last_rx + s.config.idle_ms / 1000
        readable = pump(s, idle_at - time.monotonic())
        if not readable and not conn.queue and not conn.done and time.monotonic() >= idle_at:
            return ("idle",)
