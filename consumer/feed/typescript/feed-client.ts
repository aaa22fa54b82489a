// Reference feed-lab consumer (seed 002, T18 "real-time systems"), the TypeScript twin of
// consumer/feed/python/client.py. It follows consumer/feed/CONTRACT.md exactly. The lesson:
// realtime is a latency property, not losing anything is a correctness property, and they
// need different mechanisms:
//   - a durable cursor (and its block hash) sent in every subscribe, a snapshot only when one
//     is needed, duplicates dropped by cursor;
//   - every frame that changes the store handled in ONE transaction together with the cursor;
//   - revoke undoes the events of abandoned blocks, reset starts over explicitly;
//   - heartbeats both ways, an idle timeout that reads before it judges, and reconnects with
//     jittered exponential backoff.
// The steps are exported and looked up through `session.steps`, so a mutant is a small
// override of one named step (as in consumer/ledger/mutants/), never a copy of this file.

import net from 'node:net';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import {
  ACCOUNT_RE,
  type EventFrame,
  type Frame,
  InvalidFrame,
  LineSplitter,
  MAX_LINE_BYTES,
  type SnapshotFrame,
  type Transfer,
  chainOf,
  cursorsOf,
  encodeFrame,
  encodePingPong,
  isCursor,
  parseFrame,
} from './frames.js';

export type Db = Database.Database;

export const EXIT = { ok: 0, error: 1, env: 64, injectedExit: 86 } as const;

/** Longest timer Node can arm (larger values silently become 1 ms). */
export const MAX_MS = 2 ** 31 - 1;
/** SQLite busy timeout: short, so that a lock held elsewhere cannot delay SIGTERM past 2 s. */
export const BUSY_TIMEOUT_MS = 1500;
/** Read-ahead bound: past this the socket is paused, so a slow consumer pushes back on the server. */
export const QUEUE_HIGH_FRAMES = 256;
export const QUEUE_HIGH_BYTES = 4 * 1024 * 1024;

export class EnvError extends Error {
  override name = 'EnvError';
}
export class InjectedFault extends Error {
  override name = 'InjectedFault';
}
/** SIGTERM arrived while we were waiting. */
export class Stopped extends Error {
  override name = 'Stopped';
}

const now = (): number => performance.now();

function log(msg: string): void {
  process.stderr.write(`feed consumer: ${msg}\n`);
}

// ---------------------------------------------------------------- environment

export type FaultAction = 'exit' | 'raise' | 'stop';
export type FaultPoint = 'apply' | 'commit' | 'revoke' | 'snapshot';
export interface FaultRule {
  action: FaultAction;
  point: FaultPoint;
  n: number;
}
export interface Config {
  host: string;
  port: number;
  db: string;
  clientId: string;
  topics: string[];
  pingMs: number;
  idleMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  applyDelayMs: number;
  faults: FaultRule[];
}

const FAULT_RE = /^(exit|raise|stop)@(apply|commit|revoke|snapshot):([1-9][0-9]*)$/;

/** `exit@apply:3,stop@revoke:1`; unset means no faults, an empty or malformed value is invalid. */
export function parseFaultPlan(text: string | undefined): FaultRule[] {
  if (text === undefined) return [];
  if (text === '') throw new EnvError('CHAOSLAB_FAULT is set but empty (unset it for no faults)');
  return text.split(',').map((item) => {
    const m = FAULT_RE.exec(item);
    const n = m ? Number(m[3]) : Number.NaN;
    if (!m || !Number.isSafeInteger(n)) {
      throw new EnvError(`CHAOSLAB_FAULT item ${JSON.stringify(item)} is not <exit|raise|stop>@<apply|commit|revoke|snapshot>:<n >= 1>`);
    }
    return { action: m[1] as FaultAction, point: m[2] as FaultPoint, n };
  });
}

function intVar(env: NodeJS.ProcessEnv, name: string, min: 0 | 1, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') throw new EnvError(`${name} is missing`);
  const n = Number(text);
  if (!/^(0|[1-9][0-9]*)$/.test(text) || n < min || n > max) throw new EnvError(`${name}=${JSON.stringify(text)} is not an integer in ${min}..${max}`);
  return n;
}

function textVar(env: NodeJS.ProcessEnv, name: string): string {
  const text = env[name];
  if (text === undefined || text === '') throw new EnvError(`${name} is missing`);
  return text;
}

export function parseTopics(text: string): string[] {
  const topics = text.split(',');
  for (const topic of topics) {
    if (!ACCOUNT_RE.test(topic)) throw new EnvError(`CHAOSLAB_TOPICS item ${JSON.stringify(topic)} is not 0x + 40 lowercase hex digits`);
  }
  if (new Set(topics).size !== topics.length) throw new EnvError('CHAOSLAB_TOPICS names an account twice');
  return topics;
}

/** Validates the whole environment before anything is opened or connected. */
export function parseEnv(env: NodeJS.ProcessEnv): Config {
  const config: Config = {
    host: textVar(env, 'CHAOSLAB_HOST'),
    port: intVar(env, 'CHAOSLAB_PORT', 1, 65535),
    db: textVar(env, 'CHAOSLAB_DB'),
    clientId: textVar(env, 'CHAOSLAB_CLIENT_ID'),
    topics: parseTopics(textVar(env, 'CHAOSLAB_TOPICS')),
    pingMs: intVar(env, 'CHAOSLAB_PING_MS', 1, MAX_MS),
    idleMs: intVar(env, 'CHAOSLAB_IDLE_MS', 1, MAX_MS),
    backoffBaseMs: intVar(env, 'CHAOSLAB_BACKOFF_BASE_MS', 1, MAX_MS),
    backoffCapMs: intVar(env, 'CHAOSLAB_BACKOFF_CAP_MS', 1, MAX_MS),
    applyDelayMs: env.CHAOSLAB_APPLY_DELAY_MS === undefined ? 0 : intVar(env, 'CHAOSLAB_APPLY_DELAY_MS', 0, MAX_MS),
    faults: parseFaultPlan(env.CHAOSLAB_FAULT),
  };
  if (config.backoffCapMs < config.backoffBaseMs) {
    throw new EnvError(`CHAOSLAB_BACKOFF_CAP_MS=${config.backoffCapMs} is below CHAOSLAB_BACKOFF_BASE_MS=${config.backoffBaseMs}`);
  }
  return config;
}

/** Runs the fault plan for one point; `exit` ends the process with no cleanup at all. */
export function fireFaults(faults: readonly FaultRule[], point: FaultPoint, n: number): void {
  for (const f of faults) {
    if (f.point !== point || f.n !== n) continue;
    if (f.action === 'exit') {
      // reallyExit skips 'exit' listeners, finally blocks and every close: a real crash.
      const p = process as unknown as { reallyExit?: (code: number) => never };
      if (typeof p.reallyExit === 'function') p.reallyExit(EXIT.injectedExit);
      process.exit(EXIT.injectedExit);
    }
    if (f.action === 'raise') throw new InjectedFault(`injected raise at ${point}:${n}`);
    if (f.action === 'stop') process.kill(process.pid, 'SIGSTOP'); // resumes here after SIGCONT
  }
}

// ---------------------------------------------------------------- store

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

// ---------------------------------------------------------------- session and steps

export type Outcome = 'applied' | 'duplicate';
export type Verdict = 'continue' | 'close';

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
  conn: Connection | undefined;
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

export interface Subscription {
  cursor: string | null;
  blockHash: string | null;
}

export interface Steps {
  parseFrame(line: Uint8Array): Frame;
  /** The one-chain rule and "a snapshot first after cursor: null"; throws InvalidFrame. */
  acceptFrame(s: Session, conn: Connection, frame: Frame): void;
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

export function acceptFrame(s: Session, conn: Connection, frame: Frame): void {
  const chains = new Set(cursorsOf(frame).map(chainOf));
  for (const chain of chains) {
    if ((s.chainId ?? chain) !== chain) throw new InvalidFrame(`chain id ${chain} differs from this run's chain id ${s.chainId}`);
  }
  if (conn.subscribedNull && !conn.sawSnapshot && (frame.op === 'event' || frame.op === 'revoke')) {
    throw new InvalidFrame(`${frame.op} before the snapshot that answers cursor: null`);
  }
  for (const chain of chains) s.chainId ??= chain;
  if (frame.op === 'snapshot') conn.sawSnapshot = true;
}

/** Both null when a snapshot is needed (nothing stored, or the memory says so). */
export function subscription(s: Session): Subscription {
  if (s.snapshotNeeded) return { cursor: null, blockHash: null };
  const st = readState(s.db);
  if (st.cursor === null || st.blockHash === null) return { cursor: null, blockHash: null };
  return { cursor: st.cursor, blockHash: st.blockHash };
}

export async function handleFrame(s: Session, frame: Frame): Promise<Verdict> {
  switch (frame.op) {
    case 'event':
      await s.steps.applyEvent(s, frame);
      return 'continue';
    case 'snapshot':
      s.steps.installSnapshot(s, frame);
      return 'continue';
    case 'revoke':
      return s.steps.revoke(s, frame.fromCursor) === 'snapshot-needed' ? 'close' : 'continue';
    case 'reset':
      s.steps.onReset(s, frame.reason);
      return 'close'; // the server closes at once; so do we
    default:
      return 'continue'; // ping (answered on arrival), pong, unknown op
  }
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

/** stale-cursor: the next subscribe asks for a snapshot. Any other reason: resume from the store. */
export function onReset(s: Session, reason: string): void {
  if (reason === 'stale-cursor') s.snapshotNeeded = true;
}

export function answerPing(s: Session, id: string): void {
  s.send(encodePingPong('pong', id));
}

/** min(BASE x 2^n, CAP) x U(0.5, 1.5): jitter on every attempt, at the cap too. */
export function backoffDelay(config: Config, n: number, random: () => number): number {
  return Math.min(config.backoffBaseMs * 2 ** Math.min(n, 40), config.backoffCapMs) * (0.5 + random());
}

export const referenceSteps: Readonly<Steps> = Object.freeze({
  parseFrame,
  acceptFrame,
  openStore,
  subscription,
  handleFrame,
  applyEvent,
  applyEventInTransaction,
  balanceEffect,
  installSnapshot,
  revoke,
  onReset,
  answerPing,
  backoffDelay,
});

// ---------------------------------------------------------------- connection

type Item = { kind: 'frame'; frame: Frame; bytes: number } | { kind: 'invalid'; reason: string };
export type Next = Item | { kind: 'end'; reason: string } | { kind: 'idle' } | { kind: 'stop' };

/**
 * One TCP connection. Bytes are read as they come (so pings are answered even while a
 * transaction is waiting), split into frames, checked, and queued for the session loop in
 * arrival order; the queue is bounded, past it the socket is paused and TCP pushes back.
 * Idleness is judged only when the loop wants a frame and the queue is empty, and only after
 * a pass through the event loop's poll phase (setImmediate after the timer): time spent in a
 * long synchronous COMMIT is not the server's silence.
 */
export class Connection {
  subscribedNull = false;
  sawSnapshot = false;
  /** A snapshot or an event arrived (moves the backoff's n back to 0). */
  gotData = false;
  /** When we saw the end of the connection or closed it ourselves. */
  endSeenAt = 0;
  private endReason = '';
  private done = false;
  private readonly splitter = new LineSplitter();
  private readonly queue: Item[] = [];
  private queuedBytes = 0;
  private lastRx = now();
  private lastTx = now();
  private pingTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  constructor(
    readonly socket: net.Socket,
    private readonly s: Session,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.finish('the server closed the connection'));
    socket.on('error', (err) => this.finish(`connection error: ${err.message}`));
    socket.on('close', () => this.finish('the connection closed'));
    this.armPing();
  }

  write(text: string): void {
    if (this.done || this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(text);
    this.lastTx = now();
  }

  /** Closes the connection at once; nothing more is read from it. */
  close(reason = 'closed by the consumer'): void {
    this.finish(reason);
    this.socket.destroy();
  }

  private finish(reason: string): void {
    if (!this.done) {
      this.done = true;
      this.endReason = reason;
      this.endSeenAt = now();
      if (this.splitter.pending > 0) log(`discarded ${this.splitter.pending} bytes of an unterminated line`);
    }
    clearTimeout(this.pingTimer);
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private armPing(): void {
    clearTimeout(this.pingTimer);
    if (this.done) return;
    const { pingMs } = this.s.config;
    this.pingTimer = setTimeout(
      () => {
        if (now() - this.lastTx >= pingMs - 1) this.write(encodePingPong('ping', String(this.s.nextPingId())));
        this.armPing();
      },
      Math.max(0, this.lastTx + pingMs - now()),
    );
  }

  private onData(chunk: Buffer): void {
    if (this.done) return;
    this.lastRx = now();
    const { lines, overflow } = this.splitter.push(chunk);
    for (const line of lines) {
      this.onLine(line);
      if (this.done) return;
    }
    if (overflow) {
      this.terminal({ kind: 'invalid', reason: `no LF within ${MAX_LINE_BYTES} bytes` });
      return;
    }
    if (this.queue.length >= QUEUE_HIGH_FRAMES || this.queuedBytes >= QUEUE_HIGH_BYTES) this.socket.pause();
    this.notify();
  }

  private onLine(line: Buffer): void {
    let frame: Frame;
    try {
      frame = this.s.steps.parseFrame(line);
      this.s.steps.acceptFrame(this.s, this, frame);
    } catch (err) {
      const reason = err instanceof InvalidFrame ? err.message : `cannot read the frame: ${String(err)}`;
      this.terminal({ kind: 'invalid', reason });
      return;
    }
    switch (frame.op) {
      case 'ping':
        this.s.steps.answerPing(this.s, frame.id); // at once, also while a transaction waits
        return;
      case 'pong':
      case 'unknown':
        return; // nothing to do: every byte already counted as a sign of life
      case 'reset':
        this.terminal({ kind: 'frame', frame, bytes: line.length }); // the server closes at once
        return;
      case 'event':
      case 'snapshot':
        this.gotData = true;
    }
    this.queue.push({ kind: 'frame', frame, bytes: line.length });
    this.queuedBytes += line.length;
  }

  /** Queues the last item of this connection (after what came before it) and closes. */
  private terminal(item: Item): void {
    this.queue.push(item);
    this.close(item.kind === 'invalid' ? `invalid frame: ${item.reason}` : 'reset');
  }

  /** The next frame in arrival order, or why there is none. */
  async next(): Promise<Next> {
    for (;;) {
      const item = this.queue.shift();
      if (item) {
        if (item.kind === 'frame') this.queuedBytes -= item.bytes;
        return item;
      }
      if (this.s.stopping) return { kind: 'stop' };
      if (this.done) return { kind: 'end', reason: this.endReason };
      if (this.socket.isPaused()) {
        this.socket.resume(); // caught up: read again, and count silence from now on
        this.lastRx = now();
      }
      const r = await this.waitForInput();
      if (r !== 'input') return { kind: r };
    }
  }

  private waitForInput(): Promise<'input' | 'idle' | 'stop'> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let immediate: NodeJS.Immediate | undefined;
      const settle = (r: 'input' | 'idle' | 'stop'): void => {
        clearTimeout(timer);
        if (immediate) clearImmediate(immediate);
        this.wake = undefined;
        this.s.offStop(onStop);
        resolve(r);
      };
      const onStop = (): void => settle('stop');
      const { idleMs } = this.s.config;
      // The timer only says "maybe"; the check runs after the poll phase has read whatever
      // the socket holds, so data that arrived while we were busy counts.
      const check = (): void => (now() - this.lastRx >= idleMs ? settle('idle') : arm());
      const arm = (): void => {
        timer = setTimeout(
          () => {
            immediate = setImmediate(check);
          },
          Math.max(0, this.lastRx + idleMs - now()),
        );
      };
      this.wake = () => settle('input');
      this.s.onStop(onStop);
      arm();
    });
  }
}

function connect(s: Session): Promise<net.Socket> {
  const { host, port, idleMs } = s.config;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const fail = (err: Error): void => {
      clearTimeout(timer);
      s.offStop(onStop);
      socket.destroy();
      reject(err);
    };
    const onStop = (): void => fail(new Stopped('SIGTERM'));
    // Nothing received while connecting either: a connect that hangs counts as failed.
    const timer = setTimeout(() => fail(new Error(`connect to ${host}:${port} timed out after ${idleMs} ms`)), idleMs);
    s.onStop(onStop);
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      s.offStop(onStop);
      socket.off('error', fail);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

/** One connection from connect to its end; returns what the backoff needs to know. */
async function runConnection(s: Session): Promise<{ gotData: boolean; endSeenAt: number }> {
  let socket: net.Socket;
  try {
    socket = await connect(s);
  } catch (err) {
    if (!(err instanceof Stopped)) log(`cannot connect: ${(err as Error).message}`);
    return { gotData: false, endSeenAt: now() };
  }
  const conn = new Connection(socket, s);
  s.conn = conn;
  try {
    const sub = s.steps.subscription(s);
    conn.subscribedNull = sub.cursor === null;
    const { clientId, topics } = s.config;
    conn.write(encodeFrame({ op: 'subscribe', client: clientId, topics, cursor: sub.cursor, blockHash: sub.blockHash }));
    for (;;) {
      const next = await conn.next();
      if (next.kind === 'frame') {
        if ((await s.steps.handleFrame(s, next.frame)) === 'close') {
          const why = next.frame.op === 'reset' ? `reset ${JSON.stringify(next.frame.reason)}` : 'revoke into the snapshot';
          conn.close(why);
          log(`${why}: reconnecting${s.snapshotNeeded ? ' for a snapshot' : ''}`);
          break;
        }
        continue;
      }
      if (next.kind === 'invalid') log(`invalid frame, reconnecting: ${next.reason}`);
      else if (next.kind === 'idle') log(`nothing received for ${s.config.idleMs} ms: reconnecting`);
      else if (next.kind === 'end') log(`${next.reason}: reconnecting`);
      break;
    }
  } catch (err) {
    // The normal error path (an injected raise, a SQLite error): the transaction was rolled
    // back where it failed; close, and come back with the durable cursor.
    if (!(err instanceof Stopped)) log(`${(err as Error).name}: ${(err as Error).message}; reconnecting`);
  } finally {
    conn.close();
    s.conn = undefined;
  }
  return { gotData: conn.gotData, endSeenAt: conn.endSeenAt };
}

// ---------------------------------------------------------------- process

function createSession(config: Config, db: Db, steps: Steps): Session & { stop(): void } {
  const st = readState(db);
  const stored = st.cursor ?? st.snapshotCursor;
  const stopListeners = new Set<() => void>();
  let stopping = false;
  let pingId = 0;
  return {
    config,
    db,
    steps,
    followed: new Set(config.topics),
    snapshotNeeded: false,
    chainId: stored === null ? undefined : chainOf(stored),
    counters: { apply: 0, revoke: 0, snapshot: 0 },
    conn: undefined,
    get stopping() {
      return stopping;
    },
    fault: (point, n) => fireFaults(config.faults, point, n),
    send(text) {
      this.conn?.write(text);
    },
    pause(ms) {
      return new Promise<void>((resolve, reject) => {
        if (stopping) return reject(new Stopped('SIGTERM'));
        const onStop = (): void => {
          clearTimeout(timer);
          reject(new Stopped('SIGTERM'));
        };
        const timer = setTimeout(() => {
          stopListeners.delete(onStop);
          resolve();
        }, ms);
        stopListeners.add(onStop);
      });
    },
    stop() {
      stopping = true;
      for (const f of [...stopListeners]) f();
      stopListeners.clear();
    },
    nextPingId: () => ++pingId,
    onStop: (f) => stopListeners.add(f),
    offStop: (f) => stopListeners.delete(f),
  };
}

/** Sleeps until `until` (performance.now() time) or SIGTERM, whichever comes first. */
async function sleepUntil(s: Session, until: number): Promise<void> {
  while (!s.stopping && now() < until) {
    try {
      await s.pause(Math.min(MAX_MS, Math.max(1, Math.ceil(until - now()))));
    } catch {
      return; // Stopped
    }
  }
}

/**
 * The whole process: check the environment, open the store, then connect, subscribe, handle
 * frames and reconnect with backoff until SIGTERM. Returns the exit status.
 */
export async function runClient(env: NodeJS.ProcessEnv, overrides: Partial<Steps> = {}): Promise<number> {
  let config: Config;
  try {
    config = parseEnv(env); // before anything is opened or connected
  } catch (err) {
    log(`${(err as Error).message} (exit 64)`);
    return EXIT.env;
  }
  const steps: Steps = { ...referenceSteps, ...overrides };
  let db: Db;
  try {
    db = steps.openStore(config.db);
  } catch (err) {
    log(`CHAOSLAB_DB=${JSON.stringify(config.db)} cannot be opened as the feed store: ${(err as Error).message} (exit 64)`);
    return EXIT.env;
  }
  const s = createSession(config, db, steps);
  const onSignal = (): void => s.stop();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    let n = 0; // consecutive attempts since data last arrived
    let lastEnd: number | undefined; // undefined: the process's first connect waits nothing
    while (!s.stopping) {
      if (lastEnd !== undefined) {
        await sleepUntil(s, lastEnd + steps.backoffDelay(config, n, Math.random));
        n++;
        if (s.stopping) break;
      }
      const r = await runConnection(s);
      if (r.gotData) n = 0;
      lastEnd = r.endSeenAt;
    }
    return EXIT.ok;
  } catch (err) {
    log(`unexpected ${(err as Error).stack ?? String(err)} (exit 1)`);
    return EXIT.error;
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** Entry point used by client.ts (and by mutants, with their one override). */
export async function main(overrides: Partial<Steps> = {}): Promise<never> {
  const code = await runClient(process.env, overrides);
  process.exit(code);
}
