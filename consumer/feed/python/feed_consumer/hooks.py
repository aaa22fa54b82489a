"""The fault hooks of the contract (consumer/feed/CONTRACT.md, section 7): the rules
CHAOSLAB_FAULT names (environment.py reads them) and what each does at its point."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

EXIT_INJECTED = 86  # the exit status of exit@...: the harness tells it from a real failure


class InjectedFault(Exception):
    pass


@dataclass(frozen=True)
class Fault:
    action: str
    point: str
    n: int


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
