// The chain's script played in compressed virtual time, once both consumers have subscribed:
// block k at t0 + k periods, a reorganisation half a period after its block, each behind its
// fault point; then empty blocks until the script's last block is safe, so that the state every
// store must reach is final.

import { performance } from 'node:perf_hooks';
import type { FeedPublisher } from '../../../../publisher/feed/server/server.js';
import type { FaultEngine } from '../../../faults/engine.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { untilEnded } from '../../../processes/processes.js';
import { confirmationBlocks } from '../scenario/chain-script.js';
import type { FeedPlan } from '../scenario/plan.js';
import type { FeedSide } from './publisher.js';
import { type FeedRunState, sleep } from './state.js';

/** Waits until both streams have a subscriber, or start_ms has passed, or a consumer is gone. */
export async function awaitSubscribers(ctx: RunContext<FeedPlan>, publisher: FeedPublisher, state: FeedRunState): Promise<void> {
  const control = publisher.stream('control').stream;
  const consumer = publisher.stream('consumer').stream;
  const waitFrom = performance.now();
  while (
    (control.subscribeCount < 1 || consumer.subscribeCount < 1) &&
    performance.now() - waitFrom < ctx.scenario.lab.time.startMs &&
    !state.consumersOver &&
    state.controlRunning &&
    !ctx.signal.aborted
  )
    await sleep(20);
}

/** Plays the script, then the confirmation blocks; stops early when the consumer loop failed. */
export async function playScript(ctx: RunContext<FeedPlan>, side: FeedSide, engine: FaultEngine, state: FeedRunState): Promise<void> {
  const { chain, script, indexer, publisher } = side;
  const period = ctx.scenario.lab.time.blockPeriodMs;
  const t0 = performance.now();
  let tick = 0;
  const until = async (k: number) => sleep(t0 + k * period - performance.now());
  for (let step = script.next(); step && !state.loopError; step = script.next()) {
    ctx.signal.throwIfAborted();
    if (step.kind === 'block') {
      tick++;
      await until(tick);
      await untilEnded(ctx.signal, engine.point('before_block', step.number));
    } else {
      await until(tick + 0.5);
      await untilEnded(ctx.signal, engine.point('before_reorg', step.ordinal));
    }
    indexer.apply(script.perform(step));
    publisher.outboxChanged();
  }
  for (const block of confirmationBlocks(chain, chain.head, ctx.scenario.lab.chain.confirmations)) {
    ctx.signal.throwIfAborted();
    tick++;
    await until(tick);
    indexer.apply({ kind: 'block', block });
    publisher.outboxChanged();
  }
}
