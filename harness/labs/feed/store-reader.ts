// Reads a feed store (contract section 3) through an independent, read-only connection: the
// consumer's own connection is never trusted. Values are kept as stored (the checker judges
// their form), in one read transaction so state, events and balances come from one moment.

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';

// The native addon is loaded on the first read, not with the lab: loading scenarios needs none.
const openDatabase = (...args: ConstructorParameters<typeof BetterSqlite3>): BetterSqlite3.Database =>
  new (createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3)(...args);

export interface FeedStateRow {
  id: unknown;
  cursor: unknown;
  block_hash: unknown;
  snapshot_cursor: unknown;
  snapshot_block_hash: unknown;
}

export interface FeedStoreSnapshot {
  exists: boolean;
  /** Set when a dead writer's hot journal had to be rolled back before the file could be read. */
  recovered?: string;
  /** Why the file could not be read as a feed store (missing table, locked, corrupt). */
  error?: string;
  /** An `at-subscribe` read: the publisher's connection number whose `subscribe` it goes with. */
  conn?: number;
  state: FeedStateRow[];
  /** [cursor, type, payload text] in cursor order. */
  events: [unknown, unknown, unknown][];
  /** [account, amount] in account order. */
  balances: [unknown, unknown][];
}

const empty = (exists: boolean, error?: string): FeedStoreSnapshot => ({
  exists,
  ...(error === undefined ? {} : { error }),
  state: [],
  events: [],
  balances: [],
});

/**
 * `timeoutMs` bounds the wait for a lock the consumer holds (SQLite's busy timeout): reads taken
 * while the publisher waits (at a subscribe) block the harness's event loop that long at worst.
 */
export function readFeedStore(path: string, options: { writerGone?: boolean; timeoutMs?: number } = {}): FeedStoreSnapshot {
  if (!existsSync(path)) return empty(false);
  const timeout = options.timeoutMs ?? 2000;
  try {
    return read(path, true, timeout);
  } catch (error) {
    // A writer killed inside a transaction leaves a hot rollback journal, which a read-only
    // connection may not roll back. Once that writer is gone, let SQLite do exactly the recovery
    // the next process opening the file would do, then read the committed state.
    if ((error as { code?: string }).code === 'SQLITE_READONLY_ROLLBACK' && options.writerGone) {
      try {
        return { ...read(path, false, timeout), recovered: 'a hot rollback journal left by the ended process was rolled back before reading' };
      } catch (again) {
        return empty(true, (again as Error).message);
      }
    }
    const code = (error as { code?: string }).code;
    return empty(true, `${(error as Error).message}${code ? ` (${code})` : ''}`);
  }
}

function read(path: string, readonly: boolean, timeout: number): FeedStoreSnapshot {
  const db = openDatabase(path, { readonly, fileMustExist: true, timeout });
  try {
    return db.transaction(() => ({
      exists: true,
      state: db.prepare('SELECT id, cursor, block_hash, snapshot_cursor, snapshot_block_hash FROM feed_state ORDER BY id').all() as FeedStateRow[],
      events: db.prepare('SELECT cursor, type, payload FROM feed_events ORDER BY cursor').raw().all() as [unknown, unknown, unknown][],
      balances: db.prepare('SELECT account, amount FROM feed_balances ORDER BY account').raw().all() as [unknown, unknown][],
    }))();
  } finally {
    db.close();
  }
}
