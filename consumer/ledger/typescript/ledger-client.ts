// Reference ledger-lab consumer (seed 000), the TypeScript twin of consumer/ledger/python/client.py.
// It follows consumer/ledger/CONTRACT.md exactly; the order of its steps IS the lesson:
//   parse strictly -> BEGIN IMMEDIATE -> read last inside the transaction -> decide
//   -> write -> COMMIT -> (fault point ack) -> ACK.
// The steps are exported and looked up through `session.steps`, so a mutant is a small
// override of one named step (see consumer/ledger/mutants/), never a copy of this file.

import net from 'node:net';
import Database from 'better-sqlite3';
import { LineSplitter, MAX_LINE_BYTES, MalformedLine, encodeAck, encodeResume, parsePublisherLine } from '../../../protocol/ledger/wire.js';
import type { PublisherLine } from '../../../protocol/ledger/wire.js';

export { MalformedLine };
export type Db = Database.Database;

// ---------------------------------------------------------------- exit codes (contract)

export const EXIT = {
  ok: 0,
  error: 1, // any other error, including an injected `raise`
  malformed: 2,
  gap: 3,
  conflict: 4,
  timeout: 5,
  connection: 6,
  resync: 7,
  env: 64,
  injectedExit: 86,
} as const;

export class EnvError extends Error {
  override name = 'EnvError';
}
export class Gap extends Error {
  override name = 'Gap';
  constructor(
    readonly seq: number,
    readonly last: number,
  ) {
    super(`gap: got seq ${seq} but last committed is ${last} (expected ${last + 1})`);
  }
}
export class Conflict extends Error {
  override name = 'Conflict';
  constructor(
    readonly seq: number,
    readonly delta: number,
    readonly stored: number | undefined,
  ) {
    super(
      stored === undefined
        ? `conflict: seq ${seq} is at or below last but the ledger has no row for it`
        : `conflict: seq ${seq} arrived with delta ${delta} but the ledger holds ${stored}`,
    );
  }
}
export class ResyncRequired extends Error {
  override name = 'ResyncRequired';
  constructor(readonly firstAvailable: number) {
    super(`publisher demands a resync (first available seq ${firstAvailable}); a lab consumer cannot recover from that`);
  }
}
export class TimeoutError extends Error {
  override name = 'TimeoutError';
}
export class ConnectionError extends Error {
  override name = 'ConnectionError';
}
export class InjectedFault extends Error {
  override name = 'InjectedFault';
}

/** Maps an error to the recommended exit code. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof EnvError) return EXIT.env;
  if (err instanceof MalformedLine) return EXIT.malformed;
  if (err instanceof Gap) return EXIT.gap;
  if (err instanceof Conflict) return EXIT.conflict;
  if (err instanceof TimeoutError) return EXIT.timeout;
  if (err instanceof ConnectionError) return EXIT.connection;
  if (err instanceof ResyncRequired) return EXIT.resync;
  return EXIT.error;
}

// ---------------------------------------------------------------- environment

export type FaultAction = 'exit' | 'raise' | 'stop';
export type FaultPoint = 'apply' | 'ack';
export interface FaultRule {
  action: FaultAction;
  point: FaultPoint;
  seq: number;
}
export interface Config {
  host: string;
  port: number;
  db: string;
  timeoutMs: number;
  faults: FaultRule[];
}

const FAULT_RE = /^(exit|raise|stop)@(apply|ack):(0|[1-9][0-9]*)$/;
// setTimeout silently turns larger values into 1 ms, so they are refused instead.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** `exit@ack:1,stop@apply:3`; undefined means "no faults", but an empty or bad plan is invalid. */
export function parseFaultPlan(text: string | undefined): FaultRule[] {
  if (text === undefined) return [];
  if (text === '') throw new EnvError('CHAOSLAB_FAULT is set but empty (unset it for no faults)');
  return text.split(',').map((item) => {
    const m = FAULT_RE.exec(item);
    const seq = m ? Number(m[3]) : NaN;
    if (!m || !Number.isSafeInteger(seq)) {
      throw new EnvError(`CHAOSLAB_FAULT item ${JSON.stringify(item)} is not <exit|raise|stop>@<apply|ack>:<seq>`);
    }
    return { action: m[1] as FaultAction, point: m[2] as FaultPoint, seq };
  });
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') throw new EnvError(`${name} is missing`);
  const n = Number(text);
  if (!/^[1-9][0-9]*$/.test(text) || n > max) throw new EnvError(`${name}=${JSON.stringify(text)} is not an integer in 1..${max}`);
  return n;
}

/** Validates the whole environment before anything is opened or connected. */
export function parseEnv(env: NodeJS.ProcessEnv): Config {
  const host = env.CHAOSLAB_HOST;
  if (!host) throw new EnvError('CHAOSLAB_HOST is missing');
  const port = positiveInt(env, 'CHAOSLAB_PORT', 65535);
  const db = env.CHAOSLAB_DB;
  if (!db) throw new EnvError('CHAOSLAB_DB is missing');
  const timeoutMs = positiveInt(env, 'CHAOSLAB_TIMEOUT_MS', MAX_TIMEOUT_MS);
  return { host, port, db, timeoutMs, faults: parseFaultPlan(env.CHAOSLAB_FAULT) };
}

/** Runs the fault plan for one point; `exit` ends the process with no cleanup at all. */
export function fireFaults(faults: readonly FaultRule[], point: FaultPoint, seq: number): void {
  for (const f of faults) {
    if (f.point !== point || f.seq !== seq) continue;
    if (f.action === 'exit') {
      // reallyExit skips 'exit' listeners, finally blocks and every close: a real crash.
      (process as unknown as { reallyExit(code: number): never }).reallyExit(EXIT.injectedExit);
    }
    if (f.action === 'raise') throw new InjectedFault(`injected raise at ${point}:${seq}`);
    if (f.action === 'stop') process.kill(process.pid, 'SIGSTOP'); // resumes here after SIGCONT
  }
}

// ---------------------------------------------------------------- session and steps

export type Outcome = 'applied' | 'duplicate';

export interface Session {
  readonly config: Config;
  readonly db: Db;
  readonly steps: Steps;
  /** Fault hook for `point` and `seq` (no-op unless the plan names them). */
  fault(point: FaultPoint, seq: number): void;
  /** Hands bytes to the socket now, without waiting for them to leave. */
  write(text: string): void;
  /** Waits (bounded by the timeout) until everything written so far was handed to the OS. */
  drain(): Promise<void>;
  /** write + drain. */
  send(text: string): Promise<void>;
}

export interface Steps {
  parseLine(bytes: Uint8Array): PublisherLine;
  openStore(path: string): Db;
  /** The cursor sent as `RESUME <last>`. */
  resumeFrom(db: Db): number;
  /** BEGIN IMMEDIATE, applyInTransaction, ROLLBACK on any error. */
  applyEvent(s: Session, seq: number, delta: number): Promise<Outcome>;
  /** Runs inside the open transaction: read last, decide, write, commitAndAck. */
  applyInTransaction(s: Session, seq: number, delta: number): Promise<Outcome>;
  commitAndAck(s: Session, seq: number, outcome: Outcome): Promise<void>;
  consumeLine(s: Session, bytes: Uint8Array): Promise<void>;
}

/** Strict grammar from wire.ts: "it converted to a number" is not "it is the promised message". */
export function parseLine(bytes: Uint8Array): PublisherLine {
  return parsePublisherLine(bytes);
}

/** Creates the tables and the row (1, -1, 0) only when absent: a restart must never reset `last`. */
export function openStore(path: string): Db {
  const db = new Database(path);
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec(`CREATE TABLE IF NOT EXISTS checkpoint(
               id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS ledger(seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL);
             INSERT OR IGNORE INTO checkpoint(id, last, total) VALUES (1, -1, 0);`);
    db.exec('COMMIT');
    return db;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    throw err;
  }
}

const prepared = new WeakMap<Db, Map<string, Database.Statement>>();

/** `sql` prepared on `db` once: the steps run the same few statements for every event. */
export function statement(db: Db, sql: string): Database.Statement {
  let bySql = prepared.get(db);
  if (!bySql) prepared.set(db, (bySql = new Map()));
  let stmt = bySql.get(sql);
  if (!stmt) bySql.set(sql, (stmt = db.prepare(sql)));
  return stmt;
}

/** The cursor for `RESUME <last>`: the `last` committed in the store, never a fresh -1. */
export function resumeFrom(db: Db): number {
  const { last } = statement(db, 'SELECT last FROM checkpoint WHERE id = 1').get() as { last: number };
  return last;
}

/**
 * Applies one event in one BEGIN IMMEDIATE transaction (the work itself is
 * applyInTransaction). Any error rolls back and is rethrown.
 */
export async function applyEvent(s: Session, seq: number, delta: number): Promise<Outcome> {
  const { db } = s;
  db.exec('BEGIN IMMEDIATE');
  try {
    return await s.steps.applyInTransaction(s, seq, delta);
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/**
 * The body of applyEvent's transaction. `last` is read inside it, so the decision and the
 * write see the same state; commitAndAck ends the transaction.
 */
export async function applyInTransaction(s: Session, seq: number, delta: number): Promise<Outcome> {
  const { db } = s;
  const { last } = statement(db, 'SELECT last FROM checkpoint WHERE id = 1').get() as { last: number };
  let outcome: Outcome;
  if (seq <= last) {
    const row = statement(db, 'SELECT delta FROM ledger WHERE seq = ?').get(seq) as { delta: number } | undefined;
    // A reused seq with other content (or one we never stored) must not pass as a duplicate.
    if (row?.delta !== delta) throw new Conflict(seq, delta, row?.delta);
    outcome = 'duplicate';
  } else if (seq > last + 1) {
    // Jumping to seq would make the missing events look processed; stop instead.
    throw new Gap(seq, last);
  } else {
    statement(db, 'INSERT INTO ledger(seq, delta) VALUES (?, ?)').run(seq, delta);
    statement(db, 'UPDATE checkpoint SET total = total + ? WHERE id = 1').run(delta);
    s.fault('apply', seq); // total changed, last not yet: the grader looks from outside here
    statement(db, 'UPDATE checkpoint SET last = ? WHERE id = 1').run(seq);
    outcome = 'applied';
  }
  await s.steps.commitAndAck(s, seq, outcome);
  return outcome;
}

/**
 * COMMIT, then the `ack` fault point (new events only), then `ACK seq`. An ACK sent before
 * COMMIT returned lets the publisher drop an event we may still lose; an ACK lost after
 * COMMIT only causes a redelivery, which the ledger recognises as a duplicate.
 */
export async function commitAndAck(s: Session, seq: number, outcome: Outcome): Promise<void> {
  s.db.exec('COMMIT');
  if (outcome === 'applied') s.fault('ack', seq);
  await s.send(encodeAck(seq));
}

/** One complete line: parse, refuse RESYNC, apply (which commits and acknowledges). */
export async function consumeLine(s: Session, bytes: Uint8Array): Promise<void> {
  const line = s.steps.parseLine(bytes);
  if (line.kind === 'resync') throw new ResyncRequired(line.firstAvailable);
  await s.steps.applyEvent(s, line.seq, line.delta);
}

export const referenceSteps: Readonly<Steps> = Object.freeze({
  parseLine,
  openStore,
  resumeFrom,
  applyEvent,
  applyInTransaction,
  commitAndAck,
  consumeLine,
});

// ---------------------------------------------------------------- network

function withTimeout<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`timed out after ${ms} ms waiting to ${what}`)), ms);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

function connect(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
  // No Nagle: each ACK is one small write that should leave at once, not wait for the
  // publisher's TCP acknowledgement of the previous one (Python's asyncio does this by default).
  const socket = net.connect({ host, port, noDelay: true });
  const connected = new Promise<net.Socket>((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('error', (err) => reject(new ConnectionError(`cannot connect to ${host}:${port}: ${err.message}`)));
  });
  return withTimeout(`connect to ${host}:${port}`, timeoutMs, connected).catch((err: unknown) => {
    socket.destroy();
    throw err;
  });
}

type ReadResult = { line: Buffer } | { end: true };

/**
 * Turns socket data into complete lines via wire.ts's LineSplitter. An unterminated
 * fragment of MAX_LINE_BYTES or more is reported as malformed at once, so a peer can
 * neither make us wait for the rest of an endless line nor make us store it.
 */
class LineReader {
  private readonly splitter = new LineSplitter();
  private readonly queue: Buffer[] = [];
  private failure: Error | undefined; // delivered after the queued lines, in stream order
  private ended = false;
  private wake: (() => void) | undefined;

  constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      if (this.failure || this.ended) return;
      const { lines, overflow } = this.splitter.push(chunk);
      this.queue.push(...lines);
      if (overflow) this.fail(new MalformedLine(`no LF within ${MAX_LINE_BYTES} bytes`, overflow));
      if (this.queue.length > 64) socket.pause(); // bounded buffering; resumed by next()
      this.notify();
    });
    socket.on('end', () => {
      this.ended = true;
      this.notify();
    });
    socket.on('error', (err) => this.fail(new ConnectionError(`connection error: ${err.message}`)));
    socket.on('close', () => {
      if (!this.ended) this.fail(new ConnectionError('connection closed without an orderly end'));
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private poll(): ReadResult | undefined {
    const line = this.queue.shift();
    if (line) return { line };
    if (this.failure) throw this.failure;
    if (this.ended) {
      const fragment = this.splitter.fragment;
      if (fragment.length > 0) throw new MalformedLine('stream ended inside a line (no LF)', fragment);
      return { end: true };
    }
    if (this.socket.isPaused()) this.socket.resume();
    return undefined;
  }

  /** The next complete line, or the end of the stream; waits at most timeoutMs. */
  next(timeoutMs: number): Promise<ReadResult> {
    const ready = this.poll();
    if (ready) return Promise.resolve(ready);
    const waiting = new Promise<ReadResult>((resolve, reject) => {
      const retry = (): void => {
        try {
          const r = this.poll();
          if (r) resolve(r);
          else this.wake = retry;
        } catch (err) {
          reject(err);
        }
      };
      this.wake = retry;
    });
    return withTimeout('read a line', timeoutMs, waiting).finally(() => {
      this.wake = undefined;
    });
  }
}

// ---------------------------------------------------------------- session runner

/**
 * One process = one session: open the store, connect, RESUME <last>, handle lines until the
 * publisher closes or something is wrong, close both, and return the exit code. It never
 * reconnects: a reconnect is a new process started by the harness.
 */
export async function runClient(env: NodeJS.ProcessEnv, overrides: Partial<Steps> = {}): Promise<number> {
  let config: Config;
  try {
    config = parseEnv(env); // before anything is opened or connected
  } catch (err) {
    report(err);
    return exitCodeFor(err);
  }
  const steps: Steps = { ...referenceSteps, ...overrides };
  let db: Db | undefined;
  let socket: net.Socket | undefined;
  try {
    db = steps.openStore(config.db);
    socket = await connect(config.host, config.port, config.timeoutMs);
    const reader = new LineReader(socket);
    const sock = socket;
    let flushed: Promise<void> = Promise.resolve();
    const session: Session = {
      config,
      db,
      steps,
      fault: (point, seq) => fireFaults(config.faults, point, seq),
      write(text) {
        // Writes complete in order, so waiting for the latest one waits for all of them.
        flushed = new Promise<void>((resolve, reject) => {
          sock.write(text, 'latin1', (err) => (err ? reject(new ConnectionError(`write failed: ${err.message}`)) : resolve()));
        });
        flushed.catch(() => {}); // observed by drain(); never an unhandled rejection
      },
      drain: () => withTimeout('write', config.timeoutMs, flushed),
      async send(text) {
        session.write(text);
        await session.drain();
      },
    };
    await session.send(encodeResume(steps.resumeFrom(db)));
    for (;;) {
      const r = await reader.next(config.timeoutMs);
      if ('end' in r) return EXIT.ok; // publisher closed at a line boundary, all handled
      await steps.consumeLine(session, r.line);
    }
  } catch (err) {
    report(err);
    return exitCodeFor(err);
  } finally {
    socket?.destroy(); // at once: no later line on this connection is processed
    db?.close();
  }
}

function report(err: unknown): void {
  const code = exitCodeFor(err);
  const msg = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  process.stderr.write(`ledger consumer: ${msg} (exit ${code})\n`);
}

/** Entry point used by client.ts and the mutants. */
export async function main(overrides: Partial<Steps> = {}): Promise<never> {
  const code = await runClient(process.env, overrides);
  process.exit(code);
}
