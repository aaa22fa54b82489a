#!/usr/bin/env python3
"""Reference feed-lab push server (seed 002, T18 "real-time systems"), standard library only.

Started as ``python3 publisher/feed/python/server.py``; everything comes from the environment
(the server contract: CHAOSLAB_OUTBOX_DB, CHAOSLAB_HOST, CHAOSLAB_PORT, CHAOSLAB_QUEUE_LIMIT,
CHAOSLAB_PING_MS, CHAOSLAB_IDLE_MS, CHAOSLAB_POLL_MS, and optionally CHAOSLAB_FAULT). The
TypeScript twin is publisher/feed/server/main.ts. The seed's server duties:

- subscribe, buffer, snapshot, release: nothing committed between the snapshot and going live
  is lost (here the outbox itself is the buffer: a connection reads on from its snapshot's
  cursor);
- a bounded queue per connection, dropped whole with an explicit ``reset slow-consumer``;
- heartbeats both ways, and idle clients closed;
- a cursor is all a client needs to resume, here, after a restart or on another instance: the
  database, not the bus, is the source of facts.

Its parts live in the package beside this file, one module each:

- ``feed_server/environment.py``: the variables, exit 64 (section 1);
- ``feed_server/outbox.py``: the outbox, read-only, one read transaction per decision, paged
  (section 2); ``feed_server/delivery.py``: the decisions — snapshot, resume, revoke, stale,
  the next rows (section 3);
- ``feed_server/wire.py``: frames in and out, the 1 MiB line limit, strict validation (section 5);
- ``feed_server/queue.py``: the bounded queue (section 4);
- ``feed_server/connection.py``: one connection from subscribe to its end; ``heartbeat.py``
  (section 5); ``feed_server/policy.py``: what a connection does when its client misbehaves (a
  full queue, silence, a bad frame: sections 4 and 5);
- ``feed_server/hooks.py``: CHAOSLAB_FAULT (section 6); ``feed_server/serve.py``: listening,
  polling the outbox, SIGTERM.

This module re-exports them, and it is the table of named steps: the package looks each step
up in this module at call time (``shared.steps.read_snapshot``, ...), so a mutant imports this
module and replaces one of them (never a copy).
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # running the reference writes nothing beside it
# (the imports below come after that line on purpose)
from feed_server.connection import Connection, Shared, log
from feed_server.delivery import (
    Delivery,
    Resume,
    Snapshot,
    Tracking,
    event_frame,
    next_delivery,
    plan_resume,
    read_snapshot,
    start_after_snapshot,
)
from feed_server.environment import EXIT_ENV, EXIT_OK, Config, EnvError, parse_env
from feed_server.hooks import EXIT_INJECTED, Fault, FaultHooks
from feed_server.outbox import Outbox, OutboxError, Row, open_outbox
from feed_server.policy import on_bad_frame, on_overflow, start_heartbeat
from feed_server.serve import run_server
from feed_server.wire import AFTER_LAST_LOG, BEFORE_FIRST_LOG, InvalidFrame, Position, format_cursor, parse_client_frame, parse_cursor

# The names the package looks up here at call time: replace one and the rest stays the reference.
STEPS = (
    "parse_env",
    "open_outbox",
    "parse_client_frame",
    "read_snapshot",
    "start_after_snapshot",
    "plan_resume",
    "next_delivery",
    "on_overflow",
    "start_heartbeat",
    "on_bad_frame",
)

__all__ = [
    *STEPS,
    "AFTER_LAST_LOG",
    "BEFORE_FIRST_LOG",
    "EXIT_ENV",
    "EXIT_INJECTED",
    "EXIT_OK",
    "Config",
    "Connection",
    "Delivery",
    "EnvError",
    "Fault",
    "FaultHooks",
    "InvalidFrame",
    "Outbox",
    "OutboxError",
    "Position",
    "Resume",
    "Row",
    "Shared",
    "Snapshot",
    "Tracking",
    "event_frame",
    "format_cursor",
    "log",
    "main",
    "parse_cursor",
    "run_server",
]


def main() -> None:
    # This module itself is the steps table, with whatever a mutant replaced in it.
    sys.exit(run_server(dict(os.environ), sys.modules[__name__]))


if __name__ == "__main__":
    main()
