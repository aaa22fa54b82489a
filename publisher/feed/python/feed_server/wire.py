"""The wire, server side (server contract, section 5, and the consumer contract, section 2):
NDJSON lines of at most 1 MiB, the client's frames read strictly, the server's frames written
with their members in the contract's order, and cursors `chainId:block:logIndex`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_LINE_BYTES = 1024 * 1024  # the LF not counted
MAX_DEPTH = 64  # JSON nesting: json.loads would recurse on "[[[[..." and a deep frame is no frame of ours

# Patterns on str: an explicit [0-9] is ASCII only (\d would accept other scripts' digits).
CURSOR_RE = re.compile(r"(0|[1-9][0-9]{0,15}):([0-9]{14}):([0-9]{4})")
ACCOUNT_RE = re.compile(r"0x[0-9a-f]{40}")
ID_RE = re.compile(r"0|[1-9][0-9]*")
_NESTING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')

# A position "after every log of a block" (no block holds more than 10 000 logs), and "before its first".
AFTER_LAST_LOG = 10_000
BEFORE_FIRST_LOG = -1


class InvalidFrame(Exception):
    """A client frame the contract calls invalid: the connection is closed, nothing sent first."""


@dataclass(frozen=True, order=True)
class Position:
    """Where a row is in the outbox; positions order like cursors of one chain."""

    block: int
    log_index: int


def format_cursor(chain_id: int, pos: Position) -> str:
    return f"{chain_id}:{pos.block:014d}:{pos.log_index:04d}"


def parse_cursor(text: str) -> tuple[int, Position]:
    m = CURSOR_RE.fullmatch(text)
    if not m:
        raise InvalidFrame(f"cursor {text[:80]!r} is not chainId:14-digit block:4-digit log index")
    return int(m.group(1)), Position(int(m.group(2)), int(m.group(3)))


class LineSplitter:
    """Bytes in, complete lines (without their LF) out. A line that already runs past the limit
    is refused at once: a client cannot make us store an endless line."""

    def __init__(self) -> None:
        self.tail = bytearray()

    def push(self, data: bytes) -> list[bytes]:
        self.tail += data
        if b"\n" not in data:
            # Most of a long line: only its length to check. Splitting the whole tail on every
            # read would make a 1 MiB line cost quadratic time, long enough (under load) for a
            # ping to go out before the line is found too long.
            if len(self.tail) > MAX_LINE_BYTES:
                raise InvalidFrame(f"a line longer than {MAX_LINE_BYTES} bytes")
            return []
        *lines, rest = self.tail.split(b"\n")
        self.tail = bytearray(rest)
        if len(self.tail) > MAX_LINE_BYTES or any(len(line) > MAX_LINE_BYTES for line in lines):
            raise InvalidFrame(f"a line longer than {MAX_LINE_BYTES} bytes")
        return [bytes(line) for line in lines]


@dataclass(frozen=True)
class Subscribe:
    client: str
    topics: tuple[str, ...]
    cursor: str | None  # both None: the client needs a snapshot
    block_hash: str | None


@dataclass(frozen=True)
class PingPong:
    op: str  # "ping" or "pong"
    id_text: str  # the digits as received: a pong echoes them exactly


@dataclass(frozen=True)
class UnknownOp:
    op: str  # ignored, as on the consumer's side


class _JsonNumber:
    """A JSON number kept as the text that arrived (a ping id is echoed digit for digit)."""

    def __init__(self, text: str):
        self.text = text


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")  # Python's json would accept NaN and Infinity


def _parse_json(line: bytes):
    try:
        text = line.decode("utf-8")  # strict: invalid UTF-8 is not read as replacement characters
    except UnicodeDecodeError as err:
        raise InvalidFrame(f"not valid UTF-8 ({err.reason})") from None
    depth = 0
    for m in _NESTING_RE.finditer(text):
        depth += 1 if m.group() in "[{" else -1 if m.group() in "]}" else 0
        if depth > MAX_DEPTH:
            raise InvalidFrame(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_JsonNumber, parse_float=_JsonNumber, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:
        raise InvalidFrame(f"not valid JSON ({err})") from None


def _field(obj: dict, name: str):
    if name not in obj:
        raise InvalidFrame(f'the frame lacks "{name}"')
    return obj[name]


def _subscribe(obj: dict) -> Subscribe:
    client = _field(obj, "client")
    if not isinstance(client, str) or client == "":
        raise InvalidFrame("subscribe.client is not a non-empty string")
    topics = _field(obj, "topics")
    if not isinstance(topics, list) or not topics:
        raise InvalidFrame("subscribe.topics is not a non-empty array of accounts")
    for topic in topics:
        if not isinstance(topic, str) or not ACCOUNT_RE.fullmatch(topic):
            raise InvalidFrame(f"subscribe.topics: {str(topic)[:80]!r} is not 0x + 40 lowercase hex digits")
    cursor, block_hash = _field(obj, "cursor"), _field(obj, "blockHash")
    if cursor is not None and not (isinstance(cursor, str) and CURSOR_RE.fullmatch(cursor)):
        raise InvalidFrame("subscribe.cursor is neither null nor chainId:14-digit block:4-digit log index")
    if block_hash is not None and not (isinstance(block_hash, str) and block_hash):
        raise InvalidFrame("subscribe.blockHash is neither null nor a non-empty string")
    if (cursor is None) != (block_hash is None):
        raise InvalidFrame("subscribe.cursor and subscribe.blockHash must both be null or both be set")
    return Subscribe(client, tuple(dict.fromkeys(topics)), cursor, block_hash)


def parse_client_frame(line: bytes) -> Subscribe | PingPong | UnknownOp:
    """One line (without its LF) from a client; raises InvalidFrame (server contract, section 5).
    A cursor of another chain is not invalid here: that is a stale cursor (section 3)."""
    if len(line) > MAX_LINE_BYTES:
        raise InvalidFrame(f"a line longer than {MAX_LINE_BYTES} bytes")
    obj = _parse_json(line)
    if not isinstance(obj, dict):
        raise InvalidFrame("not a JSON object")
    op = _field(obj, "op")
    if not isinstance(op, str):
        raise InvalidFrame('"op" is not a string')
    if op == "subscribe":
        return _subscribe(obj)
    if op in ("ping", "pong"):
        id_ = _field(obj, "id")
        if not isinstance(id_, _JsonNumber) or not ID_RE.fullmatch(id_.text):
            raise InvalidFrame(f"{op}.id is not a JSON integer >= 0 without fraction or exponent")
        return PingPong(op, id_.text)
    return UnknownOp(op)


# ------------------------------------------------------------------ what the server sends


def _line(frame: dict) -> bytes:
    return (json.dumps(frame, separators=(",", ":")) + "\n").encode("utf-8")


def encode_snapshot(cursor: str, block_hash: str, balances: dict[str, int]) -> bytes:
    state = {"balances": {account: str(amount) for account, amount in balances.items()}}
    return _line({"op": "snapshot", "cursor": cursor, "blockHash": block_hash, "state": state})


def encode_event(cursor: str, type_: str, payload: dict[str, str]) -> bytes:
    return _line({"op": "event", "cursor": cursor, "type": type_, "payload": payload})


def encode_revoke(from_cursor: str) -> bytes:
    return _line({"op": "revoke", "fromCursor": from_cursor})


def encode_reset(reason: str) -> bytes:
    return _line({"op": "reset", "reason": reason})


def encode_heartbeat(op: str, id_text: str) -> bytes:
    return f'{{"op":"{op}","id":{id_text}}}\n'.encode("ascii")
