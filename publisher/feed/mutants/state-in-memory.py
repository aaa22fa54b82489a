#!/usr/bin/env python3
"""Server mutant "state-in-memory" (Python): it serves a resume from what it has kept in memory
since its own start, not from the outbox. A cursor from before it started resumes from the
outbox's head as it was then: rows committed while no server ran (between a crash and the
restart) are never sent to that consumer. Lost, without a reset.

It breaks this sentence of the server contract (section 1): "It keeps no state that a restart
could lose: a client resumes from its cursor alone, on this process, on a restarted one, or on
another instance started on the same outbox".

Without a restart (or a second instance) every cursor is from its own lifetime: it passes.
Only `plan_resume` is replaced. Killed by feed-server-restart: the server is killed, blocks
are committed, it starts again; the probes' resumes skip those blocks.
Run: python3 publisher/feed/mutants/state-in-memory.py
"""

import dataclasses
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py

reference_plan_resume = server.plan_resume


def head_at_start():
    """What this process has "seen": the outbox from its head at start-up on."""
    try:
        outbox = server.open_outbox(os.environ.get("CHAOSLAB_OUTBOX_DB", ""))
    except server.OutboxError:
        return None  # the reference names the bad outbox and exits 64
    try:
        with outbox.read():
            return server.Position(outbox.head_number(), server.AFTER_LAST_LOG)
    finally:
        outbox.close()


MEMORY_FROM = head_at_start()


def plan_resume(outbox, cursor, block_hash, topics):
    plan = reference_plan_resume(outbox, cursor, block_hash, topics)
    if plan.stale is not None or MEMORY_FROM is None or plan.start >= MEMORY_FROM:
        return plan
    # BUG: nothing before its own start is in memory: replay starts at the head as it was then.
    return dataclasses.replace(plan, start=MEMORY_FROM)


server.plan_resume = plan_resume

if __name__ == "__main__":
    server.main()
