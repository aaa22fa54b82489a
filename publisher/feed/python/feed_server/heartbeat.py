"""Heartbeats of one connection (server contract, section 5): a ping after PING_MS without
sending anything, and the connection closed after IDLE_MS without receiving one byte. The
timers re-arm from the last activity instead of being reset on every frame."""

from __future__ import annotations

import asyncio
from typing import Callable


class Heartbeat:
    def __init__(self, ping_ms: int, idle_ms: int, ping: Callable[[], None], idle: Callable[[], None]):
        self.loop = asyncio.get_running_loop()
        self.ping_s, self.idle_s = ping_ms / 1000, idle_ms / 1000
        self.on_ping, self.on_idle = ping, idle
        self.last_sent = self.last_received = self.loop.time()
        self.ping_timer = self.loop.call_later(self.ping_s, self._ping_due)
        self.idle_timer = self.loop.call_later(self.idle_s, self._idle_due)

    def sent(self) -> None:
        self.last_sent = self.loop.time()

    def received(self) -> None:
        self.last_received = self.loop.time()

    def stop(self) -> None:
        self.ping_timer.cancel()
        self.idle_timer.cancel()

    def _ping_due(self) -> None:
        quiet = self.loop.time() - self.last_sent
        if quiet >= self.ping_s:
            self.last_sent = self.loop.time()
            self.on_ping()  # may close the connection (a full queue), which stops us
            quiet = 0.0
        if not self.ping_timer.cancelled():
            self.ping_timer = self.loop.call_later(self.ping_s - quiet, self._ping_due)

    def _idle_due(self) -> None:
        # asyncio runs the callbacks of sockets found readable before the timers that fell due
        # in the same turn: bytes that arrived while we were busy (or stopped) count first.
        quiet = self.loop.time() - self.last_received
        if quiet >= self.idle_s:
            self.on_idle()
        else:
            self.idle_timer = self.loop.call_later(self.idle_s - quiet, self._idle_due)
