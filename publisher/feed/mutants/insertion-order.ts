#!/usr/bin/env node
// Server mutant "insertion-order": it sends rows in the order the indexer inserted them (the
// blocks' rowid), not in cursor order. Usually the two agree; when the indexer writes a
// reorganisation's new blocks newest first (one transaction, which no cursor-ordered reader can
// tell), the new branch goes out backwards, and a consumer that drops what is not above its
// cursor loses rows.
//
// It breaks this line of the server contract (section 3): "every outbox row that involves a
// followed account with a cursor above it, in cursor order", and "Live: each connection
// receives, in cursor order and exactly as committed, every new row".
//
// Killed by: feed-server-reorg — after its reorganisations the new branch's rows arrive out of
// cursor order (the wire check names the first one below its predecessor).
// Python twin: insertion-order.py.

import type { OutboxRow } from '../outbox/schema.js';
import { runServer } from '../server/program.js';

// On the server's own reader, in its read transaction: only the order differs from the reference.
const ROWS_IN_INSERTION_ORDER = `SELECT o.* FROM outbox o JOIN blocks b ON b.hash = o.block_hash
  WHERE o.chain_id = ? AND (o.block_number, o.log_index) > (?, ?)
    AND (o.from_account IN (SELECT value FROM json_each(?)) OR o.to_account IN (SELECT value FROM json_each(?)))
  ORDER BY b.rowid, o.log_index LIMIT ?`;

await runServer({
  steps: {
    page(reader, after, topics, limit) {
      const accounts = JSON.stringify(topics);
      // BUG: insertion order (the blocks' rowid), not cursor order.
      return reader.rowsOf<OutboxRow>(ROWS_IN_INSERTION_ORDER, reader.chainId, after.block, after.logIndex, accounts, accounts, limit);
    },
  },
});
