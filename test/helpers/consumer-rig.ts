// Shared rig for the consumer tests (test/consumer-*.test.ts): a tiny scripted TCP
// publisher on 127.0.0.1 that sends literal bytes and records every line it receives, a
// runner for the real consumer processes (compiled TS, Python, mutants), and independent
// read-only SQLite helpers. Not a test file itself (.taprc runs test/**/*.test.ts).

import net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { Test } from 'tap';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Consumer {
  name: string;
  command: string;
  args: string[];
}

// CONSUMER_TEST_TS / CONSUMER_TEST_PY point the suite at another script (e.g. a deliberately
// broken copy, to check that the tests notice); by default the reference consumers run.
export const TS_CONSUMER: Consumer = {
  name: 'ts',
  command: process.execPath,
  args: [process.env.CONSUMER_TEST_TS ?? join(ROOT, 'dist/consumer/ledger/typescript/client.js')],
};
export const PY_CONSUMER: Consumer = {
  name: 'python',
  command: 'python3',
  args: [process.env.CONSUMER_TEST_PY ?? join(ROOT, 'consumer/ledger/python/client.py')],
};
export const MUTANT_ACK_BEFORE_COMMIT: Consumer = {
  name: 'mutant ack-before-commit',
  command: process.execPath,
  args: [join(ROOT, 'dist/consumer/ledger/mutants/ack-before-commit.js')],
};
export const CONSUMERS: readonly Consumer[] = [TS_CONSUMER, PY_CONSUMER];

// The mutants of consumer/ledger/mutants/ (see its README.md): near misses of the references, each
// in TypeScript (compiled to dist/) and Python.
export const MUTANT_NAMES = [
  'ack-before-commit',
  'split-commit',
  'reset-on-open',
  'resume-from-scratch',
  'no-dedupe',
  'no-duplicate-ack',
  'conflict-as-duplicate',
  'gap-skip',
  'lenient-parser',
  'continue-after-malformed',
  'no-timeout',
  'unbounded-line',
  'swallow-error',
  'timeout-default',
] as const;
export type MutantName = (typeof MUTANT_NAMES)[number];
export type Lang = 'ts' | 'python';

export function mutant(name: MutantName, lang: Lang): Consumer {
  return lang === 'ts'
    ? { name: `mutant ${name} [ts]`, command: process.execPath, args: [join(ROOT, `dist/consumer/ledger/mutants/${name}.js`)] }
    : { name: `mutant ${name} [python]`, command: 'python3', args: [join(ROOT, `consumer/ledger/mutants/${name}.py`)] };
}

/** The reference consumer of the same language as a mutant. */
export function referenceFor(lang: Lang): Consumer {
  return lang === 'ts' ? TS_CONSUMER : PY_CONSUMER;
}

/**
 * Runs `fn` once per language as subtests named `<name> [<lang>]`, with the mutant and the
 * reference consumer of that language.
 */
export function forEachMutantLang(t: Test, name: MutantName, title: string, fn: (t: Test, m: Consumer, ref: Consumer) => Promise<void>): void {
  for (const lang of ['ts', 'python'] as const) t.test(`${name}: ${title} [${lang}]`, (tt) => fn(tt, mutant(name, lang), referenceFor(lang)));
}

/** Runs `fn` once per reference consumer, as subtests named `<name> [<consumer>]`. */
export function forEachConsumer(t: Test, name: string, fn: (t: Test, c: Consumer) => Promise<void>): void {
  for (const c of CONSUMERS) t.test(`${name} [${c.name}]`, (tt) => fn(tt, c));
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- scripted publisher

export class Conn {
  /** Complete lines received from the consumer, without the LF. */
  readonly lines: string[] = [];
  raw = Buffer.alloc(0);
  closed = false;
  private pending = '';
  private readonly listeners = new Set<() => void>();

  constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.raw = Buffer.concat([this.raw, d]);
      this.pending += d.toString('latin1');
      let lf: number;
      while ((lf = this.pending.indexOf('\n')) !== -1) {
        this.lines.push(this.pending.slice(0, lf));
        this.pending = this.pending.slice(lf + 1);
      }
      this.notify();
    });
    socket.on('error', () => {}); // a consumer may close with a reset; what arrived before counts
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }

  send(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }

  end(): void {
    if (!this.socket.destroyed) this.socket.end();
  }

  /** Resolves true once pred() holds; false when the connection closed first or after ms. */
  until(pred: () => boolean, ms = 8000): Promise<boolean> {
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

  /** Waits until at least n lines arrived. */
  lineCount(n: number, ms = 8000): Promise<boolean> {
    return this.until(() => this.lines.length >= n, ms);
  }

  /** Waits until the consumer closed the connection (or ms passed). */
  closedWithin(ms = 8000): Promise<boolean> {
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

export type Script = (c: Conn, index: number) => Promise<void> | void;

export interface ScriptServer {
  port: number;
  conns: Conn[];
  /** Every script that ran, settled (errors are rethrown). */
  scripts(): Promise<void>;
}

export async function startServer(t: Test, script: Script): Promise<ScriptServer> {
  const conns: Conn[] = [];
  const running: Promise<void>[] = [];
  const server = net.createServer((socket) => {
    const c = new Conn(socket);
    const index = conns.push(c) - 1;
    running.push(Promise.resolve().then(() => script(c, index)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const c of conns) c.socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    conns,
    scripts: async () => {
      await Promise.all(running);
    },
  };
}

/**
 * Sends each step (one or more lines) and waits for one more received line or a close
 * before the next step; stops early when the consumer closed. Finally either ends the
 * stream itself (`end`, the normal publisher close) or waits for the consumer to close.
 */
export function lockstep(steps: (string | Buffer)[], finish: 'end' | 'wait' = 'end'): Script {
  return async (c) => {
    if (!(await c.lineCount(1))) return; // RESUME
    for (const step of steps) {
      const before = c.lines.length;
      c.send(step);
      if (!(await c.lineCount(before + 1))) return;
    }
    if (finish === 'end') c.end();
    await c.closedWithin();
  };
}

/** Sends all events at once (a window), ends after the ACK of the last one arrived. */
export function windowed(events: string[], ackCount = events.length): Script {
  return async (c) => {
    if (!(await c.lineCount(1))) return;
    c.send(events.join(''));
    await c.lineCount(1 + ackCount);
    c.end();
    await c.closedWithin();
  };
}

/**
 * A publisher with a log of `deltas`: sends every event after the RESUME cursor at once,
 * ends after their ACKs arrived (or after the usual wait), then waits for the close.
 */
export function replay(deltas: number[]): Script {
  return async (c) => {
    if (!(await c.lineCount(1))) return;
    const m = /^RESUME (-1|0|[1-9][0-9]*)$/.exec(c.lines[0]!);
    const from = m ? Number(m[1]) + 1 : deltas.length;
    const events = deltas.slice(from).map((d, i) => `EVENT ${from + i} ${d}\n`);
    if (events.length > 0) {
      c.send(events.join(''));
      await c.lineCount(1 + events.length);
    }
    c.end();
    await c.closedWithin();
  };
}

/**
 * Sends EVENT 0 1, then, while another connection holds a SHARED lock on the consumer's
 * file, EVENT 1 2. The lock lets the consumer write its changes but keeps its COMMIT from
 * finishing (it waits in its busy handler, 5 s by default), so an `ACK 1` seen meanwhile
 * was written before COMMIT. Records that in `seen.ackWhileLocked`, then releases the lock.
 */
export function commitBlockedScript(t: Test, dbPath: string, seen: { ackWhileLocked?: boolean; readWhileLocked?: StoreState }): Script {
  return async (conn) => {
    if (!(await conn.lineCount(1))) return;
    conn.send('EVENT 0 1\n');
    if (!(await conn.lineCount(2))) return;
    const reader = new Database(dbPath, { readonly: true });
    t.teardown(() => {
      if (reader.open) reader.close();
    });
    // Take the SHARED lock only once event 0 is committed: a consumer that ACKs before its
    // COMMIT (the ack-before-commit mutant) may not have committed 0 yet, and blocking that
    // COMMIT instead of the one for event 1 would test nothing.
    for (let tries = 0; ; tries++) {
      reader.exec('BEGIN');
      const { last } = reader.prepare('SELECT last FROM checkpoint').get() as { last: number }; // takes the SHARED lock
      if (last >= 0 || tries >= 500) break;
      reader.exec('COMMIT');
      await sleep(10);
    }
    conn.send('EVENT 1 2\n');
    seen.ackWhileLocked = await conn.lineCount(3, 1500);
    reader.exec('COMMIT');
    reader.close();
    if (!(await conn.lineCount(3))) return;
    conn.end();
    await conn.closedWithin();
  };
}

// ---------------------------------------------------------------- consumer processes

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** When the process ended (Date.now()). */
  endedAt: number;
}

export interface Running {
  child: ChildProcess;
  pid: number;
  exit: Promise<ExitInfo>;
}

export interface ContractEnv {
  port: number;
  db: string;
  timeoutMs?: number;
  fault?: string;
  host?: string;
}

/** Environment without any inherited CHAOSLAB_* variable. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAOSLAB_')) env[k] = v;
  return env;
}

export function contractEnv(e: ContractEnv): Record<string, string> {
  const env: Record<string, string> = {
    CHAOSLAB_HOST: e.host ?? '127.0.0.1',
    CHAOSLAB_PORT: String(e.port),
    CHAOSLAB_DB: e.db,
    CHAOSLAB_TIMEOUT_MS: String(e.timeoutMs ?? 3000),
  };
  if (e.fault !== undefined) env.CHAOSLAB_FAULT = e.fault;
  return env;
}

/**
 * Starts a consumer as a real process with exactly `vars` as its CHAOSLAB_* environment.
 * It is killed in teardown if still alive, and after `killAfterMs` as a safety net.
 */
export function startConsumer(t: Test, consumer: Consumer, vars: Record<string, string>, killAfterMs = 20000): Running {
  const child = spawn(consumer.command, consumer.args, { cwd: ROOT, env: { ...cleanEnv(), ...vars }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    if (stderr.length < 20000) stderr += d.toString();
  });
  const exit = new Promise<ExitInfo>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stderr, endedAt: Date.now() }));
  });
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const guard = setTimeout(() => {
    if (alive()) child.kill('SIGKILL');
  }, killAfterMs);
  void exit.then(() => clearTimeout(guard));
  t.teardown(async () => {
    clearTimeout(guard);
    if (alive()) {
      child.kill('SIGKILL');
      await exit;
    }
  });
  return { child, pid: child.pid!, exit };
}

export function runConsumer(t: Test, consumer: Consumer, e: ContractEnv): Running {
  return startConsumer(t, consumer, contractEnv(e));
}

/** Process state letter from /proc/<pid>/stat ('T' = stopped), or undefined when gone. */
export function procState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return text.slice(text.lastIndexOf(')') + 2)[0];
  } catch {
    return undefined;
  }
}

export async function waitForState(pid: number, state: string, ms = 8000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (procState(pid) === state) return true;
    await sleep(10);
  }
  return false;
}

// ---------------------------------------------------------------- independent SQLite access

export interface StoreState {
  last: number;
  total: number;
  ledger: [number, number][];
}

/** Reads the consumer's file through its own read-only connection. */
export function readStore(path: string): StoreState | undefined {
  if (!existsSync(path)) return undefined;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const cp = db.prepare('SELECT last, total FROM checkpoint WHERE id = 1').get() as { last: number; total: number };
    const rows = db.prepare('SELECT seq, delta FROM ledger ORDER BY seq').raw().all() as [number, number][];
    return { last: cp.last, total: cp.total, ledger: rows };
  } finally {
    db.close();
  }
}

/** Creates a store by hand, exactly as the contract's schema says. */
export function seedStore(path: string, last: number, total: number, ledger: [number, number][]): void {
  const db = new Database(path);
  try {
    db.exec(`CREATE TABLE checkpoint(id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL);
             CREATE TABLE ledger(seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL);`);
    db.prepare('INSERT INTO checkpoint VALUES (1, ?, ?)').run(last, total);
    const ins = db.prepare('INSERT INTO ledger VALUES (?, ?)');
    for (const [s, d] of ledger) ins.run(s, d);
  } finally {
    db.close();
  }
}

export const EMPTY: StoreState = { last: -1, total: 0, ledger: [] };
