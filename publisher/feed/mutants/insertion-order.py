#!/usr/bin/env python3
"""Server mutant "insertion-order" (Python): it sends rows in the order the indexer inserted them
(the blocks' rowid), not in cursor order. Usually the two agree; when the indexer writes a
reorganisation's new blocks newest first (one transaction, which no cursor-ordered reader can
tell), the new branch goes out backwards, and a consumer that drops what is not above its cursor
loses rows.

It breaks this line of the server contract (section 3): "every outbox row that involves a
followed account with a cursor above it, in cursor order", and "Live: each connection receives,
in cursor order and exactly as committed, every new row".

Only `open_outbox` is replaced, by an outbox whose page of rows (`rows_after`) is in insertion
order. Killed by feed-server-reorg: after its reorganisations the new branch's rows arrive out of
cursor order.
Run: python3 publisher/feed/mutants/insertion-order.py
"""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ next to the reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import server  # noqa: E402  the reference, publisher/feed/python/server.py

ROWS_IN_INSERTION_ORDER = """
SELECT o.block_number, o.log_index, o.block_hash, o.tx_hash, o.type, o.from_account, o.to_account, o.amount
FROM outbox o JOIN blocks b ON b.hash = o.block_hash
WHERE o.chain_id = ? AND (o.block_number, o.log_index) > (?, ?)
  AND (o.from_account IN (SELECT value FROM json_each(?)) OR o.to_account IN (SELECT value FROM json_each(?)))
ORDER BY b.rowid, o.log_index LIMIT ?"""


class InsertionOrderOutbox(server.Outbox):
    def rows_after(self, after, accounts, limit):
        topics = "[" + ",".join(f'"{a}"' for a in accounts) + "]"
        # BUG: insertion order (the blocks' rowid), not cursor order.
        rows = self.db.execute(ROWS_IN_INSERTION_ORDER, (self.chain_id, after.block, after.log_index, topics, topics, limit))
        return [server.Row(server.Position(r[0], r[1]), *r[2:]) for r in rows]


def open_outbox(path):
    return InsertionOrderOutbox(path)


server.open_outbox = open_outbox

if __name__ == "__main__":
    server.main()
