"""The environment a feed server is started with (server contract, section 1), read and checked
whole before anything is opened or listened on: a bad one is named on stderr and exits 64."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .hooks import Fault

EXIT_OK, EXIT_ENV = 0, 64
MAX_MS = 2**31 - 1

FAULT_RE = re.compile(r"(exit|stop)@(snapshot|event|revoke):([1-9][0-9]*)")


class EnvError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    outbox_path: str
    host: str
    port: int
    queue_limit: int
    ping_ms: int
    idle_ms: int
    poll_ms: int
    faults: tuple[Fault, ...]


def _text_var(env: dict[str, str], name: str) -> str:
    text = env.get(name)
    if not text:
        raise EnvError(f"{name} is missing")
    return text


def _int_var(env: dict[str, str], name: str, minimum: int, maximum: int) -> int:
    text = _text_var(env, name)
    # [0-9] on purpose: int() would also take " 7", "+7", "7_0" and other scripts' digits.
    if not re.fullmatch(r"0|[1-9][0-9]*", text) or not minimum <= int(text) <= maximum:
        raise EnvError(f"{name}={text!r} is not an integer in {minimum}..{maximum}")
    return int(text)


def parse_fault_plan(text: str | None) -> tuple[Fault, ...]:
    """`<exit|stop>@<snapshot|event|revoke>:<n>`, several joined by `,` without spaces. Unset:
    none; set but empty is malformed (the contract's section 6). `raise` is the consumer's action
    only: a server has no error path to raise it into."""
    if text is None:
        return ()
    faults = []
    for item in text.split(","):
        m = FAULT_RE.fullmatch(item)
        if not m:
            raise EnvError(f"CHAOSLAB_FAULT item {item!r} is not <exit|stop>@<snapshot|event|revoke>:<n >= 1>")
        faults.append(Fault(m.group(1), m.group(2), int(m.group(3))))
    return tuple(faults)


def parse_env(env: dict[str, str]) -> Config:
    """Every variable checked before the outbox is opened or a port is bound."""
    return Config(
        outbox_path=_text_var(env, "CHAOSLAB_OUTBOX_DB"),
        host=_text_var(env, "CHAOSLAB_HOST"),
        port=_int_var(env, "CHAOSLAB_PORT", 1, 65535),
        queue_limit=_int_var(env, "CHAOSLAB_QUEUE_LIMIT", 1, MAX_MS),
        ping_ms=_int_var(env, "CHAOSLAB_PING_MS", 1, MAX_MS),
        idle_ms=_int_var(env, "CHAOSLAB_IDLE_MS", 1, MAX_MS),
        poll_ms=_int_var(env, "CHAOSLAB_POLL_MS", 1, MAX_MS),
        faults=parse_fault_plan(env.get("CHAOSLAB_FAULT")),
    )
