"""What a connection does when its client misbehaves (server contract, sections 4 and 5): one
frame more than its queue may hold while the client is not reading, silence (heartbeats), a
frame that breaks the grammar or the 1 MiB limit. These are the reference's answers, each a
named step of server.py (a server mutant in publisher/feed/mutants/ replaces one of them), as
publisher/feed/server/policy.ts is for the TypeScript reference."""

from __future__ import annotations

from typing import Callable

from .heartbeat import Heartbeat
from .queue import FrameQueue


def on_overflow(queue: FrameQueue) -> str:  # noqa: ARG001 (a mutant changes the queue)
    """The queue holds CHAOSLAB_QUEUE_LIMIT frames and one more comes: "reset" drops everything
    pending, sends `reset slow-consumer` and closes (the contract); "carry-on" queues the frame
    anyway, after whatever this step did to the queue."""
    return "reset"


def start_heartbeat(ping_ms: int, idle_ms: int, ping: Callable[[], None], idle: Callable[[], None]) -> Heartbeat:
    """A connection's heartbeat: `ping` after ping_ms without sending, `idle` after idle_ms
    without receiving. The connection calls its sent(), received() and stop()."""
    return Heartbeat(ping_ms, idle_ms, ping, idle)


def on_bad_frame(why: str) -> None:
    """A client frame was invalid (`why`): the connection is closed right after, sending
    nothing first, and nothing else changes."""
