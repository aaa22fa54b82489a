#!/usr/bin/env python3
"""Server mutant "snapshot-then-subscribe" (Python): the way a student who has not met the race
answers a null-cursor subscribe. Read the snapshot, send it and the rows that were behind it when
it was read, wait until they are written out (handed to the kernel), and only then start
following the outbox, from wherever its head is by then. Rows committed in between are never
sent. The window is the real time the snapshot and its rows take to go out (a slow client, small
socket buffers, a busy server make it longer), not a sleep.

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt, T18):
  subscribe, buffer, snapshot, release — "subscribe first and buffer, then take the snapshot,
  then release what is after it": in the other order, an event between the snapshot and the
  subscription is lost.
and the server contract, section 3: "Nothing committed between the snapshot and going live may
be lost".

Only `start_after_snapshot` is replaced. A near miss: when nothing is committed while a snapshot
is sent, it delivers exactly what the reference does. Killed by the deterministic snapshot race
(feed-server-snapshot-race: stop@snapshot:1, rows committed while the server is stopped never
arrive) and statistically by feed-server-snapshot-storm (a commit every 20 ms while 80 clients
subscribe at cursor null: some client loses rows in nearly every run).
Run: python3 publisher/feed/mutants/snapshot-then-subscribe.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py


def start_after_snapshot(conn: server.Connection, snapshot: server.Snapshot) -> None:
    outbox = conn.shared.outbox
    # The rows behind the snapshot, as far as the head stood when it was read ...
    with outbox.read():
        rows = outbox.rows_after(snapshot.position, conn.topics, 100_000)
    backlog = [row for row in rows if row.position.block <= snapshot.head]
    for row in backlog:
        if not conn.send_event(row):
            return  # reset: nothing more to follow
    held = backlog[-1].position if backlog else snapshot.position

    def subscribe() -> None:
        # BUG: ... sent; now follow the outbox from its head now: whatever came meanwhile is skipped.
        with outbox.read():
            head_now = outbox.head_number()
        conn.follow(server.Tracking(server.Position(head_now, server.AFTER_LAST_LOG), held, snapshot.reorg_seen))
        conn.schedule_advance()

    conn.queue.when_written(subscribe)


server.start_after_snapshot = start_after_snapshot

if __name__ == "__main__":
    server.main()
