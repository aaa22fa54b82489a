// Rig for the black-box server contract suite (test/publisher/feed/server-contract*.test.ts): an
// outbox written by the project's own chain, indexer and producer, in the test's folder; a
// push server started as an OS process the way chaoslab starts one (`bash -c`, from the
// project root, everything in the environment); and what a test needs to see of that process
// from outside (its exit, its stderr, whether it is stopped). Not a test file itself.

import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../harness/base/free-port.js';
import { listensOnLoopback } from '../../harness/sandbox/peer.js';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Test } from 'tap';
import { type ChainConfig, SimChain } from '../../publisher/feed/chain/chain.js';
import { BlockProducer } from '../../publisher/feed/chain/producer.js';
import { OutboxIndexer } from '../../publisher/feed/outbox/indexer.js';
import { ROOT } from './consumer-rig.js';
import { sleep, waitFor } from './feed-lab.js';

/** A server under test: a shell command line run from the project root. */
export interface ServerUnderTest {
  name: string;
  command: string;
}

export interface OutboxRig {
  path: string;
  chain: SimChain;
  indexer: OutboxIndexer;
  producer: BlockProducer;
}

/** A fresh outbox in the test's folder, written by the project's indexer (the only writer). */
export function startOutbox(t: Test, options: { chain?: Partial<ChainConfig>; initialBlocks?: number; retentionMs?: number } = {}): OutboxRig {
  const path = join(t.testdir(), 'outbox.db');
  const chain = new SimChain({ seed: 1, confirmations: 3, logsPerBlock: { min: 1, max: 4 }, ...options.chain });
  const indexer = new OutboxIndexer(path, {
    chainId: chain.chainId,
    confirmations: chain.confirmations,
    genesis: chain.genesis,
    genesisBalances: chain.genesisBalances,
    retentionMs: options.retentionMs,
  });
  t.teardown(() => indexer.close());
  // The server is another process: it learns of each commit by polling, not by being told.
  const producer = new BlockProducer(chain, indexer, () => {});
  producer.mine(options.initialBlocks ?? 0);
  return { path, chain, indexer, producer };
}

/** The contract's environment with calm defaults: tests that need other times say so. */
export function serverEnv(outboxPath: string, port: number, overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    CHAOSLAB_OUTBOX_DB: outboxPath,
    CHAOSLAB_HOST: '127.0.0.1',
    CHAOSLAB_PORT: String(port),
    CHAOSLAB_QUEUE_LIMIT: '1000',
    CHAOSLAB_PING_MS: '60000',
    CHAOSLAB_IDLE_MS: '120000',
    CHAOSLAB_POLL_MS: '20',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ServerProcess {
  private stderrText = '';
  readonly exited: Promise<Exit>;
  private exit: Exit | undefined;

  constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrText += chunk.toString('utf8');
    });
    child.stdout?.resume();
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get stderr(): string {
    return this.stderrText;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  signal(name: NodeJS.Signals): void {
    if (this.running) process.kill(this.pid, name);
  }

  /** The process's state letter in /proc (T: stopped), or undefined once it is gone. */
  state(): string | undefined {
    try {
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    } catch {
      return undefined;
    }
  }

  async waitStopped(what: string): Promise<void> {
    await waitFor(() => this.state() === 'T' || !this.running, `${what}: the server stopped itself`, 30_000);
    if (!this.running) throw new Error(`${what}: the server exited instead of stopping (${this.stderr})`);
  }

  /** SIGCONT (in case it is stopped), SIGKILL, and its exit. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    await this.exited;
  }
}

/** Starts `server` as chaoslab does (`bash -c`, from the project root) with `env`. */
export function spawnServer(server: ServerUnderTest, env: Record<string, string>, port: number): ServerProcess {
  // `exec`: the pid we signal is the server's own, not a shell's.
  const child = spawn('bash', ['-c', `exec ${server.command}`], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new ServerProcess(child, port);
}

/**
 * Whether process `pid` accepts a connection on `port`: one made, and the socket that listens there
 * held by that process itself, not by another that took the same port on a busy machine (CI saw
 * it). The /proc/net/tcp read costs milliseconds of kernel time: only after a connection was accepted.
 */
export const acceptsOwn = (pid: number, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(listensOnLoopback(pid, port));
    });
    socket.once('error', () => resolve(false));
  });

/** Starts the server on a free port and waits until it listens (the contract allows 10 s; a busy machine gets more). */
export async function startServer(
  t: Test,
  server: ServerUnderTest,
  outboxPath: string,
  overrides: Record<string, string | undefined> = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const proc = spawnServer(server, serverEnv(outboxPath, port, overrides), port);
  t.teardown(() => proc.kill());
  const deadline = Date.now() + 30_000;
  while (!(await acceptsOwn(proc.pid, port))) {
    if (!proc.running) throw new Error(`${server.name} exited before listening: ${JSON.stringify(await proc.exited)}\n${proc.stderr}`);
    if (Date.now() > deadline) throw new Error(`${server.name} did not listen on ${port} within 30 s\n${proc.stderr}`);
    await sleep(50);
  }
  return proc;
}

/** Runs the server to its exit (a bad environment): its status, its stderr, and whether it ever accepted a connection on its port. */
export async function runToExit(server: ServerUnderTest, env: Record<string, string>, port: number): Promise<Exit & { stderr: string; listened: boolean }> {
  const proc = spawnServer(server, env, port);
  let listened = false;
  const timer = setTimeout(() => void proc.kill(), 60_000);
  while (proc.running) {
    listened ||= await acceptsOwn(proc.pid, port);
    await Promise.race([proc.exited, sleep(25)]);
  }
  clearTimeout(timer);
  return { ...(await proc.exited), stderr: proc.stderr, listened };
}
