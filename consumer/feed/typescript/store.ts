// The store (consumer/feed/CONTRACT.md, sections 3 and 4): the SQLite schema, and every frame
// that changes it applied in ONE transaction together with the cursor: event, snapshot, revoke.

import Database from 'better-sqlite3';
import type { Db, Outcome, Session } from './session.js';
import { type EventFrame, type SnapshotFrame, type Transfer, isCursor } from './wire.js';

/** SQLite busy timeout: short, so that a lock held elsewhere cannot delay SIGTERM past 2 s. */
export const BUSY_TIMEOUT_MS = 1500;

export interface FeedState {
  cursor: string | null;
  blockHash: string | null;
  snapshotCursor: string | null;
  snapshotBlockHash: string | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS feed_state (id INTEGER PRIMARY KEY CHECK (id = 1),
  cursor TEXT, block_hash TEXT,
  snapshot_cursor TEXT, snapshot_block_hash TEXT);
CREATE TABLE IF NOT EXISTS feed_events (cursor TEXT PRIMARY KEY, type TEXT NOT NULL,
  payload TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS feed_balances (account TEXT PRIMARY KEY, amount TEXT NOT NULL);
INSERT OR IGNORE INTO feed_state (id) VALUES (1);`;

export function readState(db: Db): FeedState {
  const row = db.prepare('SELECT cursor, block_hash, snapshot_cursor, snapshot_block_hash FROM feed_state WHERE id = 1').get() as
    | { cursor: string | null; block_hash: string | null; snapshot_cursor: string | null; snapshot_block_hash: string | null }
    | undefined;
  return {
    cursor: row?.cursor ?? null,
    blockHash: row?.block_hash ?? null,
    snapshotCursor: row?.snapshot_cursor ?? null,
    snapshotBlockHash: row?.snapshot_block_hash ?? null,
  };
}

/**
 * Opens (or creates) the store: the tables and the row `(1, NULL, NULL, NULL, NULL)` only when
 * absent, never resetting what an earlier process committed. A file that is not such a store
 * (another schema, a cursor that is not a cursor) cannot be used: the caller exits 64.
 */
export function openStore(path: string): Db {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec(SCHEMA);
    db.exec('COMMIT');
    db.prepare('SELECT cursor, type, payload FROM feed_events LIMIT 0').all();
    db.prepare('SELECT account, amount FROM feed_balances LIMIT 0').all();
    const st = readState(db);
    for (const c of [st.cursor, st.snapshotCursor]) {
      if (c !== null && (typeof c !== 'string' || !isCursor(c))) throw new Error(`the stored cursor ${JSON.stringify(c)} is not a cursor`);
    }
    return db;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    throw err;
  }
}

function balanceOf(db: Db, account: string): bigint {
  const row = db.prepare('SELECT amount FROM feed_balances WHERE account = ?').get(account) as { amount: string } | undefined;
  return row === undefined ? 0n : BigInt(row.amount);
}

function addBalance(db: Db, account: string, delta: bigint): void {
  const amount = balanceOf(db, account) + delta;
  db.prepare('INSERT OR REPLACE INTO feed_balances (account, amount) VALUES (?, ?)').run(account, amount.toString());
}

/** The Transfer fields of a payload stored by applyEvent (for undoing it). */
function storedTransfer(payload: string): Transfer {
  const p = JSON.parse(payload) as { from: string; to: string; amount: string };
  return { from: p.from, to: p.to, amount: BigInt(p.amount) };
}

export async function applyEvent(s: Session, ev: EventFrame): Promise<Outcome> {
  const { db } = s;
  db.exec('BEGIN IMMEDIATE');
  try {
    return await s.steps.applyEventInTransaction(s, ev);
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/**
 * The body of applyEvent's transaction. The cursor is read inside it, so the duplicate
 * decision and the writes see the same state; the event, its balance changes and the new
 * cursor become visible together at COMMIT, or not at all.
 */
export async function applyEventInTransaction(s: Session, ev: EventFrame): Promise<Outcome> {
  const { db } = s;
  const { cursor } = readState(db);
  if (cursor !== null && ev.cursor <= cursor) {
    db.exec('COMMIT'); // a resend: nothing changed, no hook
    return 'duplicate';
  }
  const n = ++s.counters.apply;
  db.prepare('INSERT INTO feed_events (cursor, type, payload) VALUES (?, ?, ?)').run(ev.cursor, ev.type, ev.payloadText);
  if (ev.transfer) {
    for (const [account, delta] of s.steps.balanceEffect(s, ev.transfer)) addBalance(db, account, delta);
  }
  db.prepare('UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1').run(ev.cursor, ev.blockHash);
  if (s.config.applyDelayMs > 0) await s.pause(s.config.applyDelayMs); // the slow reader
  s.fault('apply', n);
  db.exec('COMMIT');
  s.fault('commit', n);
  return 'applied';
}

/** +amount for a followed `to`, -amount for a followed `from`; a self-transfer changes nothing. */
export function balanceEffect(s: Session, t: Transfer): Map<string, bigint> {
  const effect = new Map<string, bigint>();
  if (t.from === t.to) return effect;
  if (s.followed.has(t.to)) effect.set(t.to, t.amount);
  if (s.followed.has(t.from)) effect.set(t.from, -t.amount);
  return effect;
}

export function installSnapshot(s: Session, snap: SnapshotFrame): void {
  const { db } = s;
  db.exec('BEGIN IMMEDIATE');
  try {
    const n = ++s.counters.snapshot;
    db.exec('DELETE FROM feed_events; DELETE FROM feed_balances;');
    const insert = db.prepare('INSERT INTO feed_balances (account, amount) VALUES (?, ?)');
    for (const account of s.config.topics) insert.run(account, (snap.balances.get(account) ?? 0n).toString());
    db.prepare('UPDATE feed_state SET cursor = ?, block_hash = ?, snapshot_cursor = ?, snapshot_block_hash = ? WHERE id = 1').run(
      snap.cursor,
      snap.blockHash,
      snap.cursor,
      snap.blockHash,
    );
    s.fault('snapshot', n);
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
  s.snapshotNeeded = false;
}

/**
 * A revoke above the snapshot: one transaction deletes the events at or after fromCursor,
 * undoes their balance changes and moves the cursor back (to the greatest remaining event,
 * else the snapshot, else null). A revoke at or below the snapshot cannot be undone: no
 * transaction, and the next subscribe asks for a snapshot.
 */
export function revoke(s: Session, fromCursor: string): 'revoked' | 'snapshot-needed' {
  const { db } = s;
  const { snapshotCursor } = readState(db);
  if (snapshotCursor !== null && fromCursor <= snapshotCursor) {
    s.snapshotNeeded = true;
    return 'snapshot-needed';
  }
  db.exec('BEGIN IMMEDIATE');
  try {
    const n = ++s.counters.revoke;
    const st = readState(db);
    const gone = db.prepare('SELECT type, payload FROM feed_events WHERE cursor >= ? ORDER BY cursor DESC').all(fromCursor) as {
      type: string;
      payload: string;
    }[];
    for (const row of gone) {
      if (row.type !== 'Transfer') continue;
      for (const [account, delta] of s.steps.balanceEffect(s, storedTransfer(row.payload))) addBalance(db, account, -delta);
    }
    db.prepare('DELETE FROM feed_events WHERE cursor >= ?').run(fromCursor);
    const last = db.prepare('SELECT cursor, payload FROM feed_events ORDER BY cursor DESC LIMIT 1').get() as { cursor: string; payload: string } | undefined;
    const [cursor, blockHash] = last ? [last.cursor, (JSON.parse(last.payload) as { blockHash: string }).blockHash] : [st.snapshotCursor, st.snapshotBlockHash];
    db.prepare('UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1').run(cursor, blockHash);
    s.fault('revoke', n);
    db.exec('COMMIT');
    return 'revoked';
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}
