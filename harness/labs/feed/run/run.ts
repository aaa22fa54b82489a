// The feed lab's process model. The publisher runs in the harness's process: a simulated chain,
// its indexer writing the outbox database in the run folder, and the push server with one
// listener for the always-connected control consumer (direct) and one for the consumer under
// test (behind Toxiproxy). Both consumers are long-running and reconnect by themselves; the
// harness starts the consumer again only after it exits unexpectedly (a crash hook). Once both
// have subscribed, the chain advances per the script in compressed virtual time; after the
// script and enough empty blocks to confirm it, the harness waits until both stores reach the
// expected state (reading them through independent connections), then sends both SIGTERM and
// expects exit 0 within 2 s. Every store is also read when a subscribe arrives (the durable
// cursor that subscribe must carry), while a process stops itself, and after a crash.

import type { RunContext } from '../../../lab-api/lab.js';
import type { FeedPlan } from '../scenario/plan.js';
import { runBadEnvironment, runConsumers, startControl } from './consumers.js';
import { awaitConvergence, awaitQuietPing } from './converge.js';
import { startFeedSide } from './publisher.js';
import { awaitSubscribers, playScript } from './script.js';
import { newFeedRunState } from './state.js';
import { feedStores } from './stores.js';
import { sigtermAtEnd } from './terminate.js';

export async function runFeed(ctx: RunContext<FeedPlan>): Promise<void> {
  const state = newFeedRunState();
  const stores = feedStores(ctx);
  const side = await startFeedSide(ctx, stores, state);
  const consumerStream = side.publisher.stream('consumer');
  const proxy = await ctx.proxy('consumer', { host: consumerStream.host, port: consumerStream.port });
  const engine = ctx.faults({ proxy, current: () => state.current });
  state.faults = engine;

  if (ctx.scenario.lab.consumer.badEnvironment) {
    await runBadEnvironment(ctx, stores, state, proxy.listen.port);
    await engine.stop();
    return;
  }

  const control = startControl(ctx, stores, state, side.publisher.stream('control').port);
  const consumersDone = runConsumers(ctx, stores, state, proxy.listen.port);
  await awaitSubscribers(ctx, side.publisher, state);
  await playScript(ctx, side, engine, state);
  await awaitConvergence(ctx, stores, side.sent, state);
  await awaitQuietPing(ctx, side.heartbeats, state);

  state.terminating = true;
  sigtermAtEnd(ctx, 'consumer', state.current, state.current !== undefined);
  sigtermAtEnd(ctx, 'control', control.proc, state.controlRunning);
  await Promise.all([consumersDone, control.done]);
  await engine.stop();
  if (state.loopError !== undefined) throw state.loopError;
}
