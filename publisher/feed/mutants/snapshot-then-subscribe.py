#!/usr/bin/env python3
"""Server mutant "snapshot-then-subscribe" (Python): the snapshot is taken first, with the rows
that were already there behind it, and only then does the connection start following the
outbox, from wherever its head is by then. Rows committed between the two are never sent.

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt, T18):
  subscribe, buffer, snapshot, release — "subscribe first and buffer, then take the snapshot,
  then release what is after it": in the other order, an event between the snapshot and the
  subscription is lost.
and the server contract, section 3: "Nothing committed between the snapshot and going live may
be lost".

Only `start_after_snapshot` is replaced. A near miss: when nothing is committed while a snapshot
is taken, it delivers exactly what the reference does. Killed by the deterministic snapshot race
(stop@snapshot:1, rows committed while the server is stopped: they never arrive) and, often, by
a high event rate with many subscribes at cursor null.
Run: python3 publisher/feed/mutants/snapshot-then-subscribe.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py


def start_after_snapshot(conn: server.Connection, snapshot: server.Snapshot) -> server.Tracking:
    outbox = conn.shared.outbox
    # The rows behind the snapshot, as far as the head stood when it was read ...
    with outbox.read():
        rows = outbox.rows_after(snapshot.position, conn.topics, 100_000)
        backlog = [row for row in rows if row.position.block <= snapshot.head]
        head_now = outbox.head_number()
    for row in backlog:
        if not conn.send_event(row):
            break
    # BUG: ... then follow the outbox from its head now: whatever came in between is skipped.
    now = server.Position(head_now, server.AFTER_LAST_LOG)
    held = backlog[-1].position if backlog else snapshot.position
    return server.Tracking(now, held, snapshot.reorg_seen)


server.start_after_snapshot = start_after_snapshot

if __name__ == "__main__":
    server.main()
