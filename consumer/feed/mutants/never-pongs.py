#!/usr/bin/env python3
"""Mutant "never-pongs" (Python twin of never-pongs.ts): the server's pings are read and dropped;
no pong is ever sent (the consumer's own pings still go out).

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
  「ハートビートは双方向です。一方だけ送ると、片側しか相手の停止を判定できません。」
  "Heartbeats go both ways. If only one side sends them, only one side can tell that the
   other has stopped."

A near miss: feed-happy-path has no quiet moment, so the server never pings there. Killed by:
feed-acceptance (expect.quiet_ping, and its stalls): "left 5 pings of 10 unanswered ... every ping
must be answered with a pong carrying the same id".
Run: python3 consumer/feed/mutants/never-pongs.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py


def answer_ping(s: client.Session, id_text: str) -> None:  # noqa: ARG001
    pass  # BUG: the ping is not answered


client.answer_ping = answer_ping

if __name__ == "__main__":
    client.main()
