// The restart storm's process model (issue 12): K processes of the command under test, each on
// its own store and behind its own proxy to its own listener of the storm server. Once all have
// their snapshot, the server restarts `rounds` times (storm/server.ts); between two restarts
// each process is served one event, so that the first retry of the next restart shows whether
// its backoff's n went back to 0. At the end every process gets SIGTERM and must exit 0.

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { encodeSnapshot } from '../../../../protocol/feed/encode.js';
import type { TranscriptEntry } from '../../../../publisher/transcript.js';
import type { RunContext } from '../../../lab-api/lab.js';
import type { StartedProcess } from '../../../processes/processes.js';
import { simulate } from '../scenario/chain-script.js';
import { SIGTERM_EXIT_MS, SIGTERM_FAULT } from '../check/facts.js';
import type { FeedPlan, StormPlan } from '../scenario/plan.js';
import { consumerEnv } from '../run/consumers.js';
import { preCapSteps } from './scenario.js';
import { StormServer, streamName } from './server.js';

const SIGTERM_KILL_MS = 4000;
/** How long the processes may take to start and take their snapshot. */
const START_MS = 30_000;
/** After everyone is served: time to commit the event before the next restart. */
const SETTLE_MS = 300;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The frames served: the snapshot at the initial blocks' end, then the script's events for the topics, one per served connection. */
export function stormFrames(plan: FeedPlan): { snapshot: string; events: string[] } {
  const sim = simulate(plan.chain, plan.topicIndexes);
  const at = plan.chain.initialBlocks;
  const block = sim.chain.canonicalAt(at);
  const balances = sim.chain.balancesAt(at);
  const cursor = { chainId: plan.chain.chainId, blockNumber: at, logIndex: 0 };
  const snapshot = encodeSnapshot(
    cursor,
    block?.hash ?? `0x${'0'.repeat(64)}`,
    sim.topics.map((a) => [a, balances.get(a) ?? 0n] as const),
  );
  const events = sim.events
    .filter((e) => Number(e.cursor.split(':')[1]) > at)
    .map((e) => `${JSON.stringify({ op: 'event', cursor: e.cursor, type: e.type, payload: e.payload })}\n`);
  return { snapshot, events };
}

export async function runStorm(ctx: RunContext<FeedPlan>, storm: StormPlan): Promise<void> {
  const plan = ctx.scenario.lab;
  const c = plan.consumer;
  // Opens are journaled here, at once: the wire recorder's peer lookup (/proc) would block the
  // event loop for tens of ms per attempt and delay every other process's accept (the storm's
  // ports are reached only through its proxies, which is what that lookup guards). The rest
  // (lines, with their bounds) goes through the recorder.
  const recorder = ctx.wire(() => undefined);
  const record = (entry: TranscriptEntry) => {
    if (entry.kind !== 'open') return recorder(entry);
    const k = Number(/^storm-(\d+)$/.exec(entry.stream)?.[1]);
    const { t: _t, ends: _ends, ...rest } = entry;
    ctx.journal.write({ type: 'wire', ...rest, owner: { role: 'consumer', incarnation: k } });
  };
  const server = await StormServer.start({
    processes: storm.processes,
    rules: {
      roundMs: storm.roundMs,
      roundMaxMs: storm.roundMaxMs,
      minAtCap: storm.minAtCap,
      preCapSteps: preCapSteps(c.backoffBaseMs, c.backoffCapMs),
      maxAttempts: storm.maxAttempts,
    },
    ...stormFrames(plan),
    onTranscript: record,
    clock: ctx.clock,
  });
  ctx.defer(() => server.close());

  const started: StartedProcess[] = [];
  const running = new Set<StartedProcess>();
  const finished: Promise<unknown>[] = [];
  for (let k = 1; k <= storm.processes; k++) {
    const p = await startStormProcess(ctx, server, k);
    started.push(p);
    running.add(p);
    finished.push(ctx.processes.finish(p).finally(() => running.delete(p)));
  }

  const waitSettled = async (ms: number) => {
    const from = performance.now();
    while (!server.allSettled() && performance.now() - from < ms && running.size === storm.processes && !ctx.signal.aborted) await sleep(20);
  };
  await waitSettled(START_MS);
  for (let round = 1; round <= storm.rounds && running.size > 0 && !ctx.signal.aborted; round++) {
    await sleep(SETTLE_MS);
    ctx.log(`storm round ${round}: reset shutdown to ${storm.processes} processes`);
    server.beginRound();
    await waitSettled(storm.roundMaxMs + 3 * c.backoffCapMs);
  }
  await sleep(SETTLE_MS);

  for (const p of running) {
    ctx.journal.write({
      type: 'fault',
      action: 'apply',
      name: SIGTERM_FAULT.consumer,
      kind: 'signal',
      detail: `SIGTERM to consumer process ${p.incarnation} (pid ${p.proc.pid}): the storm is over; it must exit 0 within ${SIGTERM_EXIT_MS / 1000} s`,
      incarnation: p.incarnation,
    });
    p.proc.signal('SIGTERM'); // once to each process (processes/tree-signals.ts)
    const timer = setTimeout(() => void p.proc.kill('harness'), SIGTERM_KILL_MS);
    void p.proc.exited.then(() => clearTimeout(timer));
  }
  await Promise.all(finished);
}

/** Process k of the storm: its own proxy to its own listener, its own room and store, journaled as its stream. */
async function startStormProcess(ctx: RunContext<FeedPlan>, server: StormServer, k: number): Promise<StartedProcess> {
  const plan = ctx.scenario.lab;
  const proxy = await ctx.proxy(streamName(k), server.address(k));
  const room = ctx.room(`process-${k}`);
  const db = join(room, 'consumer.db');
  ctx.journal.write({ type: 'stream', role: 'consumer', stream: streamName(k), host: proxy.listen.host, port: proxy.listen.port, db });
  return ctx.processes.start('consumer', k, ctx.consumerCommand, consumerEnv(plan, proxy.listen.port, db, `${plan.consumer.clientId}-${k}`), room);
}
