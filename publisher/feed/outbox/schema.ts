// The outbox database: the only thing the push server reads (and what a student's server will
// be graded against). The indexer is its single writer; every change is one transaction, so a
// reader in a read transaction sees a chain state that really existed.
//
//   chain          the run's chain id, confirmations, and the highest block retention pruned
//   blocks         every block of every branch with its parent link and log count; `canonical` = 1
//                  on the chain (kept for good: a stale hash is traced back through them)
//   outbox         one row per log of the canonical chain, keyed (chain_id, block_number, log_index);
//                  rows of abandoned blocks are deleted by the reorg that abandons them
//   reorgs         one row per reorganisation (first abandoned block, depth, both heads)
//   safe_point     the confirmed height the snapshots are taken at, its hash and snapshot cursor
//   safe_balances  every account's balance after all logs up to the safe point (genesis included)
//   pruned         per account, the greatest cursor retention deleted among its rows
//
// Amounts are canonical decimal text (uint256 does not fit an SQLite integer).

export const OUTBOX_SCHEMA = `
CREATE TABLE IF NOT EXISTS chain (
  chain_id INTEGER PRIMARY KEY,
  confirmations INTEGER NOT NULL,
  pruned_through INTEGER NOT NULL DEFAULT -1
);
CREATE TABLE IF NOT EXISTS blocks (
  chain_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  hash TEXT NOT NULL PRIMARY KEY,
  parent_hash TEXT NOT NULL,
  time_ms INTEGER NOT NULL,
  log_count INTEGER NOT NULL,
  canonical INTEGER NOT NULL CHECK (canonical IN (0, 1))
);
CREATE UNIQUE INDEX IF NOT EXISTS blocks_canonical ON blocks (chain_id, number) WHERE canonical = 1;
CREATE TABLE IF NOT EXISTS outbox (
  chain_id INTEGER NOT NULL,
  block_number INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  block_hash TEXT NOT NULL,
  block_time_ms INTEGER NOT NULL,
  tx_hash TEXT NOT NULL,
  type TEXT NOT NULL,
  from_account TEXT NOT NULL,
  to_account TEXT NOT NULL,
  amount TEXT NOT NULL,
  PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reorgs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  chain_id INTEGER NOT NULL,
  fork_number INTEGER NOT NULL,
  depth INTEGER NOT NULL,
  added INTEGER NOT NULL,
  old_head_hash TEXT NOT NULL,
  new_head_hash TEXT NOT NULL,
  deep INTEGER NOT NULL CHECK (deep IN (0, 1))
);
CREATE TABLE IF NOT EXISTS safe_point (
  chain_id INTEGER PRIMARY KEY,
  block_number INTEGER NOT NULL,
  block_hash TEXT NOT NULL,
  log_index INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS safe_balances (
  chain_id INTEGER NOT NULL,
  account TEXT NOT NULL,
  amount TEXT NOT NULL,
  PRIMARY KEY (chain_id, account)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pruned (
  chain_id INTEGER NOT NULL,
  account TEXT NOT NULL,
  block_number INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  PRIMARY KEY (chain_id, account)
) WITHOUT ROWID;
`;

/** One outbox row as stored. */
export interface OutboxRow {
  chain_id: number;
  block_number: number;
  log_index: number;
  block_hash: string;
  block_time_ms: number;
  tx_hash: string;
  type: string;
  from_account: string;
  to_account: string;
  amount: string;
}
