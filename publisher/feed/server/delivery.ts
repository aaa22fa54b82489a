// What a connection sends next, decided from the outbox alone. Each function runs its queries
// in one read transaction, so every decision is about a chain state that really existed; the
// connection only carries the results out (frames, hooks, transcript).
//
// Two positions describe a connection: `read`, how far it has read the outbox (rows of other
// accounts included), and `held`, the greatest position the consumer may already hold (its
// resume cursor, its snapshot, an event sent or queued). A reorganisation rewinds `read` to
// the fork point, and is revoked only if `held` reaches it.

import { parseCursor } from '../../../protocol/feed/cursor.js';
import type { OutboxReader, ReorgRecord } from '../outbox/reader.js';
import type { OutboxRow } from '../outbox/schema.js';
import { type Position, comparePositions, positionAfterBlock, positionBeforeBlock, positionOf } from '../outbox/position.js';

/**
 * The answer to `subscribe` with a cursor (server contract, section 3): replay (after a revoke
 * when the consumer's block was abandoned), or `reset stale-cursor` — when retention deleted a
 * row the consumer never saw, or when the cursor cannot be traced to a block of this outbox.
 */
export type ResumePlan =
  | { kind: 'stale'; account: string; pruned: Position }
  | { kind: 'untraceable'; why: string }
  | { kind: 'replay'; from: Position; reorgSeen: number; revokeFromBlock?: number; why?: string };

export function planResume(reader: OutboxReader, cursor: string, blockHash: string, topics: readonly string[]): ResumePlan {
  return reader.read(() => {
    const parsed = parseCursor(cursor);
    if (parsed.chainId !== reader.chainId) return { kind: 'untraceable', why: `chain id ${parsed.chainId} is not this outbox's chain ${reader.chainId}` };
    const at = positionOf(parsed);
    const where = reader.locate(blockHash);
    // Only a hash this outbox knows, of the cursor's own block, says where the consumer stands;
    // guessing (revoking from the cursor's block, say) could serve a partial history as complete.
    if (where.kind === 'unknown') return { kind: 'untraceable', why: `block hash ${blockHash} is not a block of this chain` };
    if (where.number !== at.block) return { kind: 'untraceable', why: `block hash ${blockHash} is block ${where.number}, not the cursor's block ${at.block}` };
    const revokeFromBlock = where.kind === 'abandoned' ? where.forkNumber : undefined;
    const from = revokeFromBlock === undefined ? at : positionBeforeBlock(revokeFromBlock);
    // Stale wins over revoke: a fork point below what retention deleted cannot be replayed from.
    const pruned = reader.prunedAfter(from, topics);
    if (pruned) return { kind: 'stale', account: pruned.account, pruned: pruned.position };
    if (revokeFromBlock === undefined) return { kind: 'replay', from, reorgSeen: reader.latestReorgId() };
    const why = `block ${at.block} ${blockHash} was abandoned; its branch left the chain at block ${revokeFromBlock}`;
    return { kind: 'replay', from, reorgSeen: reader.latestReorgId(), revokeFromBlock, why };
  });
}

export interface SnapshotPlan {
  position: Position;
  blockHash: string;
  balances: [string, bigint][];
  reorgSeen: number;
  /** The outbox's head when the snapshot was read. */
  head: number;
}

export function planSnapshot(reader: OutboxReader, topics: readonly string[]): SnapshotPlan {
  return reader.read(() => {
    const snapshot = reader.safeSnapshot(topics);
    return {
      position: { block: snapshot.blockNumber, logIndex: snapshot.logIndex },
      blockHash: snapshot.blockHash,
      balances: snapshot.balances,
      reorgSeen: reader.latestReorgId(),
      head: reader.head().number,
    };
  });
}

/** Where a connection's delivery starts once its snapshot was read and queued. */
export interface SnapshotFollow {
  state: DeliveryState;
}

/** The connection's output, as a step that decides where delivery starts may use it. */
export interface SnapshotOutput {
  /** Queues these rows' event frames behind the snapshot frame, in this order. */
  send(rows: readonly OutboxRow[]): void;
  /** Settles once every frame queued so far has been handed to the kernel (or the connection is gone). */
  written(): Promise<void>;
}

/**
 * The steps of a connection a server mutant may replace (publisher/feed/mutants/), each a
 * decision from the outbox; the reference's are `REFERENCE_STEPS`.
 */
export interface DeliverySteps {
  /**
   * After a snapshot at `plan` was read, its hook ran (time may have passed) and its frame was
   * queued on `out`: where delivery goes on from. Nothing else is sent on the connection until
   * it settles.
   */
  followFromSnapshot(reader: OutboxReader, topics: readonly string[], plan: SnapshotPlan, out: SnapshotOutput): SnapshotFollow | Promise<SnapshotFollow>;
  /** The answer to a subscribe with a cursor: `planResume`. */
  resume(reader: OutboxReader, cursor: string, blockHash: string, topics: readonly string[]): ResumePlan;
  /** The next rows after `after` that involve `topics`, at most `limit`, in cursor order (inside a read transaction). */
  page(reader: OutboxReader, after: Position, topics: readonly string[], limit: number): OutboxRow[];
}

export const REFERENCE_STEPS: DeliverySteps = {
  // Subscribe, buffer, snapshot, release: the outbox is the buffer. Reading on from the
  // snapshot's own position delivers everything committed after it, however long ago it was read.
  followFromSnapshot: (_reader, _topics, plan) => ({ state: { read: plan.position, held: plan.position, reorgSeen: plan.reorgSeen } }),
  resume: planResume,
  page: (reader, after, topics, limit) => reader.eventsAfter(after, topics, limit),
};

export interface DeliveryState {
  read: Position;
  held: Position;
  reorgSeen: number;
}

export interface DeliveryStep {
  state: DeliveryState;
  /** Reorganisations seen since the last step, and whether each one is revoked on this connection. */
  reorgs: { reorg: ReorgRecord; revoke: boolean }[];
  /** Retention deleted a row of this connection's accounts that it never read. */
  stale?: { account: string; pruned: Position };
  rows: OutboxRow[];
  /** True when `rows` reach the head (the connection is caught up). */
  caughtUp: boolean;
}

/**
 * Reads the next rows for a connection: one page of at most `pageSize` while catching up, or
 * everything up to the head when live (pages of `pageSize`, all in the same transaction).
 */
export function planDelivery(
  reader: OutboxReader,
  state: DeliveryState,
  topics: readonly string[],
  pageSize: number,
  live: boolean,
  page: DeliverySteps['page'] = REFERENCE_STEPS.page,
): DeliveryStep {
  return reader.read(() => {
    let { read, held } = state;
    const reorgs = reader.reorgsAfter(state.reorgSeen).map((reorg) => {
      const forkStart = positionBeforeBlock(reorg.forkNumber);
      const revoke = comparePositions(held, forkStart) > 0;
      if (revoke) held = forkStart;
      if (comparePositions(read, forkStart) > 0) read = forkStart;
      return { reorg, revoke };
    });
    const reorgSeen = reorgs.at(-1)?.reorg.id ?? state.reorgSeen;
    const pruned = reader.prunedAfter(read, topics);
    if (pruned) return { state: { read, held, reorgSeen }, reorgs, stale: { account: pruned.account, pruned: pruned.position }, rows: [], caughtUp: false };
    const rows: OutboxRow[] = [];
    let caughtUp = false;
    do {
      const got = page(reader, read, topics, pageSize);
      rows.push(...got);
      caughtUp = got.length < pageSize;
      // A short page is the end of the outbox: everything up to the head has been read.
      read = caughtUp ? positionAfterBlock(reader.head().number) : { block: got.at(-1)!.block_number, logIndex: got.at(-1)!.log_index };
    } while (live && !caughtUp);
    const last = rows.at(-1);
    if (last) held = { block: last.block_number, logIndex: last.log_index };
    return { state: { read, held, reorgSeen }, reorgs, rows, caughtUp };
  });
}
