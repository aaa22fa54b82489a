#!/usr/bin/env python3
"""Server mutant "drop-oldest-silently" (Python): a connection's queue that is full while its
client is not reading drops its oldest frame and carries on, like a ring buffer. The client
never learns: it gets the frames after the gap as if nothing was missing, and its store silently
lacks the dropped events.

It breaks the server contract, section 4: "One more frame while the queue is full: drop
everything pending for it, send `reset slow-consumer`, and close. Never drop a frame silently
and carry on".

Only `on_overflow` is replaced. Killed by feed-server-slow-reader: a client reading at a tenth
of the event rate, its backlog far past what the run's small socket buffers and the queue hold,
gets frames that skip events of its accounts with no reset before the gap.
Run: python3 publisher/feed/mutants/drop-oldest-silently.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py


def on_overflow(queue) -> str:
    # BUG: the oldest pending frame is thrown away and the connection goes on as if whole.
    queue.drop_oldest()
    return "carry-on"


server.on_overflow = on_overflow

if __name__ == "__main__":
    server.main()
