#!/usr/bin/env python3
"""Server mutant "unbounded-queue" (Python): a connection's queue has no limit. A client that
does not keep up is never reset: everything produced for it waits in the server's memory, which
grows with the client's backlog for as long as the client lags.

It breaks the server contract, section 4: "A connection may have at most
`CHAOSLAB_QUEUE_LIMIT` frames pending ... One more frame while the queue is full: drop
everything pending for it, send `reset slow-consumer`, and close", and "One slow client costs
the server at most its queue".

Only `on_overflow` is replaced. Killed by feed-server-slow-reader: its slow client falls
thousands of frames behind and no `reset slow-consumer` comes.
Run: python3 publisher/feed/mutants/unbounded-queue.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py


def on_overflow(queue) -> str:  # noqa: ARG001
    # BUG: the limit is never enforced: the queue keeps every frame, however far behind the client is.
    return "carry-on"


server.on_overflow = on_overflow

if __name__ == "__main__":
    server.main()
