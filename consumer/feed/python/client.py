#!/usr/bin/env python3
"""Reference feed-lab consumer (seed 002, T18 "real-time systems"), standard library only.

Started as ``python3 consumer/feed/python/client.py``; everything comes from the environment
(see consumer/feed/CONTRACT.md). The TypeScript twin is consumer/feed/typescript/feed-client.ts.
The lesson: realtime is a latency property, not losing anything is a correctness property, and
they need different mechanisms:

- a durable cursor (and its block hash) in every subscribe, a snapshot only when one is needed,
  duplicates dropped by cursor;
- every frame that changes the store handled in ONE transaction together with the cursor;
- revoke undoes the events of abandoned blocks, reset starts over explicitly;
- heartbeats both ways, an idle timeout that reads before it judges, and reconnects with
  jittered exponential backoff.

One thread, one ``selectors`` loop: the socket, the ping timer, the idle timeout and a wakeup
pipe for SIGTERM are all waited for in ``pump``. Each step is a module-level function looked up
by name at call time, so a mutant imports this module and replaces one of them (never a copy).
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
import selectors
import signal
import socket
import sqlite3
import sys
import time
from collections import deque
from dataclasses import dataclass

MAX_LINE_BYTES = 1024 * 1024  # the LF not counted
MAX_DEPTH = 64  # JSON nesting; the TypeScript twin has the same bound
MAX_AMOUNT = 2**256 - 1
MAX_MS = 2**31 - 1
BUSY_TIMEOUT_S = 1.5  # short, so a lock held elsewhere cannot delay SIGTERM past 2 s
QUEUE_HIGH_FRAMES = 256  # read-ahead bound: past it we stop reading and TCP pushes back
QUEUE_HIGH_BYTES = 4 * 1024 * 1024
READ_CHUNK = 65536

EXIT_OK, EXIT_ERROR, EXIT_ENV, EXIT_INJECTED = 0, 1, 64, 86

# Patterns on str: an explicit [0-9] is ASCII only (\d and int() would accept other digits).
CURSOR_RE = re.compile(r"(0|[1-9][0-9]*):[0-9]{14}:[0-9]{4}")
ACCOUNT_RE = re.compile(r"0x[0-9a-f]{40}")
AMOUNT_RE = re.compile(r"0|[1-9][0-9]*")
ID_RE = re.compile(r"0|[1-9][0-9]*")
FAULT_RE = re.compile(r"(exit|raise|stop)@(apply|commit|revoke|snapshot):([1-9][0-9]*)")
# Strings and brackets only, to measure nesting before json.loads (which would recurse).
_NESTING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class EnvError(Exception):
    pass


class InvalidFrame(Exception):
    pass


class InjectedFault(Exception):
    pass


class Stopped(Exception):
    """SIGTERM arrived while we were waiting."""


def log(msg: str) -> None:
    print(f"feed consumer: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ environment


@dataclass(frozen=True)
class Fault:
    action: str
    point: str
    n: int


@dataclass(frozen=True)
class Config:
    host: str
    port: int
    db: str
    client_id: str
    topics: tuple[str, ...]
    ping_ms: int
    idle_ms: int
    backoff_base_ms: int
    backoff_cap_ms: int
    apply_delay_ms: int
    faults: tuple[Fault, ...]


def parse_fault_plan(text: str | None) -> tuple[Fault, ...]:
    """Unset means no faults; an empty or malformed value is an invalid environment."""
    if text is None:
        return ()
    if text == "":
        raise EnvError("CHAOSLAB_FAULT is set but empty (unset it for no faults)")
    faults = []
    for item in text.split(","):
        m = FAULT_RE.fullmatch(item)
        if not m or int(m.group(3)) > 2**53 - 1:
            raise EnvError(
                f"CHAOSLAB_FAULT item {item!r} is not <exit|raise|stop>@<apply|commit|revoke|snapshot>:<n >= 1>"
            )
        faults.append(Fault(m.group(1), m.group(2), int(m.group(3))))
    return tuple(faults)


def _int_var(env: dict[str, str], name: str, minimum: int, maximum: int) -> int:
    text = env.get(name)
    if not text:
        raise EnvError(f"{name} is missing")
    if not re.fullmatch(r"0|[1-9][0-9]*", text) or not minimum <= int(text) <= maximum:
        raise EnvError(f"{name}={text!r} is not an integer in {minimum}..{maximum}")
    return int(text)


def _text_var(env: dict[str, str], name: str) -> str:
    text = env.get(name)
    if not text:
        raise EnvError(f"{name} is missing")
    return text


def parse_topics(text: str) -> tuple[str, ...]:
    topics = tuple(text.split(","))
    for topic in topics:
        if not ACCOUNT_RE.fullmatch(topic):
            raise EnvError(f"CHAOSLAB_TOPICS item {topic!r} is not 0x + 40 lowercase hex digits")
    if len(set(topics)) != len(topics):
        raise EnvError("CHAOSLAB_TOPICS names an account twice")
    return topics


def parse_env(env: dict[str, str]) -> Config:
    """Validates the whole environment before anything is opened or connected."""
    delay = env.get("CHAOSLAB_APPLY_DELAY_MS")
    config = Config(
        host=_text_var(env, "CHAOSLAB_HOST"),
        port=_int_var(env, "CHAOSLAB_PORT", 1, 65535),
        db=_text_var(env, "CHAOSLAB_DB"),
        client_id=_text_var(env, "CHAOSLAB_CLIENT_ID"),
        topics=parse_topics(_text_var(env, "CHAOSLAB_TOPICS")),
        ping_ms=_int_var(env, "CHAOSLAB_PING_MS", 1, MAX_MS),
        idle_ms=_int_var(env, "CHAOSLAB_IDLE_MS", 1, MAX_MS),
        backoff_base_ms=_int_var(env, "CHAOSLAB_BACKOFF_BASE_MS", 1, MAX_MS),
        backoff_cap_ms=_int_var(env, "CHAOSLAB_BACKOFF_CAP_MS", 1, MAX_MS),
        apply_delay_ms=0 if delay is None else _int_var(env, "CHAOSLAB_APPLY_DELAY_MS", 0, MAX_MS),
        faults=parse_fault_plan(env.get("CHAOSLAB_FAULT")),
    )
    if config.backoff_cap_ms < config.backoff_base_ms:
        raise EnvError(
            f"CHAOSLAB_BACKOFF_CAP_MS={config.backoff_cap_ms} is below "
            f"CHAOSLAB_BACKOFF_BASE_MS={config.backoff_base_ms}"
        )
    return config


def fire_faults(faults: tuple[Fault, ...], point: str, n: int) -> None:
    for f in faults:
        if f.point != point or f.n != n:
            continue
        if f.action == "exit":
            os._exit(EXIT_INJECTED)  # no finally, no close: a real crash
        if f.action == "raise":
            raise InjectedFault(f"injected raise at {point}:{n}")
        if f.action == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)  # continues here after SIGCONT


# ------------------------------------------------------------------ frames


class JsonNumber:
    """A JSON number kept as the text that arrived: ids are echoed and payloads stored exactly."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")  # Python's json would accept NaN and Infinity


def _check_strings(value) -> None:
    """Every string (names too) must be Unicode text: an escaped lone surrogate cannot be stored."""
    if isinstance(value, str):
        value.encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate
    elif isinstance(value, dict):
        for k, v in value.items():
            k.encode("utf-8")
            _check_strings(v)
    elif isinstance(value, list):
        for v in value:
            _check_strings(v)


def to_json(value) -> str:
    """JSON text of a parsed value, numbers exactly as they arrived."""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + to_json(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    if isinstance(value, JsonNumber):
        return value.text
    return json.dumps(value)  # str, True, False, None


def parse_json(line: bytes):
    try:
        text = line.decode("utf-8")  # strict: invalid UTF-8 is not read as replacement characters
    except UnicodeDecodeError as err:
        raise InvalidFrame(f"not valid JSON: not valid UTF-8 ({err.reason})") from None
    depth = 0
    for m in _NESTING_RE.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InvalidFrame(f"not valid JSON: nested deeper than {MAX_DEPTH} levels")
        elif c in "]}":
            depth -= 1
    try:
        value = json.loads(text, parse_int=JsonNumber, parse_float=JsonNumber, parse_constant=_refuse_constant)
        _check_strings(value)
    except (ValueError, RecursionError) as err:  # JSONDecodeError and UnicodeEncodeError are ValueErrors
        raise InvalidFrame(f"not valid JSON: {err}") from None
    return value


def _field(obj: dict, name: str, where: str):
    if name not in obj:
        raise InvalidFrame(f'{where} lacks "{name}"')
    return obj[name]


def _str(obj: dict, name: str, where: str) -> str:
    v = _field(obj, name, where)
    if not isinstance(v, str):
        raise InvalidFrame(f"{where}.{name} is not a string")
    return v


def _object(obj: dict, name: str, where: str) -> dict:
    v = _field(obj, name, where)
    if not isinstance(v, dict):
        raise InvalidFrame(f"{where}.{name} is not an object")
    return v


def is_cursor(text) -> bool:
    return isinstance(text, str) and CURSOR_RE.fullmatch(text) is not None


def chain_of(cursor: str) -> str:
    return cursor.split(":", 1)[0]


def _cursor(obj: dict, name: str, where: str) -> str:
    text = _str(obj, name, where)
    if not is_cursor(text):
        raise InvalidFrame(f"{where}.{name} {text!r} is not chainId:14-digit block:4-digit log index")
    return text


def _account(text, what: str) -> str:
    if not isinstance(text, str) or not ACCOUNT_RE.fullmatch(text):
        raise InvalidFrame(f"{what} {text!r} is not 0x + 40 lowercase hex digits")
    return text


def amount_of(v, what: str) -> int:
    """A canonical decimal string from 0 to 2^256 - 1 (never a JSON number)."""
    if not isinstance(v, str):
        raise InvalidFrame(f"{what} is not a string (amounts are decimal strings)")
    if not AMOUNT_RE.fullmatch(v):
        raise InvalidFrame(f"{what} {v[:100]!r} is not a canonical decimal integer")
    if len(v) > 78 or int(v) > MAX_AMOUNT:
        raise InvalidFrame(f"{what} is above 2^256 - 1")
    return int(v)


def _id(obj: dict, where: str) -> str:
    v = _field(obj, "id", where)
    if not isinstance(v, JsonNumber) or not ID_RE.fullmatch(v.text):
        raise InvalidFrame(f"{where}.id is not a JSON integer >= 0 without fraction or exponent")
    return v.text


@dataclass
class Frame:
    """op is event, snapshot, revoke, reset, ping, pong or unknown; the other fields per op."""

    op: str
    cursor: str | None = None  # event, snapshot; revoke: fromCursor
    type: str | None = None  # event
    payload: str | None = None  # event: the payload as JSON text
    block_hash: str | None = None  # event: payload.blockHash; snapshot: blockHash
    transfer: tuple[str, str, int] | None = None  # event Transfer: (from, to, amount)
    balances: dict[str, int] | None = None  # snapshot: every entry of state.balances
    reason: str | None = None  # reset
    id: str | None = None  # ping, pong: the digits as received


def parse_frame(line: bytes) -> Frame:
    """One line (without its LF) to a Frame; raises InvalidFrame (section 2 of the contract)."""
    if len(line) > MAX_LINE_BYTES:
        raise InvalidFrame(f"line longer than {MAX_LINE_BYTES} bytes")
    root = parse_json(line)
    if not isinstance(root, dict):
        raise InvalidFrame("not a JSON object")
    op = _str(root, "op", "frame")
    if op == "event":
        cursor = _cursor(root, "cursor", "event")
        type_ = _str(root, "type", "event")
        payload = _object(root, "payload", "event")
        frame = Frame("event", cursor=cursor, type=type_, payload=to_json(payload))
        frame.block_hash = _str(payload, "blockHash", "event.payload")
        if type_ == "Transfer":
            frame.transfer = (
                _account(_str(payload, "from", "event.payload"), "event.payload.from"),
                _account(_str(payload, "to", "event.payload"), "event.payload.to"),
                amount_of(_field(payload, "amount", "event.payload"), "event.payload.amount"),
            )
            _str(payload, "txHash", "event.payload")
        return frame
    if op == "snapshot":
        cursor = _cursor(root, "cursor", "snapshot")
        block_hash = _str(root, "blockHash", "snapshot")
        entries = _object(_object(root, "state", "snapshot"), "balances", "snapshot.state")
        # Accounts we do not follow are ignored later, but a malformed entry spoils the frame.
        balances = {
            _account(k, "snapshot balance account"): amount_of(v, f"snapshot balance of {k}")
            for k, v in entries.items()
        }
        return Frame("snapshot", cursor=cursor, block_hash=block_hash, balances=balances)
    if op == "revoke":
        return Frame("revoke", cursor=_cursor(root, "fromCursor", "revoke"))
    if op == "reset":
        return Frame("reset", reason=_str(root, "reason", "reset"))
    if op in ("ping", "pong"):
        return Frame(op, id=_id(root, op))
    # Also "subscribe": a consumer-to-server message has no meaning coming from the server.
    return Frame("unknown", type=op)


def encode_frame(frame: dict) -> bytes:
    return (json.dumps(frame, separators=(",", ":")) + "\n").encode("utf-8")


def encode_ping_pong(op: str, id_text: str) -> bytes:
    return f'{{"op":"{op}","id":{id_text}}}\n'.encode("ascii")


# ------------------------------------------------------------------ store

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


# ------------------------------------------------------------------ session


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
    def __init__(self, config: Config, con: sqlite3.Connection):
        self.config = config
        self.con = con
        self.followed = frozenset(config.topics)
        self.snapshot_needed = False  # in memory only
        st = read_state(con)
        stored = st.cursor or st.snapshot_cursor
        self.chain_id: str | None = chain_of(stored) if stored else None
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
        frame = parse_frame(line)
        accept_frame(s, conn, frame)
    except InvalidFrame as err:
        terminal(s, conn, ("invalid", str(err)))
        return
    if frame.op == "ping":
        answer_ping(s, frame.id)  # at once, also while a transaction waits
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


# ------------------------------------------------------------------ steps


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
        apply_event(s, frame)
    elif frame.op == "snapshot":
        install_snapshot(s, frame)
    elif frame.op == "revoke":
        if revoke(s, frame.cursor) == "snapshot-needed":
            return "close"
    elif frame.op == "reset":
        on_reset(s, frame.reason)
        return "close"  # the server closes at once; so do we
    return "continue"


def apply_event(s: Session, ev: Frame) -> str:
    """BEGIN IMMEDIATE around apply_event_in_transaction; any error rolls back."""
    con = s.con
    con.execute("BEGIN IMMEDIATE")
    try:
        return apply_event_in_transaction(s, ev)
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
        for account, delta in balance_effect(s, ev.transfer).items():
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
                for account, delta in balance_effect(s, stored_transfer(payload)).items():
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


def on_reset(s: Session, reason: str) -> None:
    """stale-cursor: the next subscribe asks for a snapshot. Any other reason: resume from the store."""
    if reason == "stale-cursor":
        s.snapshot_needed = True


def answer_ping(s: Session, id_text: str) -> None:
    s.send(encode_ping_pong("pong", id_text))


def backoff_delay(config: Config, n: int, rnd: random.Random) -> float:
    """Milliseconds: min(BASE x 2^n, CAP) x U(0.5, 1.5), jitter on every attempt, at the cap too."""
    return min(config.backoff_base_ms * 2 ** min(n, 40), config.backoff_cap_ms) * rnd.uniform(0.5, 1.5)


# ------------------------------------------------------------------ network


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
        cursor, block_hash = subscription(s)
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
                if handle_frame(s, frame) == "close":
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


def sleep_until(s: Session, until: float) -> None:
    while not s.stopping:
        left = until - time.monotonic()
        if left <= 0:
            return
        pump(s, left)


def run_client(env: dict[str, str]) -> int:
    """Check the environment, open the store, then connect, subscribe, handle frames and
    reconnect with backoff until SIGTERM. Returns the exit status."""
    try:
        config = parse_env(env)  # before anything is opened or connected
    except EnvError as err:
        log(f"{err} (exit 64)")
        return EXIT_ENV
    try:
        con = open_store(config.db)
    except (sqlite3.Error, ValueError, OSError) as err:
        log(f"CHAOSLAB_DB={config.db!r} cannot be opened as the feed store: {err} (exit 64)")
        return EXIT_ENV
    s = Session(config, con)

    def on_signal(signum, frame):  # noqa: ARG001
        s.stopping = True  # the wakeup fd interrupts the select in progress

    signal.set_wakeup_fd(s.wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    rnd = random.Random()
    try:
        n = 0  # consecutive attempts since data last arrived
        last_end = None  # None: the process's first connect waits nothing
        while not s.stopping:
            if last_end is not None:
                sleep_until(s, last_end + backoff_delay(config, n, rnd) / 1000)
                n += 1
                if s.stopping:
                    break
            got_data, last_end = run_connection(s)
            if got_data:
                n = 0
        return EXIT_OK
    except Exception as err:  # noqa: BLE001
        log(f"unexpected {type(err).__name__}: {err} (exit 1)")
        return EXIT_ERROR
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()


def main() -> None:
    sys.exit(run_client(dict(os.environ)))


if __name__ == "__main__":
    main()
