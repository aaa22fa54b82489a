// The chain's script in a server run. The snapshot race made deterministic: the server stops
// itself at its `stop@` hook (after the first snapshot was read, before its frame is sent);
// while it is stopped the harness commits the script's first blocks to the outbox (the harness's
// indexer writes it, the server only reads it), then lets it go on. A server that buffers from
// before the snapshot delivers their events; one that starts following only afterwards loses
// them. Then the rest of the script in compressed time, and the confirmation blocks.

import { performance } from 'node:perf_hooks';
import type { ChainChange, SimChain } from '../../../../publisher/feed/chain/chain.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { type ChainScript, confirmationBlocks } from '../scenario/chain-script.js';
import type { FeedPlan, ServerUnderTestPlan } from '../scenario/plan.js';
import { sleep } from '../run/state.js';
import type { ServerProcess } from './process.js';
import { blocksWhileStopped } from './scenario.js';
import type { OutboxWriter } from './guard/outbox-lock.js';

/** The journal's name for the harness's commits while the server is stopped (then its SIGCONT). */
export const COMMIT_WHILE_STOPPED = 'commit-while-stopped';

export interface ChainSide {
  chain: SimChain;
  script: ChainScript;
  indexer: OutboxWriter;
}

export interface StopCommit {
  /** Settles when the server has exited (it watches every stop until then); never rejects. */
  watching: Promise<void>;
  /** The blocks were committed while the server was stopped. */
  committed(): boolean;
  /** Throws what ended the watch early (the outbox locked against the commit while stopped). */
  throwIfFailed(): void;
}

/** Writes `change` to the outbox and journals the commit (its blocks and logs): the probes' and clients' delivery lag is timed from it. */
export function commitChange(ctx: RunContext<FeedPlan>, indexer: OutboxWriter, change: ChainChange): void {
  indexer.apply(change);
  const blocks = change.kind === 'block' ? [change.block] : change.added;
  ctx.journal.write({ type: 'outbox-commit', blocks: blocks.map((b) => b.number), logs: blocks.reduce((sum, b) => sum + b.logs.length, 0) });
}

/** Performs script steps until `blocks` more blocks are mined (a reorganisation among them is performed too). */
function mineBlocks(ctx: RunContext<FeedPlan>, side: ChainSide, blocks: number): number {
  let mined = 0;
  let events = 0;
  while (mined < blocks) {
    const step = side.script.next();
    if (!step) break;
    const change = side.script.perform(step);
    commitChange(ctx, side.indexer, change);
    if (step.kind === 'block') mined++;
    if (change.kind === 'block') events += change.block.logs.length;
  }
  return events;
}

/**
 * While the server runs: at its first stop (before the script started), commit the first
 * `blocksWhileStopped` blocks and journal it; every stop is then let go on (SIGCONT, journaled by
 * the process runner).
 */
export function commitWhileStopped(ctx: RunContext<FeedPlan>, server: ServerProcess, side: ChainSide, under: ServerUnderTestPlan): StopCommit {
  let committed = false;
  // A commit that fails while the server is stopped (OutboxLocked) is thrown where the run waits
  // (awaitStopCommitted, the end of the run), not left to reject a promise nobody awaits yet: that
  // took the whole sealed worker down.
  let failure: { error: unknown } | undefined;
  const { from, to } = blocksWhileStopped(ctx.scenario.lab.chain, under);
  const watch = ctx.processes.observeSelfStops(server.started, server.exit, () => {
    if (committed) return;
    const logs = mineBlocks(ctx, side, under.blocksWhileStopped);
    committed = true;
    ctx.journal.write({
      type: 'fault',
      action: 'apply',
      name: COMMIT_WHILE_STOPPED,
      kind: 'signal',
      role: 'server',
      incarnation: server.started.incarnation,
      detail: `the server under test stopped itself (${under.fault}); blocks ${from}..${to} (${logs} logs) were committed to the outbox meanwhile, then SIGCONT`,
    });
    ctx.log(`server stopped itself: blocks ${from}..${to} committed, SIGCONT`);
  });
  const watching = watch.catch((error: unknown) => {
    failure = { error };
  });
  return {
    watching,
    committed: () => committed,
    throwIfFailed: () => {
      if (failure) throw failure.error;
    },
  };
}

/** Until the blocks were committed while the server was stopped, or start_ms passed, or `over()`. */
export async function awaitStopCommitted(ctx: RunContext<FeedPlan>, stop: StopCommit, over: () => boolean): Promise<void> {
  const from = performance.now();
  while (!stop.committed() && !over() && !ctx.signal.aborted && performance.now() - from < ctx.scenario.lab.time.startMs) {
    stop.throwIfFailed();
    await sleep(20);
  }
  stop.throwIfFailed();
}

/**
 * Holds the script after a commit until what it committed has reached the clients that time
 * delivery, at most for the bound they are judged by: false when it had not by then.
 */
export type AwaitDelivered = (change: ChainChange) => Promise<boolean>;

/**
 * The rest of the script, one block period apart, then the confirmation blocks; the server finds
 * them by polling. With `delivered`, a block also comes no sooner than the one before it reached
 * every client: the lag is one block's fan-out, not a backlog that a loaded machine let pile up.
 * Once a block misses the bound, the clock alone paces the rest (the lag fails the run anyway).
 */
export async function playRest(ctx: RunContext<FeedPlan>, side: ChainSide, over: () => boolean, delivered?: AwaitDelivered): Promise<void> {
  const period = ctx.scenario.lab.time.blockPeriodMs;
  let t0 = performance.now();
  let notBefore = t0;
  let tick = 0;
  const commitAt = async (at: number, change: () => ChainChange) => {
    // A late delivery shifts the rest of the script: the blocks after it are not squeezed together.
    t0 = Math.max(t0, notBefore - at * period);
    await sleep(t0 + at * period - performance.now());
    const committed = change();
    commitChange(ctx, side.indexer, committed);
    if (!delivered) return;
    if (!(await delivered(committed))) {
      delivered = undefined;
      ctx.log('a block did not reach every client within the lag bound: the script goes on at its own pace');
    }
    notBefore = performance.now();
  };
  for (let step = side.script.next(); step && !over(); step = side.script.next()) {
    ctx.signal.throwIfAborted();
    const current = step;
    tick += current.kind === 'block' ? 1 : 0;
    await commitAt(current.kind === 'block' ? tick : tick + 0.5, () => side.script.perform(current));
  }
  for (const block of confirmationBlocks(side.chain, side.chain.head, ctx.scenario.lab.chain.confirmations)) {
    ctx.signal.throwIfAborted();
    tick++;
    await commitAt(tick, () => ({ kind: 'block', block }));
  }
}
