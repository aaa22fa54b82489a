#!/usr/bin/env python3
"""Mutant "continue-after-malformed" (Python twin of continue-after-malformed.ts): on a
malformed line it logs to stderr and carries on with the next line instead of closing.

It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
  「不正なメッセージを読んだあとで、そのまま次の行から続けると、実際に抜けたコマンドを
    隠してしまうおそれがあるため、接続を終了します。」
  "After reading a malformed message the connection is closed, because carrying on with the
   next line could hide a command that was really lost."

Valid streams never reach the except — a near miss. (Over-long fragments and a final
fragment are reported by read_line, outside consume_line, so they still end the session.)
Killed by: malformed-double-space (any malformed-* scenario whose bad line reaches
parse_line does) — the valid EVENT k after the bad line is applied and ACKed, and the
consumer waits for the publisher to close instead of hanging up.
Run: python3 consumer/ledger/mutants/continue-after-malformed.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.consume_line


async def consume_line(s: client.Session, line: bytes) -> None:
    try:
        await _reference(s, line)
    except client.Malformed as err:
        print(f"skipping malformed line: {err}", file=sys.stderr)  # BUG: skip it and read on


client.consume_line = consume_line

if __name__ == "__main__":
    client.main()
