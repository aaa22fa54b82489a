// Rig for the feed lab's consumer tests (test/consumer/feed/consumer.test.ts, test/consumer/feed/mutants.test.ts):
// a scripted NDJSON server on 127.0.0.1 that records every line a consumer sends (with its
// arrival time), builders for the server's frames, the contract environment, and independent
// read-only reads of the consumer's SQLite store. Not a test file itself (.taprc runs
// test/*.test.ts).

import net from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import type { Test } from 'tap';
import { type Consumer, ROOT, type Running, sleep, startConsumer } from './consumer-rig.js';

export { ROOT, sleep, type Running };

// FEED_TEST_TS / FEED_TEST_PY point the suite at another script (e.g. a deliberately broken
// copy, to check that the tests notice); by default the reference consumers run.
export const FEED_TS: Consumer = {
  name: 'ts',
  command: process.execPath,
  args: [process.env.FEED_TEST_TS ?? join(ROOT, 'dist/consumer/feed/typescript/client.js')],
};
export const FEED_PY: Consumer = {
  name: 'python',
  command: 'python3',
  args: [process.env.FEED_TEST_PY ?? join(ROOT, 'consumer/feed/python/client.py')],
};
export const FEED_CONSUMERS: readonly Consumer[] = [FEED_TS, FEED_PY];

/** Runs `fn` once per reference consumer, as subtests named `<name> [<consumer>]`. */
export function forEachFeedConsumer(t: Test, name: string, fn: (t: Test, c: Consumer) => Promise<void>): void {
  for (const c of FEED_CONSUMERS) t.test(`${name} [${c.name}]`, (tt) => fn(tt, c));
}

export const now = (): number => performance.now();

// ---------------------------------------------------------------- frames the server sends

export type Obj = Record<string, unknown>;

/** Account n as 0x + 40 lowercase hex digits. */
export const account = (n: number): string => `0x${n.toString(16).padStart(40, '0')}`;
export const A = account(0xa1);
export const B = account(0xb2);
/** Not followed by the consumers under test. */
export const C = account(0xc3);
export const TOPICS = [A, B];

export const cur = (block: number, log = 0, chain = 1): string => `${chain}:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
export const blockHash = (block: number, fork = 0): string => `0x${fork.toString(16).padStart(2, '0')}${block.toString(16).padStart(62, '0')}`;
const txHash = (block: number, log: number): string => `0x${'7'.repeat(48)}${block.toString(16).padStart(12, '0')}${log.toString(16).padStart(4, '0')}`;

export function transfer(block: number, log: number, from: string, to: string, amount: string | bigint | number, fork = 0): Obj {
  return {
    op: 'event',
    cursor: cur(block, log),
    type: 'Transfer',
    payload: { from, to, amount: String(amount), txHash: txHash(block, log), blockHash: blockHash(block, fork) },
  };
}

/** An event of another type: goes into the activity list, changes no balance. */
export function other(block: number, log: number, extra: Obj = {}, fork = 0): Obj {
  return { op: 'event', cursor: cur(block, log), type: 'Approval', payload: { owner: A, spender: C, value: '5', blockHash: blockHash(block, fork), ...extra } };
}

export function snapshot(block: number, log: number, balances: Record<string, string>, fork = 0): Obj {
  return { op: 'snapshot', cursor: cur(block, log), blockHash: blockHash(block, fork), state: { balances } };
}

export const revokeFrom = (block: number): Obj => ({ op: 'revoke', fromCursor: cur(block, 0) });
export const reset = (reason: string): Obj => ({ op: 'reset', reason });

export const line = (frame: Obj): string => `${JSON.stringify(frame)}\n`;

// ---------------------------------------------------------------- scripted server

export class FeedConn {
  /** Lines received from the consumer, without the LF, and when each arrived (now()). */
  readonly lines: string[] = [];
  readonly times: number[] = [];
  readonly openedAt = now();
  closed = false;
  closedAt = 0;
  /** We ended or destroyed it (as opposed to the consumer). */
  closedByServer = false;
  serverClosedAt = 0;
  private pending = Buffer.alloc(0);
  private readonly listeners = new Set<() => void>();

  constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.pending = Buffer.concat([this.pending, d]);
      let lf: number;
      while ((lf = this.pending.indexOf(0x0a)) !== -1) {
        this.lines.push(this.pending.subarray(0, lf).toString('utf8'));
        this.times.push(now());
        this.pending = this.pending.subarray(lf + 1);
      }
      this.notify();
    });
    socket.on('error', () => {}); // a consumer may close with a reset; what arrived counts
    socket.on('close', () => {
      this.closed = true;
      this.closedAt = now();
      this.notify();
    });
  }

  /** Parsed frames from the consumer (JSON.parse of each line). */
  get frames(): Obj[] {
    return this.lines.map((l) => JSON.parse(l) as Obj);
  }

  /** The first frame of the connection (the consumer's subscribe). */
  get subscribe(): Obj | undefined {
    const first = this.lines[0];
    return first === undefined ? undefined : (JSON.parse(first) as Obj);
  }

  framesWith(op: string): Obj[] {
    return this.frames.filter((f) => f.op === op);
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }

  send(data: Obj | string | Buffer): void {
    if (this.socket.destroyed) return;
    this.socket.write(Buffer.isBuffer(data) || typeof data === 'string' ? data : line(data));
  }

  sendAll(frames: Obj[]): void {
    this.send(frames.map(line).join(''));
  }

  /** Orderly close from the server (FIN). */
  end(): void {
    if (this.socket.destroyed) return;
    this.closedByServer = true;
    this.serverClosedAt = now();
    this.socket.end();
  }

  /** Resolves true once pred() holds; false when the connection closed first or after ms. */
  until(pred: () => boolean, ms = 10000): Promise<boolean> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (pred()) finish(true);
        else if (this.closed) finish(false);
      };
      const timer = setTimeout(() => finish(pred()), ms);
      const finish = (v: boolean): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(v);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Waits for the subscribe. */
  subscribed(ms = 10000): Promise<boolean> {
    return this.until(() => this.lines.length >= 1, ms);
  }

  /** Waits until a frame with this op (and matching pred) arrived; returns it. */
  async frame(op: string, pred: (f: Obj) => boolean = () => true, ms = 10000): Promise<Obj | undefined> {
    const find = (): Obj | undefined => this.frames.find((f) => f.op === op && pred(f));
    await this.until(() => find() !== undefined, ms);
    return find();
  }

  /** Waits until the connection closed (by either side), or ms passed. */
  closedWithin(ms = 10000): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.closed) return resolve(true);
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        resolve(this.closed);
      }, ms);
      const check = (): void => {
        if (!this.closed) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(true);
      };
      this.listeners.add(check);
    });
  }
}

export type Script = (c: FeedConn, index: number) => Promise<void> | void;

export interface FeedServer {
  port: number;
  conns: FeedConn[];
  /** Resolves once at least n connections were accepted (false after ms). */
  connections(n: number, ms?: number): Promise<boolean>;
  /** Every script that ran, settled (errors are rethrown). */
  scripts(): Promise<void>;
  /** Cursor and block hash of connection i's subscribe, once it arrived (undefined: none came). */
  subscription(i: number, ms?: number): Promise<{ cursor: unknown; blockHash: unknown } | undefined>;
}

/** A server on 127.0.0.1 that runs `script` for every connection it accepts. */
export async function startFeedServer(t: Test, script: Script): Promise<FeedServer> {
  const conns: FeedConn[] = [];
  const running: Promise<void>[] = [];
  const waiters = new Set<() => void>();
  const server = net.createServer((socket) => {
    const c = new FeedConn(socket);
    const index = conns.push(c) - 1;
    running.push(Promise.resolve().then(() => script(c, index)));
    for (const w of [...waiters]) w();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const c of conns) c.socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    conns,
    connections: (n, ms = 15000) =>
      new Promise<boolean>((resolve) => {
        const check = (): void => {
          if (conns.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(true);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          resolve(conns.length >= n);
        }, ms);
        waiters.add(check);
        check();
      }),
    scripts: async () => {
      await Promise.all(running);
    },
    async subscription(i, ms = 15000) {
      const deadline = now() + ms;
      while (conns.length <= i && now() < deadline) await sleep(10);
      const c = conns[i];
      if (!c || !(await c.subscribed(Math.max(0, deadline - now())))) return undefined;
      const sub = c.subscribe!;
      return { cursor: sub.cursor, blockHash: sub.blockHash };
    },
  };
}

// ---------------------------------------------------------------- consumer processes

export interface FeedEnv {
  port: number;
  db: string;
  host?: string;
  clientId?: string;
  topics?: string[];
  pingMs?: number;
  idleMs?: number;
  baseMs?: number;
  capMs?: number;
  applyDelayMs?: number;
  fault?: string;
}

/** The contract's variables; short backoff so that reconnects in tests are quick. */
export function feedEnv(e: FeedEnv): Record<string, string> {
  const env: Record<string, string> = {
    CHAOSLAB_HOST: e.host ?? '127.0.0.1',
    CHAOSLAB_PORT: String(e.port),
    CHAOSLAB_DB: e.db,
    CHAOSLAB_CLIENT_ID: e.clientId ?? 'c1',
    CHAOSLAB_TOPICS: (e.topics ?? TOPICS).join(','),
    CHAOSLAB_PING_MS: String(e.pingMs ?? 1000),
    CHAOSLAB_IDLE_MS: String(e.idleMs ?? 30000), // long: a slow test must not reconnect by accident
    CHAOSLAB_BACKOFF_BASE_MS: String(e.baseMs ?? 20),
    CHAOSLAB_BACKOFF_CAP_MS: String(e.capMs ?? 100),
  };
  if (e.applyDelayMs !== undefined) env.CHAOSLAB_APPLY_DELAY_MS = String(e.applyDelayMs);
  if (e.fault !== undefined) env.CHAOSLAB_FAULT = e.fault;
  return env;
}

/** Starts a long-running consumer; killed in teardown if still alive. */
export function runFeed(t: Test, c: Consumer, e: FeedEnv, killAfterMs = 90000): Running {
  return startConsumer(t, c, feedEnv(e), killAfterMs);
}

/** SIGTERM, then the exit and how long it took (ms). */
export async function terminate(run: Running): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; ms: number }> {
  const sent = now();
  run.child.kill('SIGTERM');
  const exit = await run.exit;
  return { code: exit.code, signal: exit.signal, stderr: exit.stderr, ms: now() - sent };
}

/** Ends a test's consumer: SIGTERM must give exit 0 within the contract's 2 s. `who` prefixes the messages. */
export async function stopped(t: Test, run: Running, who?: string): Promise<void> {
  const r = await terminate(run);
  const at = who === undefined ? '' : `${who}: `;
  t.equal(r.code, 0, `${at}SIGTERM: exit 0 (stderr tail: ${r.stderr.trim().split('\n').slice(-2).join(' | ')})`);
  t.ok(r.ms < 2000, `${at}SIGTERM: ended within 2 s (took ${Math.round(r.ms)} ms)`);
}

/** The connection was closed, and not by the server (waits for the close to be seen). */
export async function closedByConsumer(conn: FeedConn | undefined): Promise<boolean> {
  return conn !== undefined && (await conn.closedWithin(10000)) && !conn.closedByServer;
}

/** Polls pred until it holds (true) or ms passed (false). */
export async function until(pred: () => boolean, ms = 10000): Promise<boolean> {
  const deadline = now() + ms;
  while (!pred()) {
    if (now() > deadline) return false;
    await sleep(5);
  }
  return true;
}

// ---------------------------------------------------------------- independent SQLite reads

export interface FeedStore {
  cursor: string | null;
  blockHash: string | null;
  snapshotCursor: string | null;
  snapshotBlockHash: string | null;
  /** Activity list in cursor order; payloads parsed. */
  events: { cursor: string; type: string; payload: unknown }[];
  /** account -> decimal text. */
  balances: Record<string, string>;
}

/** Reads the consumer's file through its own read-only connection. */
export function readFeedStore(path: string): FeedStore | undefined {
  if (!existsSync(path)) return undefined;
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 5000 });
  try {
    const hasState = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'feed_state'").get() as { n: number };
    if (hasState.n === 0) return undefined;
    const st = db.prepare('SELECT cursor, block_hash, snapshot_cursor, snapshot_block_hash FROM feed_state WHERE id = 1').get() as
      | { cursor: string | null; block_hash: string | null; snapshot_cursor: string | null; snapshot_block_hash: string | null }
      | undefined;
    const events = (
      db.prepare('SELECT cursor, type, payload FROM feed_events ORDER BY cursor').all() as { cursor: string; type: string; payload: string }[]
    ).map((r) => ({ cursor: r.cursor, type: r.type, payload: JSON.parse(r.payload) as unknown }));
    const balances: Record<string, string> = {};
    for (const r of db.prepare('SELECT account, amount FROM feed_balances ORDER BY account').all() as { account: string; amount: string }[]) {
      balances[r.account] = r.amount;
    }
    return {
      cursor: st?.cursor ?? null,
      blockHash: st?.block_hash ?? null,
      snapshotCursor: st?.snapshot_cursor ?? null,
      snapshotBlockHash: st?.snapshot_block_hash ?? null,
      events,
      balances,
    };
  } finally {
    db.close();
  }
}

/** Polls the store until pred holds (true) or ms passed (false). */
export async function storeReaches(path: string, pred: (s: FeedStore) => boolean, ms = 10000): Promise<boolean> {
  const deadline = now() + ms;
  for (;;) {
    let s: FeedStore | undefined;
    try {
      s = readFeedStore(path);
    } catch {
      s = undefined; // locked or half-created: try again
    }
    if (s && pred(s)) return true;
    if (now() > deadline) return false;
    await sleep(20);
  }
}

/** The activity list's cursors. */
export const cursors = (s: FeedStore | undefined): string[] => s?.events.map((e) => e.cursor) ?? [];

/** The activity list the store should hold for these event frames. */
export const eventsOf = (frames: Obj[]): FeedStore['events'] => frames.map((f) => ({ cursor: f.cursor as string, type: f.type as string, payload: f.payload }));

/** What a subscribe carries when it asks for a snapshot, and when it resumes from block/log. */
export const NULL_SUB = { cursor: null, blockHash: null };
export const subAt = (block: number, log = 0, fork = 0): { cursor: string; blockHash: string } => ({
  cursor: cur(block, log),
  blockHash: blockHash(block, fork),
});

/** The payload of a frame built above, as the store should hold it. */
export const payloadOf = (frame: Obj): unknown => frame.payload;
