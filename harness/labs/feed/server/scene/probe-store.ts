// A probe's store prepared before it starts: `other-chain` holds a cursor and block hash of
// another chain (the consumer contract's schema, written by the harness), so the probe's first
// subscribe carries them and must be answered with `reset stale-cursor`.

import Database from 'better-sqlite3';
import { formatCursor } from '../../../../../protocol/feed/cursor.js';

/** A chain id that is not `chainId`, and a block of it. */
export function otherChainCursor(chainId: number): { cursor: string; blockHash: string } {
  return { cursor: formatCursor({ chainId: chainId + 1, blockNumber: 5, logIndex: 0 }), blockHash: `0x${'5e'.repeat(32)}` };
}

export function seedOtherChainStore(path: string, chainId: number): void {
  const { cursor, blockHash } = otherChainCursor(chainId);
  const db = new Database(path);
  try {
    db.exec(`
CREATE TABLE feed_state (id INTEGER PRIMARY KEY CHECK (id = 1), cursor TEXT, block_hash TEXT, snapshot_cursor TEXT, snapshot_block_hash TEXT);
CREATE TABLE feed_events (cursor TEXT PRIMARY KEY, type TEXT NOT NULL, payload TEXT NOT NULL);
CREATE TABLE feed_balances (account TEXT PRIMARY KEY, amount TEXT NOT NULL);`);
    db.prepare('INSERT INTO feed_state (id, cursor, block_hash, snapshot_cursor, snapshot_block_hash) VALUES (1, ?, ?, ?, ?)').run(
      cursor,
      blockHash,
      cursor,
      blockHash,
    );
  } finally {
    db.close();
  }
}
