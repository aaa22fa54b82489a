// The ledger lab's process model: the publisher serves one stream to the always-connected
// control consumer (directly) and one to the consumer under test (through Toxiproxy). The
// consumer runs to its exit; the harness is the only thing that reconnects, by starting the next
// incarnation on the same database. Its file is read through an independent connection after
// every exit and whenever it stops itself inside a transaction.

import { join } from 'node:path';
import { Publisher } from '../../../../publisher/ledger/server.js';
import type { StreamHooks } from '../../../../publisher/ledger/stream.js';
import type { FaultEngine } from '../../../faults/engine.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { type StartedProcess, sleepUntilEnded, untilEnded } from '../../../processes/processes.js';
import { stallError, watchLoopLag } from '../../../record/loop-lag.js';
import type { LedgerPlan } from '../scenario/load.js';
import { ledgerRowBound, loadStoreReaderSoon, readStore } from '../check/store-reader.js';
import { STOPPED_READ_TIMEOUT_MS } from '../../../judge/stopped-lock.js';

/** What the run's steps share: the consumer process running now, and the fault engine once the proxy exists. */
interface LedgerRunState {
  current?: StartedProcess;
  faults?: FaultEngine;
}

export async function runLedger(ctx: RunContext<LedgerPlan>): Promise<void> {
  const { scenario, journal } = ctx;
  const plan = scenario.lab;
  // Every incarnation of the consumer works in the same room, on the same database.
  const room = ctx.room('consumer');
  const dbs = { consumer: join(room, 'consumer.db'), control: join(ctx.runDir, 'control.db') };
  const state: LedgerRunState = {};
  // The harness's own stalls (load) while a consumer runs and waits on it: one as long as half
  // the consumer's timeout is a harness error (run/loop-lag.ts).
  const lag = watchLoopLag(50, () => state.current !== undefined);
  ctx.defer(() => lag.stop());
  const publisher = await startLedgerPublisher(ctx, state, dbs);
  const control = publisher.stream('control');
  const underTest = publisher.stream('consumer');
  const proxy = await ctx.proxy('consumer', { host: underTest.host, port: underTest.port });
  const faults = ctx.faults({ proxy, current: () => state.current });
  state.faults = faults;

  const env = (port: number, db: string) => ({
    CHAOSLAB_HOST: '127.0.0.1',
    CHAOSLAB_PORT: String(port),
    CHAOSLAB_DB: db,
    CHAOSLAB_TIMEOUT_MS: String(scenario.timeoutMs),
  });
  const controlProc = ctx.processes.start('control', 1, ctx.controlCommand, env(control.port, dbs.control));
  const controlDone = ctx.processes.finish(controlProc);

  // The listed incarnations always run; then, with a restart policy, plain restarts until the
  // publisher holds an ACK for every event (the harness is the only thing that reconnects), or
  // until it answered RESYNC: its log no longer holds what the consumer needs, so no restart can
  // complete the stream. Never once the run has ended (ctx.signal), whatever the proxy does.
  const restart = plan.consumer.restart;
  for (let n = 1; ; n++) {
    const listed = plan.consumer.incarnations[n - 1];
    if (!listed && (!restart || n > restart.max || underTest.stream.complete || underTest.stream.resynced)) break;
    if (n > 1 && restart?.delayMs) await sleepUntilEnded(restart.delayMs, ctx.signal);
    await untilEnded(ctx.signal, faults.incarnationStarting(n));
    ctx.signal.throwIfAborted();
    underTest.stream.tag = `incarnation ${n}`;
    const incarnationEnv = consumerEnv(
      { ...env(proxy.listen.port, dbs.consumer), ...(listed?.fault ? { CHAOSLAB_FAULT: listed.fault } : {}) },
      plan.consumer.badEnvironment,
    );
    await runIncarnation(ctx, state, { n, env: incarnationEnv, room, db: dbs.consumer, fault: listed?.fault }, () => lag.rebase());
    await untilEnded(ctx.signal, faults.incarnationExited(n));
  }
  await untilEnded(ctx.signal, faults.stop());
  await controlDone;
  const stalled = stallError(lag.maxMs(), scenario.timeoutMs);
  if (stalled) journal.write({ type: 'harness-error', message: stalled });
}

/** The publisher's two streams (the control's, and the consumer's with the lab's fault points), journaled. */
async function startLedgerPublisher(ctx: RunContext<LedgerPlan>, state: LedgerRunState, dbs: { consumer: string; control: string }): Promise<Publisher> {
  const plan = ctx.scenario.lab;
  let resumes = 0;
  // The fault engine needs the proxy, which needs this stream's port: the hooks bind late.
  const hooks: StreamHooks = {
    onResume: () => state.faults?.point('on_resume', ++resumes),
    beforeEvent: (_conn, seq) => state.faults?.point('before_event', seq),
    onAck: (_conn, seq) => state.faults?.point('on_ack', seq),
  };
  const publisher = await Publisher.start(
    [
      { name: 'control', events: plan.events },
      {
        name: 'consumer',
        events: plan.events,
        window: plan.publisher.window,
        retentionStart: plan.publisher.retentionStart,
        redeliverUnacked: plan.publisher.redeliverUnacked,
        ackDeadlineMs: plan.publisher.ackDeadlineMs,
        misbehaviour: plan.publisher.misbehaviour,
        retentionMoves: plan.publisher.retentionMoves,
        forgetAcked: plan.publisher.forgetAcked,
        hooks,
      },
    ],
    {
      clock: ctx.clock,
      // Each connection is journaled with the process that owns it: the control, or the consumer process running now.
      onTranscript: ctx.wire((entry) =>
        entry.stream === 'control' ? { role: 'control', incarnation: 1 } : state.current && { role: 'consumer', incarnation: state.current.incarnation },
      ),
    },
  );
  ctx.defer(() => publisher.close());
  for (const role of ['control', 'consumer'] as const) {
    const { host, port } = publisher.stream(role);
    ctx.journal.write({ type: 'stream', role, stream: role, host, port, db: dbs[role] });
  }
  return publisher;
}

/**
 * Consumer incarnation n, from start to exit. Its file is read through an independent connection
 * while it stops itself (`stop@`) and after it exits, before anything else touches the file.
 */
async function runIncarnation(
  ctx: RunContext<LedgerPlan>,
  state: LedgerRunState,
  run: { n: number; env: Record<string, string>; room: string; db: string; fault: string | undefined },
  afterStoppedRead: () => void,
): Promise<void> {
  const { n, db } = run;
  // The consumer's file, read only as the run's guard allows (a regular file of its own, within bounds).
  const readConsumer = (writerGone: boolean, timeoutMs?: number) =>
    readStore(db, { writerGone, timeoutMs, guard: ctx.consumerStore, maxRows: ledgerRowBound(ctx.scenario.lab.events.length) });
  const started = ctx.processes.start('consumer', n, ctx.consumerCommand, run.env, run.room);
  state.current = started;
  if (n === 1) loadStoreReaderSoon();
  const exit = ctx.processes.exit(started);
  if (run.fault?.includes('stop@')) {
    await ctx.processes.observeSelfStops(started, exit, () => {
      ctx.journal.write({
        type: 'store-read',
        role: 'consumer',
        incarnation: n,
        when: 'while-stopped',
        db,
        store: readConsumer(false, STOPPED_READ_TIMEOUT_MS),
      });
      afterStoppedRead();
    });
  }
  await ctx.processes.finish(started, exit);
  state.current = undefined;
  ctx.journal.write({ type: 'store-read', role: 'consumer', incarnation: n, when: 'after-exit', db, store: readConsumer(true) });
}

/** The consumer's environment, made bad on purpose when the scenario says so (`consumer.env`, `consumer.unset`). */
export function consumerEnv(env: Record<string, string>, bad: LedgerPlan['consumer']['badEnvironment']): Record<string, string> {
  if (!bad) return env;
  const out: Record<string, string> = { ...env, ...bad.set };
  for (const name of bad.unset) delete out[name];
  return out;
}
