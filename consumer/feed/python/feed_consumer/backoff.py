"""Reconnecting (consumer/feed/CONTRACT.md, section 6): exponential backoff with jitter on every
attempt, capped, and its attempt count moved back to 0 once data arrives."""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING

from .connection import pump

if TYPE_CHECKING:
    from .connection import Session
    from .environment import Config


def backoff_delay(config: Config, n: int, rnd: random.Random) -> float:
    """Milliseconds: min(BASE x 2^n, CAP) x U(0.5, 1.5), jitter on every attempt, at the cap too."""
    return min(config.backoff_base_ms * 2 ** min(n, 40), config.backoff_cap_ms) * rnd.uniform(0.5, 1.5)


def sleep_until(s: Session, until: float) -> None:
    while not s.stopping:
        left = until - time.monotonic()
        if left <= 0:
            return
        pump(s, left)


class Reconnects:
    """How long to wait before each connect: nothing before the process's first one."""

    def __init__(self) -> None:
        self.n = 0  # consecutive attempts since data last arrived
        self.last_end: float | None = None  # None: the process's first connect waits nothing
        self.rnd = random.Random()

    def wait_before_connect(self, s: Session) -> None:
        """Waits the backoff delay counted from the last connection's end (or SIGTERM)."""
        if self.last_end is None:
            return
        sleep_until(s, self.last_end + s.steps.backoff_delay(s.config, self.n, self.rnd) / 1000)
        self.n += 1

    def ended(self, got_data: bool, end_seen_at: float) -> None:
        """A connection ended; data on it (a snapshot or an event) starts the count over."""
        if got_data:
            self.n = 0
        self.last_end = end_seen_at
