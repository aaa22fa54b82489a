"""The fault hooks (server contract, section 6): CHAOSLAB_FAULT names a point and a count, and
the action fires when that point is reached for the n-th time in this process, counted over
every connection."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

EXIT_INJECTED = 86  # the exit status of exit@...: the harness tells it from a real failure


@dataclass(frozen=True)
class Fault:
    action: str  # "exit" or "stop"
    point: str  # "snapshot", "event" or "revoke"
    n: int


class FaultHooks:
    """Counts each point over the whole process and fires the faults that name its count."""

    def __init__(self, faults: tuple[Fault, ...]):
        self.faults = faults
        self.counts = {"snapshot": 0, "event": 0, "revoke": 0}

    def reached(self, point: str) -> None:
        """snapshot: after a snapshot was read, before its frame is sent; event and revoke: right
        before such a frame is queued (frames a reset drops later still count)."""
        self.counts[point] += 1
        for fault in self.faults:
            if fault.point != point or fault.n != self.counts[point]:
                continue
            if fault.action == "exit":
                os._exit(EXIT_INJECTED)  # no cleanup, no reset: a real crash
            os.kill(os.getpid(), signal.SIGSTOP)  # the whole server stops; it goes on here after SIGCONT
