"""The wire, consumer side (consumer/feed/CONTRACT.md, section 2): NDJSON frames read strictly
into Frame values, numbers kept as the text that arrived, and the two frames a consumer sends."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_LINE_BYTES = 1024 * 1024  # the LF not counted
MAX_DEPTH = 64  # JSON nesting; the TypeScript twin has the same bound
MAX_AMOUNT = 2**256 - 1

# Patterns on str: an explicit [0-9] is ASCII only (\d and int() would accept other digits).
CURSOR_RE = re.compile(r"(0|[1-9][0-9]*):[0-9]{14}:[0-9]{4}")
ACCOUNT_RE = re.compile(r"0x[0-9a-f]{40}")
AMOUNT_RE = re.compile(r"0|[1-9][0-9]*")
ID_RE = re.compile(r"0|[1-9][0-9]*")
# Strings and brackets only, to measure nesting before json.loads (which would recurse).
_NESTING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class InvalidFrame(Exception):
    pass


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
