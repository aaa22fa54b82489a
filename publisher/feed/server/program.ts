// The reference push server as a program, under the server contract (publisher/feed/CONTRACT.md):
// the CHAOSLAB_* environment read and checked (exit 64), the fault hooks counted over the whole
// process, one listener on the outbox, and SIGTERM answered with `reset shutdown` and exit 0.
// `runServer(overrides)` is what main.ts runs; a server mutant (publisher/feed/mutants/) runs it
// with one of the connection's steps replaced.

import { FeedPublisher } from './server.js';
import { EnvironmentError, type ServerEnvironment, type ServerFault, readServerEnvironment } from './environment.js';
import type { FeedStreamHooks } from './connection.js';
import type { DeliverySteps } from './delivery.js';
import type { ConnectionPolicy } from './policy.js';
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

export interface ServerOverrides {
  /** Connection steps replaced by a mutant; the others stay the reference's. */
  steps?: Partial<DeliverySteps>;
  /** Answers to a misbehaving client replaced by a mutant (queue overflow, heartbeats, bad frames). */
  policy?: Partial<ConnectionPolicy>;
}

export async function runServer(overrides: ServerOverrides = {}): Promise<void> {
  const env = environmentOrExit();
  checkOutbox(env.outboxPath);

  let publisher: FeedPublisher | undefined;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), SHUTDOWN_DEADLINE_MS).unref();
    void (publisher?.close(SHUTDOWN_GRACE_MS) ?? Promise.resolve()).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  try {
    publisher = await FeedPublisher.start({
      outboxPath: env.outboxPath,
      host: env.host,
      ports: { server: env.port },
      pollMs: env.pollMs,
      // Its own faults on stderr: a connection it closed on an internal error says so.
      onTranscript: (entry) => {
        if (entry.kind === 'close' && entry.reason.startsWith('internal error'))
          process.stderr.write(`feed server: connection ${entry.conn} closed: ${entry.reason}\n`);
      },
      streams: [
        {
          name: 'server',
          queueLimit: env.queueLimit,
          pingMs: env.pingMs,
          idleMs: env.idleMs,
          hooks: faultHooks(env.faults),
          ...(overrides.steps ? { steps: overrides.steps } : {}),
          ...(overrides.policy ? { policy: overrides.policy } : {}),
        },
      ],
    });
  } catch (error) {
    // A port that cannot be had (in use, or an address not of this machine): named, and nothing listens.
    refuse(`CHAOSLAB_HOST/CHAOSLAB_PORT: cannot listen on ${env.host}:${env.port}: ${(error as Error).message}`);
  }
  process.stderr.write(`feed server listening on ${env.host}:${env.port}, outbox ${env.outboxPath}\n`);
}
