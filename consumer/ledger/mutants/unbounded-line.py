#!/usr/bin/env python3
"""Mutant "unbounded-line" (Python twin of unbounded-line.ts): no 64-byte limit while
reading; the StreamReader buffers until it sees an LF, however long. The per-await timeout
is kept, as in the reference.

It breaks this sentence of the seed (seeds/000_c5229d556f786ea5.txt):
  「1行の上限は64バイトで、open_connectionのStreamReader limitも64に設定します。」
  "A line has at most 64 bytes, and open_connection's StreamReader limit is set to 64 as
   well."

Valid lines are never that long — a near miss. Given 10 KiB without LF on an open
connection, the reference closes at once (exit 2); this one waits for the rest until
CHAOSLAB_TIMEOUT_MS runs out (exit 5).
Killed by: oversized-no-newline — the consumer must close without waiting; this one waits
for its read timeout, which there (60 s) is longer than the deadline that kills it.
The one constant MAX_LINE_BYTES sets both the StreamReader limit and parse_line's length
check; a complete over-long line can still never match the grammar (its seq would exceed
MAX_SEQ), so it is still refused once its LF arrives.
Run: python3 consumer/ledger/mutants/unbounded-line.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

client.MAX_LINE_BYTES = sys.maxsize  # BUG: "an LF will come" — no limit on what is buffered

if __name__ == "__main__":
    client.main()
