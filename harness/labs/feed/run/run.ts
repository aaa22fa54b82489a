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

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SimChain } from '../../../../publisher/feed/chain/chain.js';
import type { FeedStreamHooks } from '../../../../publisher/feed/server/connection.js';
import { OutboxIndexer } from '../../../../publisher/feed/outbox/indexer.js';
import { FeedPublisher } from '../../../../publisher/feed/server/server.js';
import type { TranscriptEntry } from '../../../../publisher/transcript.js';
import { rawTopLevelMember } from '../../../../protocol/feed/raw-json.js';
import { withBadEnvironment } from '../../../judge/environment-duty.js';
import type { FaultEngine } from '../../../faults/engine.js';
import type { Role } from '../../../record/journal.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { type StartedProcess, sleepUntilEnded, untilEnded } from '../../../processes/processes.js';
import { ChainScript, chainConfig, confirmationBlocks, simulate } from '../scenario/chain-script.js';
import { type ReadWhen, SIGTERM_EXIT_MS, SIGTERM_FAULT } from '../check/facts.js';
import type { FeedPlan } from '../scenario/plan.js';
import { LIMITS } from '../scenario/schema.js';
import { type FeedReadOptions, type FeedStoreSnapshot, feedRowBound, readFeedStore } from '../check/store-reader.js';
import { expectedOf, judgeStore, type SentSnapshot, viewOf } from '../check/state.js';

/** The harness kills a process that has not exited this long after SIGTERM (the contract asks for 2 s). */
const SIGTERM_KILL_MS = 4000;
const POLL_MS = 250;
/** Reads taken while the consumer runs wait at most this long for its lock (the harness's event loop waits with them). */
const MID_RUN_READ = { timeoutMs: 1000 };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Journals an independent read (`store-read.when` names this lab's own moments too: at-subscribe, converging). */
export function journalRead(
  ctx: Pick<RunContext<FeedPlan>, 'journal'>,
  role: Role,
  incarnation: number | undefined,
  when: ReadWhen,
  db: string,
  store: FeedStoreSnapshot,
): void {
  ctx.journal.write({ type: 'store-read', role, ...(incarnation === undefined ? {} : { incarnation }), when, db, store });
}

/** The snapshot in a sent line, if it is one (the publisher writes `op` first). */
function sentSnapshot(line: string): SentSnapshot | undefined {
  if (!line.startsWith('{"op":"snapshot"')) return undefined;
  try {
    const f = JSON.parse(line) as { cursor: string; blockHash: string; state: { balances: Record<string, string> } };
    return { cursor: f.cursor, blockHash: f.blockHash, balances: f.state.balances };
  } catch {
    return undefined;
  }
}

/** A heartbeat's id as written; only for a line that is JSON (the raw scanner needs one). */
function idOf(line: string): string | undefined {
  try {
    JSON.parse(line);
  } catch {
    return undefined;
  }
  return rawTopLevelMember(line.trimEnd(), 'id');
}

export async function runFeed(ctx: RunContext<FeedPlan>): Promise<void> {
  const { scenario, journal } = ctx;
  const plan = scenario.lab;
  const room = ctx.room('consumer');
  const dbs: Record<Role, string> = { consumer: join(room, 'consumer.db'), control: join(ctx.runDir, 'control.db') };
  const outboxPath = join(ctx.runDir, 'outbox.db');
  // The consumer's file is read only as the run's guard allows (a regular file of its own, within
  // bounds); the control's is the harness's own.
  const consumerRead: FeedReadOptions = { guard: ctx.consumerStore, maxRows: feedRowBound(plan.chain) };
  const readStoreOf = (role: Role, options: FeedReadOptions = {}): FeedStoreSnapshot =>
    readFeedStore(dbs[role], role === 'consumer' ? { ...options, ...consumerRead } : options);

  // The chain and its outbox: the same script the checker simulates.
  const chain = new SimChain(chainConfig(plan.chain));
  const script = new ChainScript(chain, plan.chain);
  const indexer = new OutboxIndexer(outboxPath, {
    chainId: chain.chainId,
    confirmations: chain.confirmations,
    genesis: chain.genesis,
    genesisBalances: chain.genesisBalances,
    ...(plan.chain.retentionMs === undefined ? {} : { retentionMs: plan.chain.retentionMs }),
  });
  ctx.defer(() => indexer.close());
  for (const change of script.mineInitial()) indexer.apply(change);

  let faults: FaultEngine | undefined;
  let current: StartedProcess | undefined;
  const owners = new Map<number, number>(); // consumer stream: connection -> process number
  const sent: Record<Role, SentSnapshot[]> = { consumer: [], control: [] };
  const firstSent = new Set<string>();
  let snapshots = 0;
  const readAtSubscribe = (role: Role, conn: number) => {
    const store = { ...readStoreOf(role, MID_RUN_READ), conn };
    journalRead(ctx, role, role === 'control' ? 1 : owners.get(conn), 'at-subscribe', dbs[role], store);
  };
  // The fault engine needs the proxy, which needs the consumer stream's port: the hooks bind late.
  const consumerHooks: FeedStreamHooks = {
    onSubscribe: async (conn, nth) => {
      readAtSubscribe('consumer', conn);
      await faults?.point('on_subscribe', nth);
    },
    afterSnapshot: () => faults?.point('on_snapshot', ++snapshots),
    beforeEvent: (_conn, cursor) => {
      if (firstSent.has(cursor)) return;
      firstSent.add(cursor);
      return faults?.point('before_event', firstSent.size);
    },
  };
  const controlHooks: FeedStreamHooks = { onSubscribe: (conn) => readAtSubscribe('control', conn) };
  const record = ctx.wire((entry) =>
    entry.stream === 'control' ? { role: 'control', incarnation: 1 } : current && { role: 'consumer', incarnation: current.incarnation },
  );
  // The server's pings on the consumer's stream and the pongs that came back (ids as written).
  const pings: { conn: number; id: string; t: number }[] = [];
  const pongs = new Set<string>();
  const onTranscript = (entry: TranscriptEntry) => {
    if (entry.kind === 'open' && entry.stream === 'consumer' && current) owners.set(entry.conn, current.incarnation);
    if (entry.stream === 'consumer' && (entry.kind === 'send' || (entry.kind === 'recv' && !entry.error))) {
      const heartbeat = /^\{\s*"op"\s*:\s*"(ping|pong)"/.exec(entry.line);
      const id = heartbeat && idOf(entry.line);
      if (heartbeat?.[1] === 'ping' && entry.kind === 'send' && id) pings.push({ conn: entry.conn, id, t: entry.t });
      if (heartbeat?.[1] === 'pong' && entry.kind === 'recv' && id) pongs.add(`${entry.conn}:${id}`);
    }
    if (entry.kind === 'send') {
      const snapshot = sentSnapshot(entry.line);
      if (snapshot) sent[entry.stream === 'control' ? 'control' : 'consumer'].push(snapshot);
      // Deliberate misbehaviour travels as a `note` on the line it sends; the publisher's words
      // also go in as a note of their own, which the reports draw as a mark (a resend shows).
      if (entry.note) record({ t: entry.t, stream: entry.stream, conn: entry.conn, kind: 'note', text: entry.note });
    }
    record(entry);
  };
  const server = { queueLimit: plan.server.queueLimit, pingMs: plan.server.pingMs, idleMs: plan.server.idleMs };
  const publisher = await FeedPublisher.start({
    outboxPath,
    streams: [
      // The control is the yardstick, never a slow reader: on a loaded machine a burst of blocks
      // could otherwise overflow its queue (small socket buffers make that quick) and reset it.
      { name: 'control', ...server, queueLimit: LIMITS.queueLimit.max, hooks: controlHooks },
      { name: 'consumer', ...server, hooks: consumerHooks, misbehaviour: plan.server.misbehaviour },
    ],
    clock: ctx.clock,
    onTranscript,
  });
  ctx.defer(() => publisher.close(500));
  const controlStream = publisher.stream('control');
  const consumerStream = publisher.stream('consumer');
  journal.write({ type: 'stream', role: 'control', stream: 'control', host: controlStream.host, port: controlStream.port, db: dbs.control });
  journal.write({ type: 'stream', role: 'consumer', stream: 'consumer', host: consumerStream.host, port: consumerStream.port, db: dbs.consumer });

  const proxy = await ctx.proxy('consumer', { host: consumerStream.host, port: consumerStream.port });
  const engine = ctx.faults({ proxy, current: () => current });
  faults = engine;

  // Every variable the contract requires; the control gets no fault and no apply delay.
  const c = plan.consumer;
  const env = (port: number, db: string, clientId: string): Record<string, string> => ({
    CHAOSLAB_HOST: '127.0.0.1',
    CHAOSLAB_PORT: String(port),
    CHAOSLAB_DB: db,
    CHAOSLAB_CLIENT_ID: clientId,
    CHAOSLAB_TOPICS: plan.topics.join(','),
    CHAOSLAB_PING_MS: String(c.pingMs),
    CHAOSLAB_IDLE_MS: String(c.idleMs),
    CHAOSLAB_BACKOFF_BASE_MS: String(c.backoffBaseMs),
    CHAOSLAB_BACKOFF_CAP_MS: String(c.backoffCapMs),
  });

  if (c.badEnvironment) {
    // One plain process that must exit 64 before connecting anything: no control, no script.
    const started = ctx.processes.start(
      'consumer',
      1,
      ctx.consumerCommand,
      withBadEnvironment(env(proxy.listen.port, dbs.consumer, c.clientId), c.badEnvironment),
      room,
    );
    current = started;
    await ctx.processes.finish(started);
    current = undefined;
    journalRead(ctx, 'consumer', 1, 'after-exit', dbs.consumer, readStoreOf('consumer', { writerGone: true }));
    await engine.stop();
    return;
  }

  const controlProc = ctx.processes.start('control', 1, ctx.controlCommand, env(controlStream.port, dbs.control, `${c.clientId}-control`));
  const controlExit = ctx.processes.exit(controlProc);
  let controlRunning = true;
  const controlDone = ctx.processes.finish(controlProc, controlExit).finally(() => {
    controlRunning = false;
  });

  // The consumer under test: restarted only after an unexpected exit, up to restart.max processes,
  // and never once the run has ended (ctx.signal), whatever the proxy does: this loop runs
  // detached from the script below, which may end the run by throwing while it waits here.
  let terminating = false;
  let consumersOver = false;
  const over = () => terminating || ctx.signal.aborted;
  const runConsumers = async () => {
    for (let n = 1; n <= c.restart.max && !over(); n++) {
      if (n > 1 && c.restart.delayMs > 0) await sleepUntilEnded(c.restart.delayMs, ctx.signal);
      if (over()) break;
      await untilEnded(ctx.signal, engine.incarnationStarting(n));
      if (over()) break;
      const fault = c.processes[n - 1]?.fault;
      const started = ctx.processes.start(
        'consumer',
        n,
        ctx.consumerCommand,
        {
          ...env(proxy.listen.port, dbs.consumer, c.clientId),
          ...(c.applyDelayMs > 0 ? { CHAOSLAB_APPLY_DELAY_MS: String(c.applyDelayMs) } : {}),
          ...(fault ? { CHAOSLAB_FAULT: fault } : {}),
        },
        room,
      );
      current = started;
      const exit = ctx.processes.exit(started);
      const watching = fault?.includes('stop@')
        ? ctx.processes.observeSelfStops(started, exit, () => journalRead(ctx, 'consumer', n, 'while-stopped', dbs.consumer, readStoreOf('consumer')))
        : Promise.resolve();
      await ctx.processes.finish(started, exit);
      await watching;
      current = undefined;
      if (over()) break;
      // An unexpected exit: read the file before anything else touches it, then start the next process.
      journalRead(ctx, 'consumer', n, 'after-exit', dbs.consumer, readStoreOf('consumer', { writerGone: true }));
      await untilEnded(ctx.signal, engine.incarnationExited(n));
    }
    consumersOver = true;
  };
  let loopError: unknown;
  const consumersDone = runConsumers().catch((error: unknown) => {
    loopError = error;
    consumersOver = true;
  });

  // The script starts once both consumers have subscribed (or start_ms has passed).
  const waitFrom = performance.now();
  while (
    (controlStream.stream.subscribeCount < 1 || consumerStream.stream.subscribeCount < 1) &&
    performance.now() - waitFrom < plan.time.startMs &&
    !consumersOver &&
    controlRunning &&
    !ctx.signal.aborted
  )
    await sleep(20);

  // The script in compressed virtual time: block k at t0 + k periods, a reorganisation half a period after its block.
  const period = plan.time.blockPeriodMs;
  const t0 = performance.now();
  let tick = 0;
  const until = async (k: number) => sleep(t0 + k * period - performance.now());
  for (let step = script.next(); step && !loopError; step = script.next()) {
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
  // Empty blocks until the script's last block is safe: the state every store must reach is final.
  for (const block of confirmationBlocks(chain, chain.head, plan.chain.confirmations)) {
    ctx.signal.throwIfAborted();
    tick++;
    await until(tick);
    indexer.apply({ kind: 'block', block });
    publisher.outboxChanged();
  }

  // Wait (reading through independent connections) until both stores hold the chain's end.
  const expected = expectedOf(simulate(plan.chain, plan.topicIndexes));
  const deadline = performance.now() + plan.time.convergeMs;
  const journaled: Record<Role, string | undefined> = { consumer: undefined, control: undefined };
  const roles: Role[] = ['consumer', 'control'];
  const firstShown: Record<Role, boolean> = { consumer: false, control: false };
  for (;;) {
    const reads = { consumer: readStoreOf('consumer', MID_RUN_READ), control: readStoreOf('control', MID_RUN_READ) };
    const done = roles.every((role) => judgeStore(role, viewOf(reads[role]), expected, sent[role]).problems.length === 0);
    // A store the harness refused to read decides the verdict alone: waiting cannot change it.
    const refused = reads.consumer.refused !== undefined;
    const last = done || refused || performance.now() >= deadline || loopError !== undefined || ctx.signal.aborted;
    // The first and the last read of the wait are journaled: the last one is what a "did not converge" finding shows.
    // A read that met a lock held longer than its wait (a commit's sync on a loaded disk) says
    // nothing about the store: the next poll reads again, and only the last read stands as it is.
    for (const role of roles) {
      const busy = reads[role].error?.includes('SQLITE_BUSY') ?? false;
      if (!last && (firstShown[role] || busy)) continue;
      firstShown[role] = true;
      const text = JSON.stringify(reads[role]);
      if (text === journaled[role]) continue;
      journaled[role] = text;
      journalRead(ctx, role, role === 'control' ? 1 : current?.incarnation, 'converging', dbs[role], reads[role]);
    }
    if (last) break;
    await sleep(POLL_MS);
  }

  // A quiet moment for the heartbeat (expect.quiet_ping): the feed is idle now, so the server
  // pings; wait until that ping is answered, or has waited as long as the checker allows (then it
  // is a finding). Only where asked: it costs every run seconds, and a consumer that never answers
  // must still be able to pass the happy path (a near miss), to be caught where pings are tested.
  const window = plan.server.idleMs + plan.time.latencyMs;
  const quietFrom = ctx.clock();
  const giveUp = quietFrom + plan.server.pingMs + window + 1000;
  for (;;) {
    if (!plan.expect.quietPing) break;
    const ping = pings.find((p) => p.t >= quietFrom);
    const settled = ping !== undefined && (pongs.has(`${ping.conn}:${ping.id}`) || ctx.clock() - ping.t >= window);
    if (settled || ctx.clock() >= giveUp || current === undefined || loopError !== undefined || ctx.signal.aborted) break;
    await sleep(50);
  }

  // SIGTERM to both: each must exit 0 within 2 s.
  terminating = true;
  const stop = (role: Role, started: StartedProcess | undefined, running: boolean) => {
    if (!started || !running) return;
    journal.write({
      type: 'fault',
      action: 'apply',
      name: SIGTERM_FAULT[role],
      kind: 'signal',
      detail: `SIGTERM to ${role === 'control' ? 'the control consumer' : `consumer incarnation ${started.incarnation}`} (pid ${started.proc.pid}): the script is over; it must exit 0 within ${SIGTERM_EXIT_MS / 1000} s`,
      ...(role === 'consumer' ? { incarnation: started.incarnation } : {}),
    });
    // Once to each process: a second SIGTERM would kill a consumer that restored the default
    // action after the first, as the references do on their way out (processes/tree-signals.ts).
    started.proc.signal('SIGTERM');
    started.proc.continue(); // a process stopped by its own hook only sees SIGTERM once continued
    const timer = setTimeout(() => void started.proc.kill('harness'), SIGTERM_KILL_MS);
    void started.proc.exited.then(() => clearTimeout(timer));
  };
  stop('consumer', current, current !== undefined);
  stop('control', controlProc, controlRunning);
  await Promise.all([consumersDone, controlDone]);
  await engine.stop();
  if (loopError !== undefined) throw loopError;
}
