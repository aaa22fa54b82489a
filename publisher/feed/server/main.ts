#!/usr/bin/env node
// The reference push server as a program of its own, under the server contract
// (publisher/feed/CONTRACT.md): `node dist/publisher/feed/server/main.js` with the CHAOSLAB_*
// variables set. It reads the chain only from the outbox (polled), serves one port, and keeps
// nothing that a restart could lose. This is the process chaoslab grades a student's server
// against; the harness's in-process publisher is the same code with more streams.

import { FeedPublisher } from './server.js';
import { EnvironmentError, type ServerEnvironment, type ServerFault, readServerEnvironment } from './environment.js';
import type { FeedStreamHooks } from './connection.js';
import { OutboxReader } from '../outbox/reader.js';

/** What `exit` exits with, as in the consumer contract; 64 is a bad environment. */
const FAULT_EXIT = 86;
const BAD_ENVIRONMENT = 64;
/** SIGTERM: `reset shutdown` everywhere and exit 0 within the contract's 2 s. */
const SHUTDOWN_GRACE_MS = 1500;
const SHUTDOWN_DEADLINE_MS = 1900;

/** `exit` ends the process with no cleanup at all: no close, no flush, no exit listener (a real crash). */
function crash(code: number): never {
  const p = process as unknown as { reallyExit?: (code: number) => never };
  if (typeof p.reallyExit === 'function') p.reallyExit(code);
  process.exit(code);
}

/** Counts each point over the whole process and fires the faults that name its count (section 6). */
function faultHooks(faults: readonly ServerFault[]): FeedStreamHooks {
  const counts = { snapshot: 0, event: 0, revoke: 0 };
  const fire = (point: ServerFault['point']) => {
    const n = ++counts[point];
    for (const fault of faults) {
      if (fault.point !== point || fault.n !== n) continue;
      if (fault.action === 'exit') crash(FAULT_EXIT);
      process.kill(process.pid, 'SIGSTOP'); // continues here after SIGCONT
    }
  };
  if (faults.length === 0) return {};
  return {
    // After the snapshot was read, before its frame is queued.
    afterSnapshot: () => fire('snapshot'),
    // Before the frame is queued: a frame a reset drops later still counts.
    beforeQueue: (_conn, op) => fire(op),
  };
}

function refuse(message: string): never {
  process.stderr.write(`feed server: ${message}\n`);
  process.exit(BAD_ENVIRONMENT);
}

function environmentOrExit(): ServerEnvironment {
  try {
    return readServerEnvironment(process.env);
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    refuse(error.message);
  }
}

/** An outbox that cannot be opened is a bad environment, named before anything listens. */
function checkOutbox(path: string): void {
  try {
    new OutboxReader(path).close();
  } catch (error) {
    refuse(`CHAOSLAB_OUTBOX_DB: cannot open ${path} as an outbox: ${(error as Error).message}`);
  }
}

const env = environmentOrExit();
checkOutbox(env.outboxPath);

let publisher: FeedPublisher | undefined;
let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(0), SHUTDOWN_DEADLINE_MS).unref();
  void (publisher?.close(SHUTDOWN_GRACE_MS) ?? Promise.resolve()).then(() => process.exit(0));
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

try {
  publisher = await FeedPublisher.start({
    outboxPath: env.outboxPath,
    host: env.host,
    ports: { server: env.port },
    pollMs: env.pollMs,
    streams: [{ name: 'server', queueLimit: env.queueLimit, pingMs: env.pingMs, idleMs: env.idleMs, hooks: faultHooks(env.faults) }],
  });
} catch (error) {
  // A port that cannot be had (in use, or an address not of this machine): named, and nothing listens.
  refuse(`CHAOSLAB_HOST/CHAOSLAB_PORT: cannot listen on ${env.host}:${env.port}: ${(error as Error).message}`);
}
process.stderr.write(`feed server listening on ${env.host}:${env.port}, outbox ${env.outboxPath}\n`);
