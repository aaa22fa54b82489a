"""The environment a feed consumer is started with (consumer/feed/CONTRACT.md, section 1), read
and checked whole before anything is opened or connected: a bad one exits 64."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .hooks import Fault
from .wire import ACCOUNT_RE

MAX_MS = 2**31 - 1

EXIT_OK, EXIT_ERROR, EXIT_ENV = 0, 1, 64

FAULT_RE = re.compile(r"(exit|raise|stop)@(apply|commit|revoke|snapshot):([1-9][0-9]*)")


class EnvError(Exception):
    pass


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
