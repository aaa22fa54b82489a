#!/usr/bin/env python3
"""Mutant "no-idle-timeout" (Python twin of no-idle-timeout.ts): CHAOSLAB_IDLE_MS is validated
but never applied: a connection on which nothing arrives stays open for ever (and so does a
connect that hangs).

It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
  「両側にタイムアウト判定が必要です。なければ半開接続が残ります。」
  "Both sides need a timeout check; without one, half-open connections remain."

A server that keeps sending or closes cleanly never lets the timeout matter — a near miss.
Killed by: feed-half-open — the link goes half-open; this one keeps the dead connection and
never connects again while the link is dead.
Run: python3 consumer/feed/mutants/no-idle-timeout.py
"""

import dataclasses
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/feed/python/client.py

_reference = client.parse_env


def parse_env(env: dict[str, str]) -> client.Config:
    return dataclasses.replace(_reference(env), idle_ms=client.MAX_MS)  # BUG: checked, then never used


client.parse_env = parse_env

if __name__ == "__main__":
    client.main()
