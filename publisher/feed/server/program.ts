// The reference push server as a program, under the server contract (publisher/feed/CONTRACT.md):
// the CHAOSLAB_* environment read and checked (exit 64), the fault hooks counted over the whole
// process, one listener on the outbox, and SIGTERM answered with `reset shutdown` and exit 0.
// `runServer(overrides)` is what main.ts runs; a server mutant (publisher/feed/mutants/) runs it
// with one of the connection's steps replaced.

import { FeedPublisher } from './server.js';
import { EnvironmentError, type ServerEnvironment, type ServerFault, readServerEnvironment } from './environment.js';
import type { FeedStreamHooks } from './connection.js';
import type { DeliverySteps } from './delivery.js';

/** What `exit` exits with, as in the consumer contract. */
const FAULT_EXIT = 86;
/** SIGTERM: `reset shutdown` everywhere and exit 0 within the contract's 2 s. */
const SHUTDOWN_GRACE_MS = 1500;

/** Counts each point over the whole process and fires the faults that name its count. */
function faultHooks(faults: readonly ServerFault[]): FeedStreamHooks {
  const counts = { snapshot: 0, event: 0, revoke: 0 };
  const fire = (point: ServerFault['point']) => {
    const n = ++counts[point];
    for (const fault of faults) {
      if (fault.point !== point || fault.n !== n) continue;
      if (fault.action === 'exit') process.exit(FAULT_EXIT);
      process.kill(process.pid, 'SIGSTOP');
    }
  };
  if (faults.length === 0) return {};
  return {
    afterSnapshot: () => fire('snapshot'),
    beforeEvent: () => fire('event'),
    onReorg: (_conn, reorg) => {
      if (reorg.revoke) fire('revoke');
    },
  };
}

function environmentOrExit(): ServerEnvironment {
  try {
    return readServerEnvironment(process.env);
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    process.stderr.write(`feed server: ${error.message}\n`);
    process.exit(64);
  }
}

export interface ServerOverrides {
  /** Connection steps replaced by a mutant; the others stay the reference's. */
  steps?: Partial<DeliverySteps>;
}

export async function runServer(overrides: ServerOverrides = {}): Promise<void> {
  const env = environmentOrExit();
  let publisher: FeedPublisher;
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
        },
      ],
    });
  } catch (error) {
    // An outbox that cannot be opened, or a port that cannot be had: named, and nothing listens.
    process.stderr.write(`feed server: cannot serve ${env.outboxPath} on ${env.host}:${env.port}: ${(error as Error).message}\n`);
    process.exit(64);
  }
  process.stderr.write(`feed server listening on ${env.host}:${env.port}, outbox ${env.outboxPath}\n`);
  const stop = () => void publisher.close(SHUTDOWN_GRACE_MS).then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
