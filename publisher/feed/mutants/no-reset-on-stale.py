#!/usr/bin/env python3
"""Server mutant "no-reset-on-stale" (Python): a cursor older than the retention window is
answered with a replay of what is left above it instead of `reset stale-cursor`. The consumer
gets the rows retention kept and believes it holds the whole history: a partial history served
as complete.

It breaks this sentence of the server contract (section 3): "a cursor older than the window:
retention deleted a followed account's row above it ... `reset stale-cursor`, then close. Never
serve a partial history as if it were complete". A cursor of another chain or an unknown hash
is still reset.

Only `open_outbox` is replaced: its outbox never reports what retention deleted, so neither the
subscribe's answer nor the catch-up's own check sees it. (Replacing only `plan_resume` left that
check in place: on a busy machine a block whose retention deleted a row between the two reads
turned the replay into the right reset, and the mutant passed its killer.)

Killed by feed-server-stale-cursor: a probe away longer than the window resubscribes with its
old cursor; the wire check finds events where `reset stale-cursor` was due.
Run: python3 publisher/feed/mutants/no-reset-on-stale.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py


class ForgetfulOutbox(server.Outbox):
    def pruned_after(self, after, accounts):
        # BUG: retention is never consulted; whatever it left above the cursor is served as the history.
        return None


def open_outbox(path):
    return ForgetfulOutbox(path)


server.open_outbox = open_outbox

if __name__ == "__main__":
    server.main()
