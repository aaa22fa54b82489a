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
import { ledgerRowBound, readStore } from '../check/store-reader.js';

export async function runLedger(ctx: RunContext<LedgerPlan>): Promise<void> {
  const { scenario, journal } = ctx;
  const plan = scenario.lab;
  // Every incarnation of the consumer works in the same room, on the same database.
  const room = ctx.room('consumer');
  const dbs = { consumer: join(room, 'consumer.db'), control: join(ctx.runDir, 'control.db') };
  let faults: FaultEngine | undefined;
  let current: StartedProcess | undefined;
  let resumes = 0;
  // The harness's own stalls (load) while a consumer runs and waits on it: one as long as half
  // the consumer's timeout is a harness error (run/loop-lag.ts).
  const lag = watchLoopLag(50, () => current !== undefined);
  ctx.defer(() => lag.stop());
  // The fault engine needs the proxy, which needs this stream's port: the hooks bind late.
  const hooks: StreamHooks = {
    onResume: () => faults?.point('on_resume', ++resumes),
    beforeEvent: (_conn, seq) => faults?.point('before_event', seq),
    onAck: (_conn, seq) => faults?.point('on_ack', seq),
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
        entry.stream === 'control' ? { role: 'control', incarnation: 1 } : current && { role: 'consumer', incarnation: current.incarnation },
      ),
    },
  );
  ctx.defer(() => publisher.close());
  const control = publisher.stream('control');
  const underTest = publisher.stream('consumer');
  journal.write({ type: 'stream', role: 'control', stream: 'control', host: control.host, port: control.port, db: dbs.control });
  journal.write({ type: 'stream', role: 'consumer', stream: 'consumer', host: underTest.host, port: underTest.port, db: dbs.consumer });

  // The consumer's file, read only as the run's guard allows (a regular file of its own, within bounds).
  const readConsumer = (writerGone: boolean) => readStore(dbs.consumer, { writerGone, guard: ctx.consumerStore, maxRows: ledgerRowBound(plan.events.length) });

  const proxy = await ctx.proxy('consumer', { host: underTest.host, port: underTest.port });
  faults = ctx.faults({ proxy, current: () => current });

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
    const started = ctx.processes.start(
      'consumer',
      n,
      ctx.consumerCommand,
      consumerEnv(
        {
          ...env(proxy.listen.port, dbs.consumer),
          ...(listed?.fault ? { CHAOSLAB_FAULT: listed.fault } : {}),
        },
        plan.consumer.badEnvironment,
      ),
      room,
    );
    current = started;
    const exit = ctx.processes.exit(started);
    if (listed?.fault?.includes('stop@')) {
      await ctx.processes.observeSelfStops(started, exit, () => {
        journal.write({ type: 'store-read', role: 'consumer', incarnation: n, when: 'while-stopped', db: dbs.consumer, store: readConsumer(false) });
        lag.rebase();
      });
    }
    await ctx.processes.finish(started, exit);
    current = undefined;
    // Read through an independent connection before anything else touches the file.
    journal.write({
      type: 'store-read',
      role: 'consumer',
      incarnation: n,
      when: 'after-exit',
      db: dbs.consumer,
      store: readConsumer(true),
    });
    await untilEnded(ctx.signal, faults.incarnationExited(n));
  }
  await untilEnded(ctx.signal, faults.stop());
  await controlDone;
  const stalled = stallError(lag.maxMs(), scenario.timeoutMs);
  if (stalled) journal.write({ type: 'harness-error', message: stalled });
}

/** The consumer's environment, made bad on purpose when the scenario says so (`consumer.env`, `consumer.unset`). */
export function consumerEnv(env: Record<string, string>, bad: LedgerPlan['consumer']['badEnvironment']): Record<string, string> {
  if (!bad) return env;
  const out: Record<string, string> = { ...env, ...bad.set };
  for (const name of bad.unset) delete out[name];
  return out;
}
