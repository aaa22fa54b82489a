// Reads a feed store (contract section 3) through an independent, read-only connection: the
// consumer's own connection is never trusted. Values are kept as stored (the checker judges
// their form), in one read transaction so state, events and balances come from one moment. The
// consumer's store is read through its run's guard (harness/sandbox/store-file.ts): a file that
// is not one the consumer itself wrote, or that holds views, generated columns or too many rows,
// is refused and not read at all.

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { checkTables, describeRefusal, readGuarded, type StoreGuard, StoreRefused, type StoreRefusal } from '../../../sandbox/store-file.js';

// The native addon is loaded on the first read, not with the lab: loading scenarios needs none.
const openDatabase = (...args: ConstructorParameters<typeof BetterSqlite3>): BetterSqlite3.Database =>
  new (createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3)(...args);

/** What the reader selects: every name is checked to be a plain table with no generated column first. */
const READS = {
  feed_state: ['id', 'cursor', 'block_hash', 'snapshot_cursor', 'snapshot_block_hash'],
  feed_events: ['cursor', 'type', 'payload'],
  feed_balances: ['account', 'amount'],
} as const;

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
  /** Why the file could not be read as a feed store (missing table, locked, corrupt, refused). */
  error?: string;
  /** The harness did not read the file: it is not one the consumer itself wrote, or not within bounds (nothing of it is here). */
  refused?: StoreRefusal;
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
 * The most rows a feed table may hold for a chain of `plan` before the read is refused: every
 * log the script can mine (reorganisations' new branches and the confirmation blocks included),
 * many times over, so that only a store far from any honest one is refused.
 */
export function feedRowBound(chain: { lastBlock: number; confirmations: number; logsPerBlock: { max: number }; reorgs: { length: number }[] }): number {
  const blocks = chain.lastBlock + chain.confirmations + chain.reorgs.reduce((sum, r) => sum + r.length, 0) + 1;
  return 16 * blocks * Math.max(1, chain.logsPerBlock.max) + 10_000;
}

export interface FeedReadOptions {
  /** The process that wrote it has ended: a hot rollback journal it left may be rolled back. */
  writerGone?: boolean;
  /**
   * Bounds the wait for a lock the consumer holds (SQLite's busy timeout): reads taken while the
   * publisher waits (at a subscribe) block the harness's event loop that long at worst.
   */
  timeoutMs?: number;
  /** The consumer's store: read only as its run's guard allows (absent: a trusted store, the control's). */
  guard?: StoreGuard;
  /** At most this many rows per table (checked with count(*) before anything is selected). */
  maxRows?: number;
}

export function readFeedStore(path: string, options: FeedReadOptions = {}): FeedStoreSnapshot {
  const { guard } = options;
  if (!guard) return existsSync(path) ? readFile(path, options) : empty(false);
  const guarded = readGuarded(path, guard, () => readFile(path, options));
  if ('absent' in guarded) return empty(false);
  if ('refused' in guarded) return { ...empty(true, `not read: ${describeRefusal(guarded.refused)}`), refused: guarded.refused };
  return guarded.value;
}

function readFile(path: string, options: FeedReadOptions): FeedStoreSnapshot {
  const timeout = options.timeoutMs ?? 2000;
  const maxRows = options.maxRows ?? Number.POSITIVE_INFINITY;
  try {
    return read(path, true, timeout, maxRows);
  } catch (error) {
    if (error instanceof StoreRefused) throw error;
    // A writer killed inside a transaction leaves a hot rollback journal, which a read-only
    // connection may not roll back. Once that writer is gone, let SQLite do exactly the recovery
    // the next process opening the file would do, then read the committed state.
    if ((error as { code?: string }).code === 'SQLITE_READONLY_ROLLBACK' && options.writerGone) {
      try {
        return { ...read(path, false, timeout, maxRows), recovered: 'a hot rollback journal left by the ended process was rolled back before reading' };
      } catch (again) {
        if (again instanceof StoreRefused) throw again;
        return empty(true, (again as Error).message);
      }
    }
    const code = (error as { code?: string }).code;
    return empty(true, `${(error as Error).message}${code ? ` (${code})` : ''}`);
  }
}

function read(path: string, readonly: boolean, timeout: number, maxRows: number): FeedStoreSnapshot {
  const db = openDatabase(path, { readonly, fileMustExist: true, timeout });
  try {
    return db.transaction(() => {
      checkTables(db, basename(path), READS, maxRows);
      return {
        exists: true,
        state: db.prepare('SELECT id, cursor, block_hash, snapshot_cursor, snapshot_block_hash FROM feed_state ORDER BY id').all() as FeedStateRow[],
        events: db.prepare('SELECT cursor, type, payload FROM feed_events ORDER BY cursor').raw().all() as [unknown, unknown, unknown][],
        balances: db.prepare('SELECT account, amount FROM feed_balances ORDER BY account').raw().all() as [unknown, unknown][],
      };
    })();
  } finally {
    db.close();
  }
}
