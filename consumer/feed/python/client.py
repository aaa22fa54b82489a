#!/usr/bin/env python3
"""Reference feed-lab consumer (seed 002, T18 "real-time systems"), standard library only.

Started as ``python3 consumer/feed/python/client.py``; everything comes from the environment
(see consumer/feed/CONTRACT.md). The TypeScript twin is consumer/feed/typescript/feed-client.ts.
The lesson: realtime is a latency property, not losing anything is a correctness property, and
they need different mechanisms:

- a durable cursor (and its block hash) in every subscribe, a snapshot only when one is needed,
  duplicates dropped by cursor;
- every frame that changes the store handled in ONE transaction together with the cursor;
- revoke undoes the events of abandoned blocks, reset starts over explicitly;
- heartbeats both ways, an idle timeout that reads before it judges, and reconnects with
  jittered exponential backoff.

Its parts live in the package beside this file, one module each:

- ``feed_consumer/wire.py``: framing and frame validation (section 2);
- ``feed_consumer/store.py``: the schema, and event, snapshot and revoke each in ONE
  transaction with the cursor (sections 3 and 4);
- ``feed_consumer/backoff.py``: reconnects with jittered exponential backoff (section 6);
- ``feed_consumer/hooks.py``: the fault hooks (section 7); ``environment.py``: section 1;
- ``feed_consumer/steps.py``: the subscribe's cursor and what each frame does (sections 2, 4);
- ``feed_consumer/connection.py`` and ``main_loop.py``: connect, subscribe, read, pings both
  ways, the idle timeout (sections 1, 2 and 5). One thread, one ``selectors`` loop: the socket,
  the ping timer, the idle timeout and a wakeup pipe for SIGTERM are all waited for in ``pump``.

This module re-exports them, and it is the table of named steps: the package looks each step
up in this module at call time (``s.steps.revoke``, ...), so a mutant imports this module and
replaces one of them (never a copy).
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # as before the split: running the reference writes nothing beside it
# (the imports below come after that line on purpose)
from feed_consumer.backoff import backoff_delay
from feed_consumer.connection import Connection, Session, Stopped, log
from feed_consumer.environment import EXIT_ENV, EXIT_ERROR, EXIT_OK, MAX_MS, Config, EnvError, parse_env, parse_topics
from feed_consumer.hooks import EXIT_INJECTED, Fault, InjectedFault, fire_faults
from feed_consumer.main_loop import run_client
from feed_consumer.steps import accept_frame, answer_ping, handle_frame, on_reset, subscription
from feed_consumer.store import (
    FeedState,
    add_balance,
    apply_event,
    apply_event_in_transaction,
    balance_effect,
    balance_of,
    install_snapshot,
    open_store,
    read_state,
    revoke,
)
from feed_consumer.wire import Frame, InvalidFrame, amount_of, chain_of, encode_frame, encode_ping_pong, is_cursor, parse_frame

# The names the package looks up here at call time: replace one and the rest stays the reference.
STEPS = (
    "parse_env",
    "open_store",
    "parse_frame",
    "accept_frame",
    "answer_ping",
    "subscription",
    "handle_frame",
    "apply_event",
    "apply_event_in_transaction",
    "balance_effect",
    "install_snapshot",
    "revoke",
    "on_reset",
    "backoff_delay",
)

__all__ = [
    *STEPS,
    "EXIT_ENV",
    "EXIT_ERROR",
    "EXIT_INJECTED",
    "EXIT_OK",
    "MAX_MS",
    "Config",
    "Connection",
    "EnvError",
    "Fault",
    "FeedState",
    "Frame",
    "InjectedFault",
    "InvalidFrame",
    "Session",
    "Stopped",
    "add_balance",
    "amount_of",
    "balance_of",
    "chain_of",
    "encode_frame",
    "encode_ping_pong",
    "fire_faults",
    "is_cursor",
    "log",
    "main",
    "parse_topics",
    "run_client",
]


def main() -> None:
    # This module itself is the steps table, with whatever a mutant replaced in it.
    sys.exit(run_client(dict(os.environ), sys.modules[__name__]))


if __name__ == "__main__":
    main()
