// The feed lab's server run (issue 31): the push server is the program under test, a real OS
// process. The harness owns the chain and its indexer, which writes the outbox in the run folder
// (the initial blocks first); the server reads only that outbox. Once the server listens, the
// reference consumer subscribes as its probe through a proxy of its own. A `stop@` hook of the
// server stops it; meanwhile the harness commits the script's first blocks, then lets it go on
// (script.ts). The harness's own clients, and its null-cursor subscribers (one every few ms while
// the script runs: the statistical snapshot race), come beside the probe. The rest of the script
// follows, then the probe's store is awaited until it holds the chain's end (and every
// subscriber has read that far); the probe, then the server, get SIGTERM (the server must exit 0).

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../../../base/free-port.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { expectedOf } from '../check/state.js';
import { chainAndOutbox } from '../run/publisher.js';
import { sigtermAtEnd } from '../run/terminate.js';
import { simulate } from '../scenario/chain-script.js';
import type { FeedPlan, ServerUnderTestPlan } from '../scenario/plan.js';
import { chainSnapshotAt } from './check.js';
import { awaitProbeConverged, awaitProbeSnapshot, probeName, probeStores, startProbe } from './probe.js';
import { awaitListening, LONE_SERVER, nameServer, serverEnv, startServer, terminateServer } from './process.js';
import { awaitStopCommitted, commitWhileStopped, playRest } from './script.js';
import { startClients } from './clients/run.js';
import { crowdPace, startCrowd } from './clients/crowds/crowd.js';
import { startSubscribers } from './clients/crowds/subscribers.js';
import { sampleServerMemory } from './memory.js';
import { OutboxReader } from '../../../../publisher/feed/outbox/reader.js';
import { LineRelay } from './wire/relay.js';
import { probeWireSink } from './wire/probe-wire.js';
import { runScene } from './scene/scene-run.js';
import { instanceTag } from './wire/names.js';
import { guardOutbox, untilOutboxLocked } from './guard/outbox-lock.js';

const HOST = '127.0.0.1';

export async function runServerScenario(ctx: RunContext<FeedPlan>, under: ServerUnderTestPlan): Promise<void> {
  await untilOutboxLocked(ctx, () => (under.scene ? runScene(ctx, under, under.scene) : runOneServer(ctx, under)));
}

async function runOneServer(ctx: RunContext<FeedPlan>, under: ServerUnderTestPlan): Promise<void> {
  const plan = ctx.scenario.lab;
  const outbox = join(ctx.runDir, 'outbox.db');
  const raw = chainAndOutbox(ctx, outbox);
  const side = { ...raw, indexer: guardOutbox(ctx, raw.indexer, outbox) };
  const port = await freePort(HOST);
  nameServer(ctx, 1);
  const server = startServer(ctx, serverEnv(plan, under, outbox, HOST, port));
  const stop = commitWhileStopped(ctx, server, side, under);
  if ((await awaitListening(ctx, server, HOST, port)) !== 'listening') {
    await Promise.all([server.finished, stop.watching]);
    stop.throwIfFailed();
    return;
  }
  const proxy = await ctx.proxy('probe', { host: HOST, port });
  // The probe's wire record: its relay, in front of its proxy.
  const reader = new OutboxReader(outbox);
  ctx.defer(() => reader.close());
  const relay = await LineRelay.start({ ...proxy.listen, tag: instanceTag(1) }, probeWireSink(ctx, 1, reader));
  ctx.defer(() => relay.close());
  const probe = startProbe(ctx, HOST, relay.port);
  const stopSampling = sampleServerMemory(ctx, server.started.proc.pid);
  ctx.defer(stopSampling);
  const sim = simulate(plan.chain, plan.topicIndexes);
  const expected = expectedOf(sim);
  const clients = await startClients(ctx, under, { host: HOST, port }, sim);
  const crowd = under.crowd === undefined ? undefined : await startCrowd(ctx, under.crowd, (await ctx.proxy('crowd', { host: HOST, port })).listen);
  await crowd?.ready(plan.time.startMs);
  const over = () => server.gone() || probe.gone();
  if (under.fault?.includes('stop@')) await awaitStopCommitted(ctx, stop, over);
  else await awaitProbeSnapshot(ctx, probe, over);
  // After the steady start: the storm's subscribers meet commits from the first.
  const subscribers = under.subscribers
    ? startSubscribers(ctx, (await ctx.proxy('subscribers', { host: HOST, port })).listen, under.subscribers, () => reader.read(() => reader.head().number))
    : undefined;
  await playRest(ctx, side, over, crowd && crowdPace(crowd, side.chain.chainId, plan.topics, under.maxLagP99Ms ?? plan.time.convergeMs));
  clients.sceneOver();
  await subscribers?.started;
  await Promise.all([
    awaitProbeConverged(ctx, probe, expected, (cursor) => chainSnapshotAt(sim, cursor), server.gone),
    clients.windUp(),
    crowd?.caughtUp(expected.events.at(-1)?.cursor, plan.time.convergeMs),
    subscribers?.caughtUp(expected.events.at(-1)?.cursor, performance.now() + plan.time.convergeMs),
  ]);
  crowd?.windUp();
  subscribers?.windUp();
  stopSampling();

  sigtermAtEnd(ctx, 'control', probe.started, !probe.gone(), probeName(1, true));
  await probe.finished;
  probeStores(ctx).keep();
  await terminateServer(ctx, server, LONE_SERVER);
  await stop.watching;
  stop.throwIfFailed();
}
