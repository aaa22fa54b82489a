// Reads a ledger-lab SQLite file through an independent, read-only connection (the consumer's
// own connection is never trusted). Not `immutable` and never a copy of the file: either
// would miss content still in the WAL. The consumer's store is read through its run's guard
// (harness/sandbox/store-file.ts): a file that is not one the consumer itself wrote, or that
// holds views, generated columns or too many rows, is refused and not read at all.

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { checkTables, describeRefusal, readGuarded, type StoreGuard, StoreRefused, type StoreRefusal } from '../../../sandbox/store-file.js';

// The native addon is loaded on the first read, not with the lab: loading scenarios needs none.
const sqlite = (): typeof BetterSqlite3 => createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
const openDatabase = (...args: ConstructorParameters<typeof BetterSqlite3>): BetterSqlite3.Database => new (sqlite())(...args);

/**
 * Loads the native addon (some 10 ms here) on the next turn of the event loop: a run calls this as
 * its consumer starts, so that the read after the consumer's exit, which the next incarnation
 * waits for, does not load it. better-sqlite3 loads its addon at the first open, not when it is
 * required: hence the in-memory database. A failure to load is left to that read, which reports it.
 */
export function loadStoreReaderSoon(): void {
  setImmediate(() => {
    try {
      openDatabase(':memory:').close();
    } catch {
      // reported by the read
    }
  });
}

/** What the reader selects: every name is checked to be a plain table with no generated column first. */
const READS = { checkpoint: ['id', 'last', 'total'], ledger: ['seq', 'delta'] } as const;

export interface StoreSnapshot {
  exists: boolean;
  /** Set when a dead writer's hot journal had to be rolled back before the file could be read. */
  recovered?: string;
  /** Why the file could not be read as a ledger store (missing table, locked, corrupt, refused). */
  error?: string;
  /** The harness did not read the file: it is not one the consumer itself wrote, or not within bounds (nothing of it is here). */
  refused?: StoreRefusal;
  checkpoint: { id: number; last: number; total: number }[];
  /** [seq, delta] pairs in seq order. */
  ledger: [number, number][];
}

export interface ReadOptions {
  /** The process that wrote it has ended: a hot rollback journal it left may be rolled back. */
  writerGone?: boolean;
  /** The consumer's store: read only as its run's guard allows (absent: a trusted store, the control's). */
  guard?: StoreGuard;
  /** At most this many rows per table (checked with count(*) before anything is selected). */
  maxRows?: number;
  /** Bounds the wait for a lock the consumer holds (SQLite's busy timeout; the event loop waits with it). */
  timeoutMs?: number;
}

/**
 * The most rows a ledger table may hold for a script of `events` events before the read is
 * refused: an honest consumer stores one row per event, a wrong one a few times that.
 */
export const ledgerRowBound = (events: number): number => 16 * events + 1000;

const refusedSnapshot = (refused: StoreRefusal): StoreSnapshot => ({
  exists: true,
  refused,
  error: `not read: ${describeRefusal(refused)}`,
  checkpoint: [],
  ledger: [],
});

export function readStore(path: string, options: ReadOptions = {}): StoreSnapshot {
  const { guard } = options;
  if (!guard) return existsSync(path) ? readFile(path, options) : { exists: false, checkpoint: [], ledger: [] };
  const guarded = readGuarded(path, guard, () => readFile(path, options));
  if ('absent' in guarded) return { exists: false, checkpoint: [], ledger: [] };
  if ('refused' in guarded) return refusedSnapshot(guarded.refused);
  return guarded.value;
}

function readFile(path: string, options: ReadOptions): StoreSnapshot {
  try {
    return read(path, true, options);
  } catch (error) {
    if (isRefusal(error)) throw error;
    // A writer killed inside a transaction leaves a hot rollback journal, which a read-only
    // connection may not roll back. Once that writer is gone, let SQLite do exactly the
    // recovery the next process opening the file would do, then read the committed state.
    if ((error as { code?: string }).code === 'SQLITE_READONLY_ROLLBACK' && options.writerGone) {
      try {
        return { ...read(path, false, options), recovered: 'a hot rollback journal left by the killed process was rolled back before reading' };
      } catch (again) {
        if (isRefusal(again)) throw again;
        return { exists: true, error: (again as Error).message, checkpoint: [], ledger: [] };
      }
    }
    return {
      exists: true,
      error: `${(error as Error).message}${(error as { code?: string }).code ? ` (${(error as { code?: string }).code})` : ''}`,
      checkpoint: [],
      ledger: [],
    };
  }
}

const isRefusal = (error: unknown): boolean => error instanceof StoreRefused;

function read(path: string, readonly: boolean, { maxRows = Number.POSITIVE_INFINITY, timeoutMs = 5000 }: ReadOptions): StoreSnapshot {
  const db = openDatabase(path, { readonly, fileMustExist: true, timeout: timeoutMs });
  try {
    // One read transaction so checkpoint and ledger come from the same moment.
    return db.transaction(() => {
      checkTables(db, basename(path), READS, maxRows);
      return {
        exists: true,
        checkpoint: db.prepare('SELECT id, last, total FROM checkpoint ORDER BY id').all() as StoreSnapshot['checkpoint'],
        ledger: ledgerRows(db),
      };
    })();
  } finally {
    db.close();
  }
}

/**
 * The ledger's [seq, delta] pairs in seq order. Two single-column reads zipped take a third of the
 * time of one two-column read (better-sqlite3 builds a JS array per row). Both sort by seq, then
 * delta, so rows pair up even in a store whose seq is not unique.
 */
function ledgerRows(db: BetterSqlite3.Database): [number, number][] {
  const seqs = db.prepare('SELECT seq FROM ledger ORDER BY seq, delta').pluck().all() as number[];
  const deltas = db.prepare('SELECT delta FROM ledger ORDER BY seq, delta').pluck().all() as number[];
  const rows = new Array<[number, number]>(seqs.length);
  for (let i = 0; i < seqs.length; i++) rows[i] = [seqs[i]!, deltas[i]!];
  return rows;
}
