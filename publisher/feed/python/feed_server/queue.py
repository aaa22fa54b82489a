"""A connection's bounded queue (server contract, section 4). A frame is pending from when it
is produced until the kernel's socket buffer has taken it; at most `limit` may be. A frame the
kernel takes at once is never pending, so a client that reads never fills the queue. One more
frame while it is full is an overflow: the connection drops everything pending and says
`reset slow-consumer` (never a frame dropped in silence).

The transport's own buffer is kept at zero (`set_write_buffer_limits(0)`): asyncio pauses us
as soon as the kernel refuses bytes, so our deque, not asyncio's buffer, is where frames wait,
and the one frame asyncio holds (partly written) is counted too.

A replay page leaves `reserve` places free (a tenth of the queue): a client catching up paces
the replay, so it is never a slow consumer, but it still pings us and we ping it; those frames
count too, and in a queue a page had filled to the brim the first pong would overflow it. The
client that does not read at all still overflows once its heartbeats have used the reserve."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Callable


class FrameQueue:
    def __init__(self, transport: asyncio.WriteTransport, limit: int, wrote: Callable[[], None]):
        self.transport = transport
        self.limit = limit
        self.wrote = wrote  # bytes went to the socket (the heartbeat's "sent")
        self.frames: deque[bytes] = deque()
        self.paused = False  # the kernel refused bytes: wait for resume()
        self.waiting: list[Callable[[], None]] = []  # called once nothing is pending (when_written)
        self.reserve = min(limit - 1, max(1, limit // 10))  # 0 for a queue of one frame
        transport.set_write_buffer_limits(high=0)

    def pending(self) -> int:
        return len(self.frames) + (1 if self.transport.get_write_buffer_size() else 0)

    def room(self) -> int:
        return self.limit - self.pending()

    def page_room(self) -> int:
        """How many rows a replay page may hold: the room left, less the heartbeats' reserve."""
        return self.room() - self.reserve

    def full(self) -> bool:
        """One more frame now would be an overflow."""
        return self.pending() >= self.limit

    def push(self, frame: bytes) -> None:
        """Queues a frame and writes what the socket takes (the caller checked full() first)."""
        self.frames.append(frame)
        self.flush()

    def flush(self) -> None:
        while self.frames and not self.paused and not self.transport.is_closing():
            self.transport.write(self.frames.popleft())  # calls pause() at once if the kernel is full
            self.wrote()
        if self.waiting and self.pending() == 0:
            waiting, self.waiting = self.waiting, []
            for callback in waiting:
                callback()

    def when_written(self, callback: Callable[[], None]) -> None:
        """Calls `callback` once every frame queued so far has been handed to the kernel."""
        self.waiting.append(callback)
        self.flush()

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self.flush()

    def drop_oldest(self) -> None:
        """Drops the oldest frame not yet written (none is, while the queue is empty)."""
        if self.frames:
            self.frames.popleft()

    def drop(self) -> int:
        """Everything not yet written is dropped (a frame partly written is finished first, so
        the next frame starts on a line of its own); returns how many frames were dropped."""
        dropped = len(self.frames)
        self.frames.clear()
        return dropped
