#!/usr/bin/env python3
"""Server mutant "no-heartbeat" (Python): connections have no heartbeat. The server never pings
a client it has nothing to send to, and never closes one it has not heard from: a half-open
client (its peer gone without a FIN) holds its connection and its queue for ever. Pings from
clients are still answered.

It breaks the server contract, section 5: "Send `ping` after `CHAOSLAB_PING_MS` without
sending; ... close a connection on which nothing arrived for `CHAOSLAB_IDLE_MS`".

Only `start_heartbeat` is replaced. Killed by feed-server-heartbeats: a client that subscribes
to a quiet account and then sends nothing gets no ping, and is still open long after
CHAOSLAB_IDLE_MS.
Run: python3 publisher/feed/mutants/no-heartbeat.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py


class NoHeartbeat:
    """BUG: no timers at all: nothing is sent on a silent connection, nothing notices a dead one."""

    def sent(self) -> None:
        pass

    def received(self) -> None:
        pass

    def stop(self) -> None:
        pass


def start_heartbeat(ping_ms, idle_ms, ping, idle) -> NoHeartbeat:  # noqa: ARG001
    return NoHeartbeat()


server.start_heartbeat = start_heartbeat

if __name__ == "__main__":
    server.main()
