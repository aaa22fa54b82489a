// The server's probe: the project's reference feed consumer (the lab's control command, trusted,
// never confined), on an empty store of the harness's own, subscribing through its own Toxiproxy
// proxy to the server under test. Started like the consumer run's control (its environment, its
// exit journaled), and waited on until its store holds the chain's end. Its store is written on
// a tmpfs while the run goes on and kept in the run folder once it is done (probeStores).

import { performance } from 'node:perf_hooks';
import type { RunContext } from '../../../lab-api/lab.js';
import type { StartedProcess } from '../../../processes/processes.js';
import type { Expected, SentSnapshot, StoreView } from '../check/state.js';
import type { RealEvent } from '../../../../publisher/feed/server/misbehaviour.js';
import { judgeStore, viewOf } from '../check/state.js';
import { readFeedStore } from '../check/store-reader.js';
import { consumerEnv } from '../run/consumers.js';
import { sleep } from '../run/state.js';
import { journalRead, MID_RUN_READ } from '../run/stores.js';
import type { FeedPlan } from '../scenario/plan.js';
import type { JournalEntry } from '../../../record/journal.js';
import { type ScratchStores, scratchStores } from '../../../sandbox/scratch-stores.js';

const POLL_MS = 250;
/** How long a store holds the chain's last event with something wrong before the wait for it ends. */
const SETTLED_WRONG_MS = 1000;
/** The probe's stream in the journal (its proxy's port, its store). */
export const PROBE_STREAM = 'probe';

export interface Probe {
  started: StartedProcess;
  /** Its store while the run goes on (a tmpfs's: harness/sandbox/scratch-stores.ts). */
  db: string;
  /** Where its store is kept once the run's probes are done (the run folder's), as the journal names it. */
  keptDb: string;
  finished: Promise<unknown>;
  gone: () => boolean;
}

const storesOfRun = new WeakMap<RunContext<FeedPlan>, ScratchStores>();

/**
 * The run's probe stores. Kept when the run ends however it ends; a run whose probes are done
 * keeps them at once (`keep()`), before its checks read them from the run folder.
 */
export function probeStores(ctx: RunContext<FeedPlan>): ScratchStores {
  let stores = storesOfRun.get(ctx);
  if (!stores) {
    const made = scratchStores(ctx.runDir, ctx.runId);
    ctx.defer(() => made.keep());
    storesOfRun.set(ctx, (stores = made));
  }
  return stores;
}

export function startProbe(ctx: RunContext<FeedPlan>, proxyHost: string, proxyPort: number): Probe {
  const plan = ctx.scenario.lab;
  const stores = probeStores(ctx);
  const db = stores.live('probe.db');
  const keptDb = stores.kept('probe.db');
  nameProbe(ctx, 1, true, PROBE_STREAM);
  ctx.journal.write({ type: 'stream', role: 'control', stream: PROBE_STREAM, host: proxyHost, port: proxyPort, db: keptDb });
  const started = ctx.processes.start('control', 1, ctx.controlCommand, consumerEnv(plan, proxyPort, db, `${plan.consumer.clientId}-probe`));
  let gone = false;
  const finished = ctx.processes.finish(started).finally(() => {
    gone = true;
  });
  return { started, db, keptDb, finished, gone: () => gone };
}

/**
 * Until the probe's store holds its snapshot (it is live), start_ms passes, or `over()`: the
 * script then begins from a steady start, as the consumer lab's does after the first subscribe.
 * Without it, block 11 came 250 ms after the probe was started, and on a busy machine a racy
 * server (snapshot-then-subscribe) lost it on the happy path, which every mutant must pass.
 */
export async function awaitProbeSnapshot(ctx: RunContext<FeedPlan>, probe: Probe, over: () => boolean): Promise<void> {
  const from = performance.now();
  const live = () => viewOf(readFeedStore(probe.db, MID_RUN_READ)).snapshotCursor !== null;
  while (!over() && !probe.gone() && !ctx.signal.aborted && performance.now() - from < ctx.scenario.lab.time.startMs && !live()) await sleep(50);
}

/**
 * Polls the probe's store (an independent read-only connection) until it holds the chain's end,
 * converge_ms passes, the probe or the server is gone, or the run ends; the last read is journaled.
 * A store that has held the chain's last event (its cursor and block hash) for a second with
 * something else wrong ends the wait too: the chain is final, so nothing a server may still send
 * can put it right, and a mutant's run waited out converge_ms for nothing (15 s a run).
 */
export async function awaitProbeConverged(
  ctx: RunContext<FeedPlan>,
  probe: Probe,
  expected: Expected,
  snapshotsFor: (cursor: string | null) => SentSnapshot[],
  serverGone: () => boolean,
): Promise<void> {
  const deadline = performance.now() + ctx.scenario.lab.time.convergeMs;
  const settled = settledStore(expected.events.at(-1));
  for (;;) {
    const store = readFeedStore(probe.db, MID_RUN_READ);
    const view = viewOf(store);
    const right = judgeStore('the probe', view, expected, snapshotsFor(view.snapshotCursor)).problems.length === 0;
    if (settled(view, right, performance.now()) || performance.now() >= deadline || probe.gone() || serverGone() || ctx.signal.aborted) {
      journalRead(ctx, 'control', probe.started.incarnation, 'converging', probe.keptDb, store);
      return;
    }
    await sleep(POLL_MS);
  }
}

/**
 * Fed each read of a probe's store (its view, whether it is right, when), says whether it is
 * settled: right, or holding the chain's last event (`last`: its cursor and block hash) with
 * something wrong for SETTLED_WRONG_MS.
 */
export function settledStore(last: RealEvent | undefined): (view: StoreView, right: boolean, now: number) => boolean {
  let wrongAtEndSince: number | undefined;
  return (view, right, now) => {
    if (right) return true;
    const atEnd = last !== undefined && view.cursor === last.cursor && view.blockHash === last.payload.blockHash;
    wrongAtEndSince = atEnd ? (wrongAtEndSince ?? now) : undefined;
    return wrongAtEndSince !== undefined && now - wrongAtEndSince >= SETTLED_WRONG_MS;
  };
}

/** Probe `n`'s name in the reports: "probe" alone, "probe <n>" in a scene. */
export const probeName = (n: number, lone: boolean): string => (lone ? 'probe' : `probe ${n}`);

/** Names probe `n` (process `n` of the control role, its connections on wire stream `stream`): a `party` entry. */
export function nameProbe(ctx: RunContext<FeedPlan>, n: number, lone: boolean, stream: string): void {
  const process = { role: 'control', incarnation: n } as const;
  ctx.journal.write({ type: 'party', id: `probe-${n}`, name: probeName(n, lone), side: 'client', about: 'the reference consumer', process, stream });
}

/** The probe (its process incarnation) whose store is `db`, as the run's stream and party entries say. */
export function probeOfStore(journal: readonly JournalEntry[], db: string): number | undefined {
  const stream = journal.find((e) => e.type === 'stream' && e.db === db);
  if (stream?.type !== 'stream') return undefined;
  const party = journal.find((e) => e.type === 'party' && e.stream === stream.stream && e.process?.role === 'control');
  return party?.type === 'party' ? party.process?.incarnation : undefined;
}
