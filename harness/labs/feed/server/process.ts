// The server under test as an OS process: the server contract's environment (its port asked of
// the OS), started through the run's supervisor as the `server` role, and the wait until it
// listens, which ends early when it exits or has not listened within the contract's 10 s. Its
// end: SIGTERM, after which it must exit 0 within 2 s (the harness kills it later).

import { connect } from 'node:net';
import type { RunContext } from '../../../lab-api/lab.js';
import type { StartedProcess } from '../../../processes/processes.js';
import type { ExitInfo } from '../../../processes/supervisor.js';
import type { FeedPlan, ServerUnderTestPlan } from '../scenario/plan.js';
import { sleep } from '../run/state.js';
import { sealServerProcess } from './guard/seal.js';
import { instanceTag, SERVER_SIGNAL } from './wire/names.js';

/** The contract: it listens within 10 s of starting. */
export const LISTEN_MS = 10_000;
/** The contract: exit 0 within 2 s of SIGTERM; the harness kills it this long after. */
export const SERVER_SIGTERM_EXIT_MS = 2000;
const SIGTERM_KILL_MS = 4000;

/** Every variable the server contract requires (section 1), and its fault hook. */
export function serverEnv(plan: FeedPlan, under: ServerUnderTestPlan, outbox: string, host: string, port: number): Record<string, string> {
  return {
    CHAOSLAB_OUTBOX_DB: outbox,
    CHAOSLAB_HOST: host,
    CHAOSLAB_PORT: String(port),
    CHAOSLAB_QUEUE_LIMIT: String(plan.server.queueLimit),
    CHAOSLAB_PING_MS: String(plan.server.pingMs),
    CHAOSLAB_IDLE_MS: String(plan.server.idleMs),
    CHAOSLAB_POLL_MS: String(under.pollMs),
    ...(under.fault ? { CHAOSLAB_FAULT: under.fault } : {}),
  };
}

export interface ServerProcess {
  started: StartedProcess;
  /** Its raw exit (bounded by the scenario's deadline). */
  exit: Promise<ExitInfo>;
  /** Its exit, once journaled. */
  finished: Promise<ExitInfo>;
  gone: () => boolean;
}

/** Starts the server under test; sealed (its own uid and room, its port, the outbox read-only) when the run is. */
export function startServer(ctx: RunContext<FeedPlan>, env: Record<string, string>): ServerProcess {
  const started = ctx.processes.start('server', 1, ctx.serverCommand!, env, sealServerProcess(ctx, env));
  const exit = ctx.processes.exit(started);
  let gone = false;
  const finished = ctx.processes.finish(started, exit).finally(() => {
    gone = true;
  });
  return { started, exit, finished, gone: () => gone };
}

/** One connection attempt: true when something accepts on host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Until the server accepts connections on its port: `listening`, or `exited` when it ended
 * first, or `timeout` after LISTEN_MS (then it is killed, and the journal says why).
 */
export async function awaitListening(
  ctx: RunContext<FeedPlan>,
  server: ServerProcess,
  host: string,
  port: number,
): Promise<'listening' | 'exited' | 'timeout'> {
  const from = performance.now();
  while (!server.gone() && !ctx.signal.aborted) {
    if (await accepts(host, port)) return 'listening';
    if (performance.now() - from >= LISTEN_MS) {
      ctx.journal.write({
        type: 'fault',
        action: 'apply',
        name: SERVER_SIGNAL.notListening,
        kind: 'signal',
        role: 'server',
        incarnation: server.started.incarnation,
        detail: `SIGKILL to the server under test (pid ${server.started.proc.pid}): it did not listen on ${host}:${port} within ${LISTEN_MS / 1000} s of starting`,
      });
      await server.started.proc.kill('harness');
      return 'timeout';
    }
    await sleep(50);
  }
  return 'exited';
}

/** SIGTERM once (and SIGCONT, should it be stopped), journaled; killed if still there after SIGTERM_KILL_MS. */
export async function terminateServer(ctx: RunContext<FeedPlan>, server: ServerProcess, name: string): Promise<void> {
  if (!server.gone()) {
    const { proc } = server.started;
    ctx.journal.write({
      type: 'fault',
      action: 'apply',
      name: SERVER_SIGNAL.sigterm,
      kind: 'signal',
      role: 'server',
      incarnation: server.started.incarnation,
      detail: `SIGTERM to the ${name} (pid ${proc.pid}): the run is over; it must send reset shutdown, close and exit 0 within ${SERVER_SIGTERM_EXIT_MS / 1000} s`,
    });
    proc.signal('SIGTERM');
    proc.continue();
    const timer = setTimeout(() => void proc.kill('harness'), SIGTERM_KILL_MS);
    void proc.exited.then(() => clearTimeout(timer));
  }
  await server.finished;
}

/** The lone server's name in the reports (a scene's instances are "server instance <n>"). */
export const LONE_SERVER = 'server under test';

/**
 * Names the server (`instance` undefined: the lone one) as process `incarnation` before it starts:
 * a `party` entry, so that reports draw it on its own lane and call it by the findings' name; the
 * probes' relays tag their opens with the instance they lead to.
 */
export function nameServer(ctx: RunContext<FeedPlan>, incarnation: number, instance?: number): void {
  ctx.journal.write({
    type: 'party',
    id: instance === undefined ? 'server' : `instance-${instance}`,
    name: instance === undefined ? LONE_SERVER : `server instance ${instance}`,
    side: 'server',
    about: ctx.serverCommand ?? '',
    process: { role: 'server', incarnation },
    tag: instanceTag(instance ?? 1),
  });
}
