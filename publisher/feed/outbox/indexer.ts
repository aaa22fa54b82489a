// The indexer: the single writer of the outbox database. It turns chain changes (new blocks,
// reorganisations) into outbox rows, keeps the confirmed balances the snapshots are read from,
// and applies retention. Each change is one transaction: a reader never sees half a reorg.

import Database from 'better-sqlite3';
import { MAX_UINT256 } from '../../../protocol/feed/amount.js';
import type { Block, ChainChange } from '../chain/chain.js';
import { OUTBOX_SCHEMA } from './schema.js';

export interface IndexerInit {
  chainId: number;
  confirmations: number;
  genesis: Block;
  genesisBalances: ReadonlyMap<string, bigint>;
  /** Delete confirmed rows whose block is older than this much virtual time behind the head. */
  retentionMs?: number;
  /**
   * Insert a reorganisation's new blocks newest first (still one transaction, invisible to a
   * reader that reads by cursor): the outbox's insertion order then differs from cursor order,
   * which a server that serves rows in insertion order gets wrong (the server runs set it).
   */
  newestFirstAfterReorg?: boolean;
}

type Row = { type: string; from_account: string; to_account: string; amount: string };

export class OutboxIndexer {
  private readonly db: Database.Database;
  private readonly chainId: number;
  private readonly confirmations: number;
  private readonly retentionMs: number | undefined;
  private readonly newestFirstAfterReorg: boolean;

  /** Creates the outbox database at `path` (a new file) with the genesis block and balances. */
  constructor(path: string, init: IndexerInit) {
    this.db = new Database(path);
    this.chainId = init.chainId;
    this.confirmations = init.confirmations;
    this.retentionMs = init.retentionMs;
    this.newestFirstAfterReorg = init.newestFirstAfterReorg ?? false;
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(OUTBOX_SCHEMA);
    this.db.transaction(() => {
      if (this.db.prepare('SELECT 1 FROM chain').get()) throw new Error(`${path} already holds an outbox; the indexer starts from genesis`);
      this.db.prepare('INSERT INTO chain (chain_id, confirmations) VALUES (?, ?)').run(this.chainId, this.confirmations);
      this.insertBlock(init.genesis);
      const put = this.db.prepare('INSERT INTO safe_balances (chain_id, account, amount) VALUES (?, ?, ?)');
      for (const [account, amount] of init.genesisBalances) put.run(this.chainId, account, amount.toString());
      this.db.prepare('INSERT INTO safe_point (chain_id, block_number, block_hash, log_index) VALUES (?, 0, ?, 0)').run(this.chainId, init.genesis.hash);
    })();
  }

  /** Writes one chain change, moves the safe point, applies retention: all in one transaction. */
  apply(change: ChainChange): void {
    this.db.transaction(() => {
      if (change.kind === 'block') this.insertBlock(change.block);
      else this.reorganise(change);
      this.advanceSafePoint();
      if (this.retentionMs !== undefined) this.applyRetention(this.retentionMs);
    })();
  }

  /** Deletes the outbox rows of blocks up to `blockNumber` (never above the safe height); returns how many. */
  pruneThrough(blockNumber: number): number {
    return this.db.transaction(() => this.prune(blockNumber))();
  }

  close(): void {
    this.db.close();
  }

  private insertBlock(block: Block): void {
    this.db
      .prepare('INSERT INTO blocks (chain_id, number, hash, parent_hash, time_ms, log_count, canonical) VALUES (?, ?, ?, ?, ?, ?, 1)')
      .run(this.chainId, block.number, block.hash, block.parentHash, block.timeMs, block.logs.length);
    const insert = this.db.prepare(
      `INSERT INTO outbox (chain_id, block_number, log_index, block_hash, block_time_ms, tx_hash, type, from_account, to_account, amount)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const log of block.logs) {
      insert.run(this.chainId, block.number, log.logIndex, block.hash, block.timeMs, log.txHash, log.type, log.from, log.to, log.amount.toString());
    }
  }

  private reorganise(change: Extract<ChainChange, { kind: 'reorg' }>): void {
    const { forkNumber, abandoned, added } = change;
    const oldHead = abandoned.at(-1)!;
    const chain = this.db.prepare('SELECT pruned_through FROM chain WHERE chain_id = ?').get(this.chainId) as { pruned_through: number };
    if (forkNumber <= chain.pruned_through)
      throw new Error(`reorg from block ${forkNumber} reaches into pruned history (pruned through ${chain.pruned_through})`);
    const safe = this.safePoint();
    if (forkNumber <= safe.block_number) {
      // A deep reorg: the confirmed balances lose the abandoned confirmed blocks' logs.
      const rows = this.db
        .prepare('SELECT type, from_account, to_account, amount FROM outbox WHERE chain_id = ? AND block_number BETWEEN ? AND ?')
        .all(this.chainId, forkNumber, safe.block_number) as Row[];
      this.applyToSafeBalances(rows, -1n);
      this.setSafePoint(forkNumber - 1);
    }
    const unmark = this.db.prepare('UPDATE blocks SET canonical = 0 WHERE hash = ? AND canonical = 1');
    for (const block of abandoned) {
      if (unmark.run(block.hash).changes !== 1) throw new Error(`abandoned block ${block.number} ${block.hash} is not on the indexed chain`);
    }
    this.db.prepare('DELETE FROM outbox WHERE chain_id = ? AND block_number >= ?').run(this.chainId, forkNumber);
    for (const block of this.newestFirstAfterReorg ? [...added].reverse() : added) this.insertBlock(block);
    this.db
      .prepare('INSERT INTO reorgs (chain_id, fork_number, depth, added, old_head_hash, new_head_hash, deep) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(this.chainId, forkNumber, abandoned.length, added.length, oldHead.hash, added.at(-1)!.hash, change.deep ? 1 : 0);
  }

  private head(): { number: number; time_ms: number } {
    return this.db.prepare('SELECT number, time_ms FROM blocks WHERE chain_id = ? AND canonical = 1 ORDER BY number DESC LIMIT 1').get(this.chainId) as {
      number: number;
      time_ms: number;
    };
  }

  private safePoint(): { block_number: number } {
    return this.db.prepare('SELECT block_number FROM safe_point WHERE chain_id = ?').get(this.chainId) as { block_number: number };
  }

  /** Moves the safe point forward to head - confirmations, adding the newly confirmed logs. */
  private advanceSafePoint(): void {
    const target = Math.max(0, this.head().number - this.confirmations);
    const from = this.safePoint().block_number;
    if (target <= from) return;
    const rows = this.db
      .prepare('SELECT type, from_account, to_account, amount FROM outbox WHERE chain_id = ? AND block_number > ? AND block_number <= ?')
      .all(this.chainId, from, target) as Row[];
    this.applyToSafeBalances(rows, 1n);
    this.setSafePoint(target);
  }

  /** The snapshot cursor of a safe block is its last log (or position 0 when it has none). */
  private setSafePoint(number: number): void {
    const block = this.db.prepare('SELECT hash, log_count FROM blocks WHERE chain_id = ? AND number = ? AND canonical = 1').get(this.chainId, number) as
      | { hash: string; log_count: number }
      | undefined;
    if (!block) throw new Error(`no canonical block ${number} for the safe point`);
    this.db
      .prepare('UPDATE safe_point SET block_number = ?, block_hash = ?, log_index = ? WHERE chain_id = ?')
      .run(number, block.hash, Math.max(0, block.log_count - 1), this.chainId);
  }

  private applyToSafeBalances(rows: readonly Row[], sign: 1n | -1n): void {
    const get = this.db.prepare('SELECT amount FROM safe_balances WHERE chain_id = ? AND account = ?').pluck();
    const balances = new Map<string, bigint>();
    const balance = (account: string) => balances.get(account) ?? BigInt((get.get(this.chainId, account) as string | undefined) ?? '0');
    for (const row of rows) {
      if (row.type !== 'Transfer' || row.from_account === row.to_account) continue;
      const move = BigInt(row.amount) * sign;
      balances.set(row.from_account, balance(row.from_account) - move);
      balances.set(row.to_account, balance(row.to_account) + move);
    }
    const put = this.db.prepare(
      'INSERT INTO safe_balances (chain_id, account, amount) VALUES (?, ?, ?) ON CONFLICT (chain_id, account) DO UPDATE SET amount = excluded.amount',
    );
    for (const [account, amount] of balances) {
      if (amount < 0n || amount > MAX_UINT256) throw new Error(`confirmed balance of ${account} left 0..2^256-1: ${amount}`);
      put.run(this.chainId, account, amount.toString());
    }
  }

  private applyRetention(retentionMs: number): void {
    const cutoff = this.head().time_ms - retentionMs;
    const oldest = this.db.prepare('SELECT max(number) FROM blocks WHERE chain_id = ? AND canonical = 1 AND time_ms < ?').pluck().get(this.chainId, cutoff) as
      | number
      | null;
    if (oldest !== null) this.prune(oldest);
  }

  private prune(blockNumber: number): number {
    const through = Math.min(blockNumber, this.safePoint().block_number);
    const chain = this.db.prepare('SELECT pruned_through FROM chain WHERE chain_id = ?').get(this.chainId) as { pruned_through: number };
    if (through <= chain.pruned_through) return 0;
    // For each account, the greatest cursor among the rows about to go (as sender or recipient).
    this.db
      .prepare(
        `INSERT INTO pruned (chain_id, account, block_number, log_index)
         SELECT ?, account, block_number, log_index FROM (
           SELECT account, block_number, log_index,
                  row_number() OVER (PARTITION BY account ORDER BY block_number DESC, log_index DESC) AS rank
           FROM (SELECT from_account AS account, block_number, log_index FROM outbox WHERE chain_id = ? AND block_number <= ?
                 UNION ALL
                 SELECT to_account, block_number, log_index FROM outbox WHERE chain_id = ? AND block_number <= ?))
         WHERE rank = 1
         ON CONFLICT (chain_id, account) DO UPDATE SET block_number = excluded.block_number, log_index = excluded.log_index
         WHERE (excluded.block_number, excluded.log_index) > (pruned.block_number, pruned.log_index)`,
      )
      .run(this.chainId, this.chainId, through, this.chainId, through);
    const deleted = this.db.prepare('DELETE FROM outbox WHERE chain_id = ? AND block_number <= ?').run(this.chainId, through).changes;
    this.db.prepare('UPDATE chain SET pruned_through = ? WHERE chain_id = ?').run(through, this.chainId);
    return deleted;
  }
}
