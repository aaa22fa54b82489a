// A server scene's run (scene.ts): the instances started on the one outbox, each on a port of its
// own; each probe (the reference consumer) behind its line relay (relay.ts, its wire record in
// probe-wire.ts) and a proxy per instance it is led to. Once every probe holds a snapshot, the
// script plays in compressed time and each step is taken just before its block; then the
// confirmation blocks, every probe's store awaited until it holds the chain's end, SIGTERM to
// the probes, then to every instance still running (each must exit 0 within 2 s). An instance
// that exits with nothing asking it to ends the script there: that is the run's finding.

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { OutboxReader } from '../../../../../publisher/feed/outbox/reader.js';
import { freePort } from '../../../../base/free-port.js';
import type { RunContext } from '../../../../lab-api/lab.js';
import type { ProxyHandle } from '../../../../toxiproxy/adapter.js';
import { expectedOf, viewOf } from '../../check/state.js';
import { readFeedStore } from '../../check/store-reader.js';
import { consumerEnv } from '../../run/consumers.js';
import { chainAndOutbox } from '../../run/publisher.js';
import { guardOutbox } from '../guard/outbox-lock.js';
import { sleep } from '../../run/state.js';
import { MID_RUN_READ } from '../../run/stores.js';
import { sigtermAtEnd } from '../../run/terminate.js';
import { confirmationBlocks, simulate } from '../../scenario/chain-script.js';
import type { FeedPlan, SceneAction, ScenePlan, SceneStep, ServerUnderTestPlan } from '../../scenario/plan.js';
import { chainSnapshotAt } from '../check.js';
import { awaitProbeConverged, nameProbe, type Probe, probeName, probeStores } from '../probe.js';
import { seedOtherChainStore } from './probe-store.js';
import { probeDone, probeStream, probeWireSink } from '../wire/probe-wire.js';
import { awaitListening, nameServer, SERVER_SIGTERM_EXIT_MS, type ServerProcess, serverEnv } from '../process.js';
import { sealServerProcess } from '../guard/seal.js';
import { LineRelay } from '../wire/relay.js';
import { type ChainSide, commitChange } from '../script.js';
import { instanceSignal, instanceTag } from '../wire/names.js';
import type { ProcessRef } from '../../../../findings/verdict.js';
import { startClients } from '../clients/run.js';

const HOST = '127.0.0.1';
const SIGTERM_KILL_MS = 4000;

interface Instance {
  n: number;
  port: number;
  server?: ServerProcess;
  /** The harness signalled its current process to end (a kill or SIGTERM step, or the run's end). */
  asked?: boolean;
}

interface SceneProbe {
  n: number;
  instance: number;
  relay: LineRelay;
  proxies: Map<number, ProxyHandle>;
  probe: Probe;
  /** A probe whose store is of another chain: it can never converge (its run's chain id is its cursor's), so it ends once its first connection was answered. */
  oneShot: boolean;
}

class Scene {
  private incarnations = 0;
  /** An instance did not come up: the script stops. */
  broken = false;

  /**
   * An instance's process ended with nothing asking it to: a finding whatever follows
   * (instances.ts, server-exited-early), so the script stops and the run goes on to its verdict,
   * as a lone server's run does once its server is gone. Waiting out converge_ms for the probes
   * it left changed no verdict and cost each such run 10-15 s (chaos --server shrinks on them).
   */
  exitedUnasked(): boolean {
    return this.instances.some((i) => i.server?.gone() === true && !i.asked);
  }

  /** Whether the script stops: an instance did not come up, or one exited unasked. */
  over(): boolean {
    return this.broken || this.exitedUnasked();
  }

  constructor(
    readonly ctx: RunContext<FeedPlan>,
    readonly under: ServerUnderTestPlan,
    readonly outbox: string,
    readonly instances: Instance[],
    readonly probes: SceneProbe[] = [],
  ) {}

  /** A fault of the scene, on the process it concerns (`to`), if one. */
  private fault(name: string, detail: string, to?: ProcessRef, kind: 'signal' | 'proxy-down' = 'signal', action: 'apply' | 'lift' = 'apply'): void {
    this.ctx.journal.write({ type: 'fault', action, name, kind, detail, ...(to ?? {}) });
    this.ctx.log(detail);
  }

  /** Starts instance `n` (a new process on its port) and waits until it listens. */
  async start(n: number): Promise<void> {
    const { ctx } = this;
    const inst = this.instances[n - 1]!;
    const env = serverEnv(ctx.scenario.lab, this.under, this.outbox, HOST, inst.port);
    // Sealed as a lone server is (process.ts): every instance answers on its own port only, in the server's one room.
    nameServer(ctx, ++this.incarnations, n);
    const started = ctx.processes.start('server', this.incarnations, ctx.serverCommand!, env, sealServerProcess(ctx, env));
    const exit = ctx.processes.exit(started);
    inst.asked = false;
    let gone = false;
    const finished = ctx.processes.finish(started, exit).finally(() => {
      gone = true;
    });
    inst.server = { started, exit, finished, gone: () => gone };
    if ((await awaitListening(ctx, inst.server, HOST, inst.port)) !== 'listening') this.broken = true;
  }

  /** SIGKILL (`kill`) or SIGTERM (`sigterm`, `end`) to instance `n`, and its exit awaited. */
  async stop(n: number, how: 'kill' | 'sigterm' | 'end'): Promise<void> {
    const server = this.instances[n - 1]?.server;
    if (!server || server.gone()) return;
    const { proc } = server.started;
    const words =
      how === 'kill'
        ? 'SIGKILL: a crash, mid-stream'
        : `SIGTERM${how === 'end' ? ' (the run is over)' : ''}: it must send reset shutdown to every connection, close and exit 0 within ${SERVER_SIGTERM_EXIT_MS / 1000} s`;
    this.fault(instanceSignal(how, n), `${words}, to server instance ${n} (pid ${proc.pid})`, { role: 'server', incarnation: server.started.incarnation });
    this.instances[n - 1]!.asked = true;
    if (how === 'kill') proc.signal('SIGKILL');
    else {
      proc.signal('SIGTERM');
      proc.continue();
      const timer = setTimeout(() => void proc.kill('harness'), SIGTERM_KILL_MS);
      void proc.exited.then(() => clearTimeout(timer));
    }
    await server.finished;
  }

  async proxyFor(p: Pick<SceneProbe, 'n' | 'proxies'>, instance: number): Promise<ProxyHandle> {
    let proxy = p.proxies.get(instance);
    if (!proxy) {
      proxy = await this.ctx.proxy(`probe-${p.n}-to-${instance}`, { host: HOST, port: this.instances[instance - 1]!.port });
      p.proxies.set(instance, proxy);
    }
    return proxy;
  }

  /** SIGSTOP (`stop`) or SIGCONT (`cont`) to instance `n`: hung with its connections open, then going on. */
  hang(n: number, how: 'stop' | 'cont'): void {
    const server = this.instances[n - 1]?.server;
    if (!server || server.gone()) return;
    const { proc } = server.started;
    const words = how === 'stop' ? 'SIGSTOP: it hangs, its connections open,' : 'SIGCONT: it goes on,';
    this.fault(
      `${how}-instance-${n}`,
      `${words} server instance ${n} (pid ${proc.pid})`,
      { role: 'server', incarnation: server.started.incarnation },
      'signal',
      how === 'stop' ? 'apply' : 'lift',
    );
    proc.signal(how === 'stop' ? 'SIGSTOP' : 'SIGCONT');
  }

  async take(action: SceneAction): Promise<void> {
    if (action.kind === 'stop' || action.kind === 'cont') return this.hang(action.instance, action.kind);
    if (!('probe' in action)) return action.kind === 'start' ? this.start(action.instance) : this.stop(action.instance, action.kind);
    const p = this.probes[action.probe - 1]!;
    if (action.kind === 'repoint') {
      const proxy = await this.proxyFor(p, action.to);
      p.relay.repoint({ ...proxy.listen, tag: instanceTag(action.to) });
      p.instance = action.to;
      this.fault(`repoint-probe-${p.n}`, `probe ${p.n}'s next connections go to server instance ${action.to} (its relay leads them to that instance's proxy)`, {
        role: 'control',
        incarnation: p.n,
      });
      return;
    }
    const proxy = await this.proxyFor(p, p.instance);
    const away = action.kind === 'away';
    await proxy.setEnabled(!away);
    this.fault(`away-probe-${p.n}`, `probe ${p.n}'s proxy ${away ? 'down: it is cut off' : 'up again'}`, undefined, 'proxy-down', away ? 'apply' : 'lift');
  }
}

/** Probe `n`: its store (prepared as the scene says), its relay, its process. */
async function startSceneProbe(scene: Scene, n: number, spec: ScenePlan['probes'][number], reader: OutboxReader): Promise<SceneProbe> {
  const { ctx } = scene;
  const plan = ctx.scenario.lab;
  const name = n === 1 ? 'probe.db' : `probe-${n}.db`;
  const stores = probeStores(ctx);
  const db = stores.live(name);
  const keptDb = stores.kept(name);
  if (spec.store === 'other-chain') seedOtherChainStore(db, reader.chainId);
  const proxies = new Map<number, ProxyHandle>();
  const proxy = await scene.proxyFor({ n, proxies }, spec.instance);
  const oneShot = spec.store === 'other-chain';
  let firstClosed = () => {};
  const relay = await LineRelay.start(
    { ...proxy.listen, tag: instanceTag(spec.instance) },
    probeWireSink(ctx, n, reader, (conn) => conn === 1 && firstClosed()),
  );
  ctx.defer(() => relay.close());
  nameProbe(ctx, n, false, probeStream(n));
  ctx.journal.write({ type: 'stream', role: 'control', stream: probeStream(n), host: HOST, port: relay.port, db: keptDb });
  const started = ctx.processes.start('control', n, ctx.controlCommand, consumerEnv(plan, relay.port, db, `${plan.consumer.clientId}-probe-${n}`));
  let gone = false;
  const finished = ctx.processes.finish(started).finally(() => {
    gone = true;
  });
  if (oneShot)
    firstClosed = () => {
      if (gone) return;
      ctx.journal.write({
        type: 'fault',
        action: 'apply',
        name: probeDone(n),
        kind: 'signal',
        role: 'control',
        incarnation: n,
        detail: `SIGTERM to probe ${n} (pid ${started.proc.pid}): its subscribe with another chain's cursor was answered; it cannot follow this chain`,
      });
      started.proc.signal('SIGTERM');
    };
  return { n, instance: spec.instance, relay, proxies, probe: { started, db, keptDb, finished, gone: () => gone }, oneShot };
}

/**
 * Until every probe holds a snapshot of this chain, start_ms passes, or one is gone. Not cut short
 * when an instance exits unasked: the probes get SIGTERM at the end, and one signalled while it
 * is still starting (before its handler is in place) dies of it, a harness error that would hide
 * the server's finding.
 */
async function awaitSnapshots(ctx: RunContext<FeedPlan>, probes: readonly SceneProbe[], chainId: number): Promise<void> {
  const from = performance.now();
  const has = (p: SceneProbe) => p.oneShot || viewOf(readFeedStore(p.probe.db, MID_RUN_READ)).snapshotCursor?.startsWith(`${chainId}:`) === true;
  while (!ctx.signal.aborted && performance.now() - from < ctx.scenario.lab.time.startMs && probes.some((p) => !p.probe.gone() && !has(p))) await sleep(50);
}

/** The script in compressed time, each step taken just before its block (the schedule resumes after it), then the confirmation blocks. */
async function playScene(scene: Scene, side: ChainSide, steps: readonly SceneStep[]): Promise<void> {
  const { ctx } = scene;
  const period = ctx.scenario.lab.time.blockPeriodMs;
  let t0 = performance.now();
  let tick = 0;
  let next = 0;
  for (let step = side.script.next(); step && !scene.over(); step = side.script.next()) {
    ctx.signal.throwIfAborted();
    if (step.kind === 'block') {
      tick++;
      await sleep(t0 + tick * period - performance.now());
      const took = performance.now();
      for (; steps[next] && steps[next]!.beforeBlock <= side.chain.head.number + 1; next++) await scene.take(steps[next]!.action);
      t0 += performance.now() - took;
    } else await sleep(t0 + (tick + 0.5) * period - performance.now());
    commitChange(ctx, side.indexer, side.script.perform(step));
  }
  for (const block of confirmationBlocks(side.chain, side.chain.head, ctx.scenario.lab.chain.confirmations)) {
    if (scene.over()) return;
    ctx.signal.throwIfAborted();
    tick++;
    await sleep(t0 + tick * period - performance.now());
    commitChange(ctx, side.indexer, { kind: 'block', block });
  }
}

export async function runScene(ctx: RunContext<FeedPlan>, under: ServerUnderTestPlan, plan: ScenePlan): Promise<void> {
  const lab = ctx.scenario.lab;
  const outbox = join(ctx.runDir, 'outbox.db');
  // Newest first: insertion order then differs from cursor order after a reorganisation.
  const raw = chainAndOutbox(ctx, outbox, { newestFirstAfterReorg: true });
  const side = { ...raw, indexer: guardOutbox(ctx, raw.indexer, outbox) };
  const reader = new OutboxReader(outbox);
  ctx.defer(() => reader.close());
  const instances: Instance[] = [];
  for (let n = 1; n <= plan.instances; n++) instances.push({ n, port: await freePort(HOST) });
  const scene = new Scene(ctx, under, outbox, instances);
  for (const inst of instances) if (!scene.broken) await scene.start(inst.n);
  if (!scene.broken) {
    for (const [i, spec] of plan.probes.entries()) scene.probes.push(await startSceneProbe(scene, i + 1, spec, reader));
    await awaitSnapshots(ctx, scene.probes, reader.chainId);
    const sim = simulate(lab.chain, lab.topicIndexes);
    // The harness's own clients, each with its instance for the whole run (no step moves them).
    const clients = await Promise.all(
      instances.map((inst) =>
        startClients(ctx, { ...under, clients: under.clients.filter((c) => c.instance === inst.n) }, { host: HOST, port: inst.port }, sim),
      ),
    );
    await playScene(scene, side, plan.steps);
    for (const c of clients) c.sceneOver();
    const expected = expectedOf(sim);
    const anyServer = () => instances.some((i) => i.server && !i.server.gone());
    // Side by side, each with converge_ms from now: one after the other, a probe that never
    // converges (a mutant's) cost converge_ms once per probe (feed-server-reorg's insertion-order
    // mutant: 37 s, its script 7 s).
    const converged = Promise.all(
      scene.probes
        .filter((q) => !q.oneShot)
        .map((p) =>
          awaitProbeConverged(
            ctx,
            p.probe,
            expected,
            (cursor) => chainSnapshotAt(sim, cursor),
            () => !anyServer() || scene.exitedUnasked(),
          ),
        ),
    );
    await Promise.all([converged, ...clients.map((c) => c.windUp())]);
  }
  for (const p of scene.probes) sigtermAtEnd(ctx, 'control', p.probe.started, !p.probe.gone(), probeName(p.n, false));
  await Promise.all(scene.probes.map((p) => p.probe.finished));
  probeStores(ctx).keep();
  for (const inst of instances) await scene.stop(inst.n, 'end');
}
