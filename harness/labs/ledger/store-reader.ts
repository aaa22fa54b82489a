// Reads a ledger-lab SQLite file through an independent, read-only connection (the consumer's
// own connection is never trusted). Not `immutable` and never a copy of the file: either
// would miss content still in the WAL.

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';

// The native addon is loaded on the first read, not with the lab: loading scenarios needs none.
const openDatabase = (...args: ConstructorParameters<typeof BetterSqlite3>): BetterSqlite3.Database =>
  new (createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3)(...args);

export interface StoreSnapshot {
  exists: boolean;
  /** Set when a dead writer's hot journal had to be rolled back before the file could be read. */
  recovered?: string;
  /** Why the file could not be read as a ledger store (missing table, locked, corrupt). */
  error?: string;
  checkpoint: { id: number; last: number; total: number }[];
  /** [seq, delta] pairs in seq order. */
  ledger: [number, number][];
}

export function readStore(path: string, options: { writerGone?: boolean } = {}): StoreSnapshot {
  if (!existsSync(path)) return { exists: false, checkpoint: [], ledger: [] };
  try {
    return read(path, true);
  } catch (error) {
    // A writer killed inside a transaction leaves a hot rollback journal, which a read-only
    // connection may not roll back. Once that writer is gone, let SQLite do exactly the
    // recovery the next process opening the file would do, then read the committed state.
    if ((error as { code?: string }).code === 'SQLITE_READONLY_ROLLBACK' && options.writerGone) {
      try {
        return { ...read(path, false), recovered: 'a hot rollback journal left by the killed process was rolled back before reading' };
      } catch (again) {
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

function read(path: string, readonly: boolean): StoreSnapshot {
  const db = openDatabase(path, { readonly, fileMustExist: true, timeout: 5000 });
  try {
    // One read transaction so checkpoint and ledger come from the same moment.
    return db.transaction(() => ({
      exists: true,
      checkpoint: db.prepare('SELECT id, last, total FROM checkpoint ORDER BY id').all() as StoreSnapshot['checkpoint'],
      ledger: ledgerRows(db),
    }))();
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
