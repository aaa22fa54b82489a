#!/usr/bin/env python3
"""Server mutant "revoke-wrong-point" (Python): a subscribe whose block hash was abandoned is
answered with a revoke from the cursor's own block instead of the fork point, where the
abandoned branch left the canonical chain. The abandoned rows between the fork point and the
cursor's block stay in the consumer's store, and it replays the new branch only from its
cursor's block.

It breaks this line of the server contract (section 3): "a `blockHash` on an abandoned branch:
`revoke` with `fromCursor` = position `0000` of the first block where that branch left the
canonical chain; then every row from there on".

Only `plan_resume` is replaced. Killed by feed-server-reorg: a probe is away while the chain
abandons blocks below its cursor's block; its resubscribe gets a revoke from the wrong point.
Run: python3 publisher/feed/mutants/revoke-wrong-point.py
"""

import dataclasses
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py

reference_plan_resume = server.plan_resume


def plan_resume(outbox, cursor, block_hash, topics):
    plan = reference_plan_resume(outbox, cursor, block_hash, topics)
    if plan.stale is not None or plan.revoke_from is None:
        return plan
    # BUG: the revoke starts at the cursor's block, not at the fork point below it.
    block = server.parse_cursor(cursor)[1].block
    return dataclasses.replace(plan, revoke_from=block, start=server.Position(block, server.BEFORE_FIRST_LOG))


server.plan_resume = plan_resume

if __name__ == "__main__":
    server.main()
