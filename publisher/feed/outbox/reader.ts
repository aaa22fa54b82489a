// The push server's read side of the outbox database, and all it may know about the chain:
// a read-only connection, every query the server makes, and nothing else. Callers group the
// queries of one decision in `read()`, a read transaction, so they see one committed state.

import Database from 'better-sqlite3';
import type { OutboxRow } from './schema.js';
import type { Position } from './position.js';

export interface SafeSnapshot {
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  /** Every requested account, 0 when it has never held anything. */
  balances: [string, bigint][];
}

export interface ReorgRecord {
  id: number;
  forkNumber: number;
  depth: number;
  added: number;
  deep: boolean;
}

/** Where a block hash stands: on the chain, on an abandoned branch (and where it left), or unknown. */
export type HashLocation = { kind: 'canonical'; number: number } | { kind: 'abandoned'; number: number; forkNumber: number } | { kind: 'unknown' };

/** The tables the server reads (schema.ts). */
const OUTBOX_TABLES = ['chain', 'blocks', 'outbox', 'reorgs', 'safe_point', 'safe_balances', 'pruned'];

/** Attempts at a read, 1 ms apart (againIfMidCommit). */
const READ_ATTEMPTS = 100;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * A process that may not write the outbox's `-shm` file (a sealed server) can catch the WAL
 * index in the middle of the indexer's commit; SQLite then says SQLITE_READONLY_RECOVERY instead
 * of waiting. That is transient: the read is begun again a moment later.
 */
function againIfMidCommit<T>(read: () => T): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return read();
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_READONLY_RECOVERY' || attempt >= READ_ATTEMPTS) throw error;
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
}

export class OutboxReader {
  private readonly db: Database.Database;
  readonly chainId: number;
  /**
   * Every connection asks the same few queries at every outbox change: compiled once, not per
   * call (at 1 000 connections, compiling was a quarter of the server's CPU time).
   */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly inTransaction: (fn: () => unknown) => unknown;

  constructor(path: string) {
    this.db = new Database(path, { readonly: true, fileMustExist: true });
    const tables = new Set(this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
    const missing = OUTBOX_TABLES.filter((name) => !tables.has(name));
    if (missing.length) throw new Error(`${path} has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}: not an outbox database`);
    const chain = this.db.prepare('SELECT chain_id FROM chain').get() as { chain_id: number } | undefined;
    if (!chain) throw new Error(`${path} has no chain row: not an outbox database`);
    this.chainId = chain.chain_id;
    this.inTransaction = this.db.transaction((fn: () => unknown) => fn());
  }

  /** The statement of `sql`, compiled on its first use. */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  /** Runs `fn` in one read transaction (a consistent snapshot of the database; `fn` only reads). */
  read<T>(fn: () => T): T {
    return againIfMidCommit(() => this.inTransaction(fn) as T);
  }

  /**
   * Rows of a query of one's own, on this reader's connection: inside `read()`, in the same
   * snapshot as the rest of its decision (a server mutant's page in another order; a second
   * connection would see a later commit than `head()` does).
   */
  rowsOf<T>(sql: string, ...params: unknown[]): T[] {
    return this.statement(sql).all(...params) as T[];
  }

  /** Changes whenever another connection commits: the cheap "did anything happen" poll. */
  dataVersion(): number {
    return againIfMidCommit(() => this.db.pragma('data_version', { simple: true }) as number);
  }

  head(): { number: number; hash: string } {
    return this.statement('SELECT number, hash FROM blocks WHERE chain_id = ? AND canonical = 1 ORDER BY number DESC LIMIT 1').get(this.chainId) as {
      number: number;
      hash: string;
    };
  }

  safeSnapshot(accounts: readonly string[]): SafeSnapshot {
    const point = this.statement('SELECT block_number, block_hash, log_index FROM safe_point WHERE chain_id = ?').get(this.chainId) as {
      block_number: number;
      block_hash: string;
      log_index: number;
    };
    const get = this.statement('SELECT amount FROM safe_balances WHERE chain_id = ? AND account = ?').pluck();
    const balances = accounts.map((account): [string, bigint] => [account, BigInt((get.get(this.chainId, account) as string | undefined) ?? '0')]);
    return { blockNumber: point.block_number, blockHash: point.block_hash, logIndex: point.log_index, balances };
  }

  /** Follows parent links from `hash` until the canonical chain. */
  locate(hash: string): HashLocation {
    const byHash = this.statement('SELECT number, parent_hash, canonical FROM blocks WHERE chain_id = ? AND hash = ?');
    const start = byHash.get(this.chainId, hash) as { number: number; parent_hash: string; canonical: number } | undefined;
    if (!start) return { kind: 'unknown' };
    if (start.canonical) return { kind: 'canonical', number: start.number };
    let block = start;
    while (!block.canonical) {
      const parent = byHash.get(this.chainId, block.parent_hash) as typeof block | undefined;
      if (!parent) return { kind: 'unknown' };
      block = parent;
    }
    return { kind: 'abandoned', number: start.number, forkNumber: block.number + 1 };
  }

  /** Rows after `after` that involve one of `accounts`, in chain order: one replay page. */
  eventsAfter(after: Position, accounts: readonly string[], limit: number): OutboxRow[] {
    const topics = JSON.stringify(accounts);
    return this.statement(
      `SELECT * FROM outbox
         WHERE chain_id = ? AND (block_number, log_index) > (?, ?)
           AND (from_account IN (SELECT value FROM json_each(?)) OR to_account IN (SELECT value FROM json_each(?)))
         ORDER BY block_number, log_index LIMIT ?`,
    ).all(this.chainId, after.block, after.logIndex, topics, topics, limit) as OutboxRow[];
  }

  /** The last `count` rows before `before` that involve one of `accounts`, in chain order. */
  eventsBefore(before: Position, accounts: readonly string[], count: number): OutboxRow[] {
    const topics = JSON.stringify(accounts);
    const rows = this.statement(
      `SELECT * FROM outbox
         WHERE chain_id = ? AND (block_number, log_index) < (?, ?)
           AND (from_account IN (SELECT value FROM json_each(?)) OR to_account IN (SELECT value FROM json_each(?)))
         ORDER BY block_number DESC, log_index DESC LIMIT ?`,
    ).all(this.chainId, before.block, before.logIndex, topics, topics, count) as OutboxRow[];
    return rows.reverse();
  }

  latestReorgId(): number {
    return this.statement('SELECT coalesce(max(id), 0) FROM reorgs WHERE chain_id = ?').pluck().get(this.chainId) as number;
  }

  reorgsAfter(id: number): ReorgRecord[] {
    const rows = this.statement('SELECT id, fork_number, depth, added, deep FROM reorgs WHERE chain_id = ? AND id > ? ORDER BY id').all(this.chainId, id) as {
      id: number;
      fork_number: number;
      depth: number;
      added: number;
      deep: number;
    }[];
    return rows.map((r) => ({ id: r.id, forkNumber: r.fork_number, depth: r.depth, added: r.added, deep: r.deep === 1 }));
  }

  /** The greatest cursor retention deleted for one of `accounts`, when it lies after `after`: a row that reader never saw. */
  prunedAfter(after: Position, accounts: readonly string[]): { account: string; position: Position } | undefined {
    const row = this.statement(
      `SELECT account, block_number, log_index FROM pruned
         WHERE chain_id = ? AND account IN (SELECT value FROM json_each(?)) AND (block_number, log_index) > (?, ?)
         ORDER BY block_number DESC, log_index DESC LIMIT 1`,
    ).get(this.chainId, JSON.stringify(accounts), after.block, after.logIndex) as { account: string; block_number: number; log_index: number } | undefined;
    return row && { account: row.account, position: { block: row.block_number, logIndex: row.log_index } };
  }

  close(): void {
    this.db.close();
  }
}
