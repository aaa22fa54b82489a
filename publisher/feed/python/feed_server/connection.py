"""One client connection (server contract, sections 3 to 5): `subscribe`, then a snapshot or a
resume (a revoke first when the client's block was abandoned), catch-up in pages, then live
delivery, with heartbeats both ways; and the ways a connection ends: a reset (stale cursor,
slow consumer, shutdown), an invalid frame, silence.

asyncio calls the methods of `asyncio.Protocol` (connection_made, data_received, eof_received,
pause_writing, resume_writing, connection_lost); everything here runs on the event loop's one
thread, so no two of them ever run at once."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from itertools import count
from typing import TYPE_CHECKING

from .delivery import Tracking, event_frame
from .queue import FrameQueue
from .wire import (
    InvalidFrame,
    LineSplitter,
    PingPong,
    Position,
    Subscribe,
    encode_heartbeat,
    encode_reset,
    encode_revoke,
    encode_snapshot,
    format_cursor,
)

if TYPE_CHECKING:
    from types import ModuleType

    from .environment import Config
    from .hooks import FaultHooks
    from .outbox import Outbox, Row

PAGE_ROWS = 1000  # rows read at a time, live or catching up (the seed's "limit 1000")
CLOSE_GRACE_S = 2.0  # after a reset: how long the client may take to close its side


def log(msg: str) -> None:
    print(f"feed server: {msg}", file=sys.stderr, flush=True)


@dataclass
class Shared:
    """What every connection of the server shares. `steps` is the module the named steps are
    looked up in at call time (server.py, or a mutant's patched copy of its names)."""

    config: Config
    outbox: Outbox
    hooks: FaultHooks
    steps: ModuleType
    connections: set[Connection] = field(default_factory=set)
    ids: count = field(default_factory=lambda: count(1))


class Connection(asyncio.Protocol):
    # awaiting-subscribe -> (snapshot-sent) -> catching-up -> live; any of them -> closing (a
    # reset or an invalid frame: our side is shut, the client's bytes are read and dropped) ->
    # closed.
    def __init__(self, shared: Shared):
        self.shared = shared
        self.steps = shared.steps
        self.id = next(shared.ids)
        self.state = "awaiting-subscribe"
        self.splitter = LineSplitter()
        self.topics: tuple[str, ...] = ()
        self.tracking = Tracking(Position(0, 0), Position(0, 0), 0)
        self.advance_scheduled = False
        self.ping_ids = count(1)
        self.close_timer: asyncio.TimerHandle | None = None
        self.linger = False  # after reset slow-consumer: held open while the client is heard from

    # --- asyncio's calls ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        config = self.shared.config
        self.heartbeat = self.steps.start_heartbeat(config.ping_ms, config.idle_ms, self.ping, self.idle)
        self.queue = FrameQueue(transport, config.queue_limit, self.heartbeat.sent)
        self.shared.connections.add(self)

    def data_received(self, data: bytes) -> None:
        self.heartbeat.received()
        if self.state in ("closing", "closed"):
            if self.linger and self.state == "closing":
                self.arm_close_timer(self.shared.config.idle_ms / 1000)  # still heard from
            return  # read and dropped while the client closes its side
        try:
            for line in self.splitter.push(data):
                self.on_line(line)
                if self.state in ("closing", "closed"):
                    return
        except InvalidFrame as err:
            self.steps.on_bad_frame(str(err))
            self.close_silently(f"invalid frame: {err}")
        except Exception as err:  # noqa: BLE001 - one connection's failure is not the server's
            self.fail(err)

    def eof_received(self) -> bool:
        # The client closed its side: after our reset that is the end we waited for; before it,
        # the client is gone. Either way asyncio closes ours once what is written is out.
        if self.state not in ("closing", "closed"):
            log(f"connection {self.id}: the client closed the connection")
            self.begin_closing(shut_down_sending=False)
        return False

    def pause_writing(self) -> None:
        self.queue.pause()

    def resume_writing(self) -> None:
        if self.state == "closing":
            if not self.linger:
                self.arm_close_timer(CLOSE_GRACE_S)  # the last frame is out: now the 2 s for the client
            return
        self.queue.resume()
        if self.state == "catching-up":
            self.schedule_advance()  # room again: the next replay page

    def connection_lost(self, exc: Exception | None) -> None:
        self.state = "closed"
        self.heartbeat.stop()
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.shared.connections.discard(self)

    # --- what the client sends ----------------------------------------------------------

    def on_line(self, line: bytes) -> None:
        frame = self.steps.parse_client_frame(line)  # InvalidFrame closes the connection
        if isinstance(frame, PingPong):
            if frame.op == "ping":
                self.send(encode_heartbeat("pong", frame.id_text))
            return  # a pong changes nothing, but it counted as received
        if isinstance(frame, Subscribe):
            if self.state != "awaiting-subscribe":
                raise InvalidFrame("a second subscribe on one connection")
            self.on_subscribe(frame)
        # An unknown op is ignored, as on the consumer's side.

    def on_subscribe(self, frame: Subscribe) -> None:
        self.topics = frame.topics
        log(f"connection {self.id}: subscribe from {frame.client[:80]!r}, cursor {frame.cursor}")
        if frame.cursor is None or frame.block_hash is None:
            self.start_from_snapshot()
        else:
            self.start_from_cursor(frame.cursor, frame.block_hash)
        if self.state == "catching-up":
            self.advance()

    def start_from_snapshot(self) -> None:
        """Subscribe, buffer, snapshot, release (the outbox is the buffer: see delivery.py)."""
        outbox = self.shared.outbox
        snapshot = self.steps.read_snapshot(outbox, self.topics)
        self.shared.hooks.reached("snapshot")  # stop@snapshot:n: commits land here, before the frame goes
        cursor = format_cursor(outbox.chain_id, snapshot.position)
        if self.send(encode_snapshot(cursor, snapshot.block_hash, snapshot.balances)):
            self.state = "snapshot-sent"
            tracking = self.steps.start_after_snapshot(self, snapshot)
            if tracking is not None:  # None: the step calls follow() itself, later
                self.follow(tracking)

    def follow(self, tracking: Tracking) -> None:
        """Delivery starts after the snapshot, from `tracking` (unless the connection ended)."""
        if self.state == "snapshot-sent":
            self.tracking = tracking
            self.state = "catching-up"

    def start_from_cursor(self, cursor: str, block_hash: str) -> None:
        plan = self.steps.plan_resume(self.shared.outbox, cursor, block_hash, self.topics)
        if plan.stale is not None:
            self.reset("stale-cursor", f"stale cursor {cursor}: {plan.stale}")
            return
        self.tracking = Tracking(plan.start, plan.start, plan.reorg_seen)
        self.state = "catching-up"
        if plan.revoke_from is not None:
            self.send_revoke(plan.revoke_from)

    # --- what the server sends ----------------------------------------------------------

    def outbox_changed(self) -> None:
        self.schedule_advance()

    def schedule_advance(self) -> None:
        if not self.advance_scheduled:
            self.advance_scheduled = True
            asyncio.get_running_loop().call_soon(self.advance)

    def advance(self) -> None:
        """Reads what is next for this connection: revokes, then rows in cursor order. Catching
        up, a page is never larger than the room left in the queue less the heartbeats' reserve
        (queue.py); live, every new row is produced as it comes, and one more than the queue
        holds is an overflow."""
        self.advance_scheduled = False
        if self.state not in ("catching-up", "live"):
            return
        live = self.state == "live"
        limit = PAGE_ROWS if live else min(PAGE_ROWS, self.queue.page_room())
        if limit <= 0:
            return  # the queue is full: resume_writing brings us back
        try:
            step = self.steps.next_delivery(self.shared.outbox, self.tracking, self.topics, limit)
        except Exception as err:  # noqa: BLE001 - one connection's failure is not the server's
            self.fail(err)
            return
        self.tracking = step.tracking
        for fork in step.revokes:
            if not self.send_revoke(fork):
                return
        if step.stale is not None:
            self.reset("stale-cursor", f"fell behind retention: {step.stale}")
            return
        for row in step.rows:
            if not self.send_event(row):
                return  # the queue overflowed: the connection was reset
        if not step.caught_up:
            self.schedule_advance()  # a full page: the next one, once other work had its turn
        elif not live:
            self.state = "live"

    def send_event(self, row: Row) -> bool:
        self.shared.hooks.reached("event")
        return self.send(event_frame(self.shared.outbox.chain_id, row))

    def send_revoke(self, fork_number: int) -> bool:
        self.shared.hooks.reached("revoke")
        from_cursor = format_cursor(self.shared.outbox.chain_id, Position(fork_number, 0))
        log(f"connection {self.id}: revoke from {from_cursor}")
        return self.send(encode_revoke(from_cursor))

    def send(self, frame: bytes) -> bool:
        """Queues one frame; False when the connection is closing or the queue overflowed."""
        if self.state in ("closing", "closed"):
            return False
        if self.queue.full() and self.steps.on_overflow(self.queue) == "reset":
            self.reset("slow-consumer", f"one more frame with {self.queue.pending()} pending, the limit")
            return False
        self.queue.push(frame)
        return True

    def ping(self) -> None:
        self.send(encode_heartbeat("ping", str(next(self.ping_ids))))

    # --- the ends of a connection -------------------------------------------------------

    def reset(self, reason: str, why: str) -> None:
        """Drops everything pending, says `reset <reason>` and closes."""
        if self.state in ("closing", "closed"):
            return
        dropped = self.queue.drop()
        self.transport.write(encode_reset(reason))  # after a frame partly written, never inside it
        log(f"connection {self.id}: reset {reason} ({why}; {dropped} pending frames dropped)")
        # A slow client reads this reset only after everything the kernel and the proxy already
        # hold for it, at its own pace: 2 s after the reset left us can be too soon, and closing
        # (even half-closing: a proxy may then close both ways) can destroy the unread reset. So
        # the connection stays open, sending nothing more, until the client closes its side or
        # falls silent for IDLE_MS (contract section 4, change 6; the TypeScript reference too).
        self.linger = reason == "slow-consumer"
        self.begin_closing(shut_down_sending=not self.linger)

    def shutdown(self) -> None:
        self.reset("shutdown", "the server is stopping")

    def close_silently(self, why: str) -> None:
        """An invalid frame: close, sending nothing first."""
        self.queue.drop()
        log(f"connection {self.id}: closed: {why}")
        self.begin_closing()

    def begin_closing(self, shut_down_sending: bool = True) -> None:
        # Shut down our sending side once what is written is out, then read and drop whatever
        # the client still sends until it closes, for 2 s at most: closing at once with its
        # bytes unread would make the kernel send a TCP reset, which can destroy our last frame.
        self.state = "closing"
        self.heartbeat.stop()
        if shut_down_sending and self.transport.can_write_eof():
            try:
                self.transport.write_eof()  # asyncio shuts down once its buffer is empty
            except OSError:
                # The client is already gone (its close not yet read): nothing is left to say.
                self.transport.abort()
                return
        if self.linger:
            self.arm_close_timer(self.shared.config.idle_ms / 1000)  # re-armed by each byte heard
        elif self.transport.get_write_buffer_size() == 0:
            self.arm_close_timer(CLOSE_GRACE_S)
        else:
            # A slow client has not yet let the reset into the kernel (it is behind the frames
            # the kernel already holds): closing now would destroy it. Wait until it is out
            # (resume_writing), but no longer than a silent client may hold a connection.
            self.arm_close_timer(self.shared.config.idle_ms / 1000)

    def arm_close_timer(self, seconds: float) -> None:
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.close_timer = asyncio.get_running_loop().call_later(seconds, self.transport.abort)

    def idle(self) -> None:
        """Nothing received for IDLE_MS: a half-open client must not hold a queue forever."""
        log(f"connection {self.id}: closed: nothing received for {self.shared.config.idle_ms} ms")
        self.state = "closed"
        self.heartbeat.stop()
        self.transport.abort()

    def fail(self, err: Exception) -> None:
        log(f"connection {self.id}: closed after an internal error: {type(err).__name__}: {err}")
        self.state = "closed"
        self.heartbeat.stop()
        self.transport.abort()
