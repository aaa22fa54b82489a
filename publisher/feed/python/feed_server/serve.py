"""The server as a whole (server contract, sections 1 and 2): check the environment, open the
outbox, listen, poll the outbox for commits, and on SIGTERM say `reset shutdown` on every
connection and exit 0 within 2 s."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING

from .connection import Connection, Shared, log
from .environment import EXIT_ENV, EXIT_OK, EnvError
from .hooks import FaultHooks
from .outbox import OutboxError

if TYPE_CHECKING:
    from types import ModuleType

    from .environment import Config
    from .outbox import Outbox

SHUTDOWN_GRACE_S = 1.5  # of the contract's 2 s: the rest is for exiting
LISTEN_BACKLOG = 1024  # many clients come back at once after a restart


def run_server(env: dict[str, str], steps: ModuleType) -> int:
    """Returns the exit status. Nothing is opened before the whole environment is checked, and
    nothing listens unless the outbox could be opened."""
    try:
        config = steps.parse_env(env)
    except EnvError as err:
        log(f"{err} (exit 64)")
        return EXIT_ENV
    try:
        outbox = steps.open_outbox(config.outbox_path)
    except OutboxError as err:
        log(f"CHAOSLAB_OUTBOX_DB: {err} (exit 64)")
        return EXIT_ENV
    try:
        return asyncio.run(serve(config, outbox, steps))
    finally:
        outbox.close()


async def serve(config: Config, outbox: Outbox, steps: ModuleType) -> int:
    loop = asyncio.get_running_loop()
    shared = Shared(config, outbox, FaultHooks(config.faults), steps)
    try:
        server = await loop.create_server(lambda: Connection(shared), config.host, config.port, backlog=LISTEN_BACKLOG)
    except OSError as err:
        log(f"cannot listen on CHAOSLAB_HOST:CHAOSLAB_PORT {config.host}:{config.port}: {err} (exit 64)")
        return EXIT_ENV
    log(f"listening on {config.host}:{config.port}, outbox {config.outbox_path} (chain {outbox.chain_id})")
    stopping = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    poller = asyncio.create_task(poll_outbox(shared))
    await stopping.wait()
    poller.cancel()
    await shut_down(server, shared)
    return EXIT_OK


async def poll_outbox(shared: Shared) -> None:
    """The indexer is another process: its commits are seen by PRAGMA data_version, which
    changes whenever another connection has committed. Every connection then reads what is new
    for it (one read transaction each)."""
    outbox, interval = shared.outbox, shared.config.poll_ms / 1000
    seen = outbox.data_version()
    while True:
        await asyncio.sleep(interval)
        version = outbox.data_version()
        if version != seen:
            seen = version
            for conn in list(shared.connections):
                conn.outbox_changed()


async def shut_down(server: asyncio.Server, shared: Shared) -> None:
    """SIGTERM: stop listening, `reset shutdown` on every connection, give the clients a moment
    to close their side, then cut off whoever is left."""
    log(f"SIGTERM: reset shutdown on {len(shared.connections)} connections")
    server.close()
    for conn in list(shared.connections):
        conn.shutdown()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SHUTDOWN_GRACE_S
    while shared.connections and loop.time() < deadline:
        await asyncio.sleep(0.02)
    for conn in list(shared.connections):
        conn.transport.abort()
