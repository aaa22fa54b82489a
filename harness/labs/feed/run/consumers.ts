// The feed run's consumer processes. The control runs once, long-running, direct to its stream.
// The consumer under test runs behind the proxy and is started again only after an unexpected
// exit, up to restart.max processes; a bad-environment scenario runs one plain process instead.

import { withBadEnvironment } from '../../../judge/environment-duty.js';
import { STOPPED_READ_TIMEOUT_MS } from '../../../judge/stopped-lock.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { type StartedProcess, sleepUntilEnded, untilEnded } from '../../../processes/processes.js';
import type { FeedPlan } from '../scenario/plan.js';
import type { FeedRunState } from './state.js';
import type { FeedStores } from './stores.js';

/** Every variable the contract requires; the control gets no fault and no apply delay. */
export function consumerEnv(plan: FeedPlan, port: number, db: string, clientId: string): Record<string, string> {
  const c = plan.consumer;
  return {
    CHAOSLAB_HOST: '127.0.0.1',
    CHAOSLAB_PORT: String(port),
    CHAOSLAB_DB: db,
    CHAOSLAB_CLIENT_ID: clientId,
    CHAOSLAB_TOPICS: plan.topics.join(','),
    CHAOSLAB_PING_MS: String(c.pingMs),
    CHAOSLAB_IDLE_MS: String(c.idleMs),
    CHAOSLAB_BACKOFF_BASE_MS: String(c.backoffBaseMs),
    CHAOSLAB_BACKOFF_CAP_MS: String(c.backoffCapMs),
  };
}

/** One plain process that must exit 64 before connecting anything: no control, no script. */
export async function runBadEnvironment(ctx: RunContext<FeedPlan>, stores: FeedStores, state: FeedRunState, proxyPort: number): Promise<void> {
  const c = ctx.scenario.lab.consumer;
  const env = consumerEnv(ctx.scenario.lab, proxyPort, stores.dbs.consumer, c.clientId);
  const started = ctx.processes.start('consumer', 1, ctx.consumerCommand, withBadEnvironment(env, c.badEnvironment!), stores.room);
  state.current = started;
  await ctx.processes.finish(started);
  state.current = undefined;
  stores.journalRead('consumer', 1, 'after-exit', { writerGone: true });
}

/** Starts the control; `done` settles when it has exited (and `state.controlRunning` turns false). */
export function startControl(
  ctx: RunContext<FeedPlan>,
  stores: FeedStores,
  state: FeedRunState,
  port: number,
): { proc: StartedProcess; done: Promise<unknown> } {
  const env = consumerEnv(ctx.scenario.lab, port, stores.dbs.control, `${ctx.scenario.lab.consumer.clientId}-control`);
  const proc = ctx.processes.start('control', 1, ctx.controlCommand, env);
  const done = ctx.processes.finish(proc, ctx.processes.exit(proc)).finally(() => {
    state.controlRunning = false;
  });
  return { proc, done };
}

/**
 * The consumer under test: restarted only after an unexpected exit, up to restart.max processes,
 * and never once the run has ended (ctx.signal), whatever the proxy does: this loop runs
 * detached from the script, which may end the run by throwing while it waits here. It never
 * rejects: an error is kept in `state.loopError`.
 */
export function runConsumers(ctx: RunContext<FeedPlan>, stores: FeedStores, state: FeedRunState, proxyPort: number): Promise<void> {
  const c = ctx.scenario.lab.consumer;
  const engine = state.faults!;
  const over = () => state.terminating || ctx.signal.aborted;
  const loop = async () => {
    for (let n = 1; n <= c.restart.max && !over(); n++) {
      if (n > 1 && c.restart.delayMs > 0) await sleepUntilEnded(c.restart.delayMs, ctx.signal);
      if (over()) break;
      await untilEnded(ctx.signal, engine.incarnationStarting(n));
      if (over()) break;
      await runOneConsumer(ctx, stores, state, proxyPort, n);
      if (over()) break;
      // An unexpected exit: read the file before anything else touches it, then start the next process.
      stores.journalRead('consumer', n, 'after-exit', { writerGone: true });
      await untilEnded(ctx.signal, engine.incarnationExited(n));
    }
    state.consumersOver = true;
  };
  return loop().catch((error: unknown) => {
    state.loopError = error;
    state.consumersOver = true;
  });
}

/** Consumer process n, from start to exit; a process that stops itself (`stop@`) has its store read while stopped. */
async function runOneConsumer(ctx: RunContext<FeedPlan>, stores: FeedStores, state: FeedRunState, proxyPort: number, n: number): Promise<void> {
  const c = ctx.scenario.lab.consumer;
  const fault = c.processes[n - 1]?.fault;
  const env = {
    ...consumerEnv(ctx.scenario.lab, proxyPort, stores.dbs.consumer, c.clientId),
    ...(c.applyDelayMs > 0 ? { CHAOSLAB_APPLY_DELAY_MS: String(c.applyDelayMs) } : {}),
    ...(fault ? { CHAOSLAB_FAULT: fault } : {}),
  };
  const started = ctx.processes.start('consumer', n, ctx.consumerCommand, env, stores.room);
  state.current = started;
  const exit = ctx.processes.exit(started);
  const watching = fault?.includes('stop@')
    ? ctx.processes.observeSelfStops(started, exit, () => stores.journalRead('consumer', n, 'while-stopped', { timeoutMs: STOPPED_READ_TIMEOUT_MS }))
    : Promise.resolve();
  await ctx.processes.finish(started, exit);
  await watching;
  state.current = undefined;
}
