#!/usr/bin/env python3
"""Mutant "timeout-default" (Python twin of timeout-default.ts): a missing, zero or unparsable
CHAOSLAB_TIMEOUT_MS is quietly replaced by a default (3000 ms) instead of being refused.

It breaks this rule of the contract (consumer/ledger/CONTRACT.md, section 1, from the seed's
exit codes, seeds/000_c5229d556f786ea5.txt: "64 missing or invalid environment (nothing
connected)"): "If a required variable is missing or invalid (a port that is not a number, a
timeout of 0, ...), print a clear message to stderr naming the variable and exit with 64 before
connecting anything."

chaoslab always gives a valid timeout otherwise — a near miss.
Killed by: bad-environment-timeout — given CHAOSLAB_TIMEOUT_MS=0, this consumer connects,
processes the stream and exits 0 instead of exiting 64 before connecting.
Run: python3 consumer/ledger/mutants/timeout-default.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import client  # noqa: E402  the reference, consumer/ledger/python/client.py

_reference = client.parse_env


def parse_env(env: dict[str, str]) -> client.Config:
    given = env.get("CHAOSLAB_TIMEOUT_MS", "")
    if not (given.isascii() and given.isdigit() and int(given) >= 1):
        env = {**env, "CHAOSLAB_TIMEOUT_MS": "3000"}  # BUG: a bad value becomes the default
    return _reference(env)


client.parse_env = parse_env

if __name__ == "__main__":
    client.main()
