#!/usr/bin/env python3
"""Server mutant "no-reset-on-stale" (Python): a cursor older than the retention window is
answered with a replay of what is left above it instead of `reset stale-cursor`. The consumer
gets the rows retention kept and believes it holds the whole history: a partial history served
as complete.

It breaks this sentence of the server contract (section 3): "a cursor older than the window:
retention deleted a followed account's row above it ... `reset stale-cursor`, then close. Never
serve a partial history as if it were complete". A cursor of another chain or an unknown hash
is still reset.

Only `plan_resume` is replaced. Killed by feed-server-stale-cursor: a probe away longer than
the window resubscribes with its old cursor; the wire check finds events where `reset
stale-cursor` was due.
Run: python3 publisher/feed/mutants/no-reset-on-stale.py
"""

import dataclasses
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py

reference_plan_resume = server.plan_resume


def plan_resume(outbox, cursor, block_hash, topics):
    plan = reference_plan_resume(outbox, cursor, block_hash, topics)
    if plan.stale is None or not plan.stale.startswith("retention deleted"):
        return plan
    # BUG: retention deleted rows above the cursor; replay what is left as if nothing were missing
    # (from the last deleted position on, so catching up meets no deleted row either).
    with outbox.read():
        start = server.parse_cursor(cursor)[1]
        pruned = outbox.pruned_after(start, topics)
        while pruned is not None:
            start = pruned[1]
            pruned = outbox.pruned_after(start, topics)
        return dataclasses.replace(plan, stale=None, start=start, reorg_seen=outbox.latest_reorg_id())


server.plan_resume = plan_resume

if __name__ == "__main__":
    server.main()
