// What one consumer process holds while it runs (consumer/feed/CONTRACT.md, sections 1 and 4):
// its config, store, in-memory flags and counters, and the table of steps a mutant overrides.

import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';
import type { Config } from './environment.js';
import type { FaultPoint } from './hooks.js';
import type { EventFrame, Frame, SnapshotFrame, Transfer } from './wire.js';

export type Db = Database.Database;

/** SIGTERM arrived while we were waiting. */
export class Stopped extends Error {
  override name = 'Stopped';
}

export const now = (): number => performance.now();

export function log(msg: string): void {
  process.stderr.write(`feed consumer: ${msg}\n`);
}

export type Outcome = 'applied' | 'duplicate';
export type Verdict = 'continue' | 'close';

export interface Subscription {
  cursor: string | null;
  blockHash: string | null;
}

/**
 * What the steps see of the open connection (connection.ts implements it): declared here, so
 * that the session and the connection do not import each other.
 */
export interface OpenConnection {
  /** This connection's subscribe carried cursor: null. */
  subscribedNull: boolean;
  /** The snapshot that answers cursor: null has arrived. */
  sawSnapshot: boolean;
  /** Writes one frame (dropped once the connection is closed). */
  write(text: string): void;
}

export interface Session {
  readonly config: Config;
  readonly db: Db;
  readonly steps: Steps;
  readonly followed: ReadonlySet<string>;
  /** In memory only: a stale-cursor reset or a revoke into the snapshot came. */
  snapshotNeeded: boolean;
  /** The run's chain id: from the store, else the first cursor received. */
  chainId: string | undefined;
  /** Transactions begun in this process, for the fault points (counted from 1). */
  readonly counters: { apply: number; revoke: number; snapshot: number };
  /** The open connection, if any. */
  conn: OpenConnection | undefined;
  readonly stopping: boolean;
  /** Fault hook for `point` and `n` (no-op unless the plan names them). */
  fault(point: FaultPoint, n: number): void;
  /** Writes one frame to the open connection (dropped when there is none). */
  send(text: string): void;
  /** Waits `ms` (the connection keeps reading and pinging); rejects with Stopped on SIGTERM. */
  pause(ms: number): Promise<void>;
  /** The id of the next ping we send (1, 2, ...). */
  nextPingId(): number;
  /** Called once on SIGTERM (or SIGINT). */
  onStop(f: () => void): void;
  offStop(f: () => void): void;
}

/**
 * The named steps of the reference (steps.ts lists them). Every call goes through
 * `session.steps`, so a mutant replaces one of them and the rest stays the reference's.
 */
export interface Steps {
  parseFrame(line: Uint8Array): Frame;
  /** The one-chain rule and "a snapshot first after cursor: null"; throws InvalidFrame. */
  acceptFrame(s: Session, conn: OpenConnection, frame: Frame): void;
  openStore(path: string): Db;
  /** What the next subscribe carries: the durable cursor and hash, or both null. */
  subscription(s: Session): Subscription;
  handleFrame(s: Session, frame: Frame): Promise<Verdict>;
  /** BEGIN IMMEDIATE, applyEventInTransaction, ROLLBACK on any error. */
  applyEvent(s: Session, ev: EventFrame): Promise<Outcome>;
  /** Inside the transaction: dedupe by cursor, write, slow-reader wait, hook, COMMIT, hook. */
  applyEventInTransaction(s: Session, ev: EventFrame): Promise<Outcome>;
  /** account -> signed change, for the followed accounts only. */
  balanceEffect(s: Session, t: Transfer): Map<string, bigint>;
  installSnapshot(s: Session, snap: SnapshotFrame): void;
  revoke(s: Session, fromCursor: string): 'revoked' | 'snapshot-needed';
  onReset(s: Session, reason: string): void;
  answerPing(s: Session, id: string): void;
  /** Milliseconds before the n-th consecutive reconnect attempt. */
  backoffDelay(config: Config, n: number, random: () => number): number;
}
