#!/usr/bin/env python3
"""Server mutant "bad-client-crashes" (Python): a client frame that is not JSON, or a line past
the 1 MiB limit, ends the whole process, taking every other client's connection with it. (An
exception out of a protocol's data_received would not: asyncio catches it and closes that one
connection. The bug here is the one of a server that treats a bad frame as fatal, `sys.exit`
where it should close one connection.)

It breaks the server contract, section 5: "A client frame that is not valid JSON ... or is
longer than 1 MiB: close that connection, sending nothing first ... A bad client never takes the
server or another connection down."

Only `on_bad_frame` is replaced. Killed by feed-server-bad-clients: a client sends garbage,
another a 2 MiB line: the server exits before the run is over.
Run: python3 publisher/feed/mutants/bad-client-crashes.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py


def on_bad_frame(why: str) -> None:
    # BUG: SystemExit is not caught by the connection nor by asyncio: the process exits (status 1).
    sys.exit(f"bad frame from a client: {why}")


server.on_bad_frame = on_bad_frame

if __name__ == "__main__":
    server.main()
