#!/usr/bin/env python3
"""Mutant "lenient-parser" (Python twin of lenient-parser.ts): the student's parser,
line.decode().strip().split() and int(). It accepts CRLF, '+5', '-0', leading zeros, tabs,
double and trailing spaces, '1_0' and non-ASCII digits such as '１', as long as the keyword
is exactly EVENT/RESYNC, the field count is right and the delta is within -1000..1000.

It breaks these sentences of the seed (seeds/000_c5229d556f786ea5.txt):
  「先頭の0、+符号、-0、CRLF、改行のない最後の断片は許可しません。厳格な文法は、
    「数字に変換できたからよい」と「約束したメッセージである」を区別させるために、
    著者が決めたものです。」
  "Leading zeros, a + sign, -0, CRLF and a final fragment without a newline are not allowed.
   The strict grammar was chosen by the author to make you tell 'it converted to a number,
   so it is fine' from 'it is the message we promised'."

Every valid line gives the same event — a near miss (a final fragment is still refused by
read_line).
Killed by: malformed-plus-sign (and likewise malformed-crlf, -minus-zero, -leading-zero,
-tab, -double-space): the line converts to numbers, so it is applied and ACKed, and so is
everything after it.
Run: python3 consumer/ledger/mutants/lenient-parser.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py


def parse_line(line: bytes) -> tuple[str, int, int]:
    # BUG: "it converted to a number" taken for "it is the promised message"
    try:
        word, *fields = line.decode().strip().split()
        nums = [int(f) for f in fields]
    except ValueError:  # also UnicodeDecodeError, and an empty line
        raise client.Malformed(f"cannot parse {line!r}") from None
    if word == "EVENT" and len(nums) == 2 and nums[0] >= 0 and -1000 <= nums[1] <= 1000:
        return ("event", nums[0], nums[1])
    if word == "RESYNC" and len(nums) == 1:
        return ("resync", nums[0], 0)
    raise client.Malformed(f'not "EVENT <seq> <delta>" or "RESYNC <seq>": {line!r}')


client.parse_line = parse_line

if __name__ == "__main__":
    client.main()
