// The commit made while the server under test is stopped at its hook: when the outbox is locked
// against it (OutboxLocked, the server's doing), the run must end on it where it waits, and the
// watch's promise must never reject unawaited (that took a whole sealed worker down under load).
// The rest of the script with a delivery gate (the fan-out's crowd): a late delivery holds the
// next block and shifts the rest, and after a miss the clock alone paces the script.
import t from 'tap';
import type { RunContext } from '../../../../../harness/lab-api/lab.js';
import { OutboxLocked } from '../../../../../harness/labs/feed/server/guard/outbox-lock.js';
import type { ServerProcess } from '../../../../../harness/labs/feed/server/process.js';
import { type AwaitDelivered, awaitStopCommitted, type ChainSide, commitWhileStopped, playRest } from '../../../../../harness/labs/feed/server/script.js';
import type { FeedPlan, ServerUnderTestPlan } from '../../../../../harness/labs/feed/scenario/plan.js';

/** A run context whose server "stops itself" once, at once, and whose journal is kept. */
function stoppedOnce() {
  const journal: unknown[] = [];
  let unhandled: unknown;
  const onUnhandled = (reason: unknown) => {
    unhandled = reason;
  };
  process.on('unhandledRejection', onUnhandled);
  const ctx = {
    scenario: { lab: { chain: { initialBlocks: 10 }, time: { startMs: 60_000 } } },
    journal: { write: (e: unknown) => journal.push(e) },
    log: () => {},
    signal: new AbortController().signal,
    processes: {
      observeSelfStops: async (_started: unknown, _exit: unknown, whileStopped: () => void) => {
        await new Promise((r) => setTimeout(r, 5));
        whileStopped();
      },
    },
  } as unknown as RunContext<FeedPlan>;
  const server = { started: { incarnation: 1 }, exit: new Promise(() => {}) } as unknown as ServerProcess;
  const under = { blocksWhileStopped: 3, fault: 'stop@snapshot:1' } as unknown as ServerUnderTestPlan;
  return { ctx, server, under, journal, unhandled: () => unhandled, dispose: () => process.off('unhandledRejection', onUnhandled) };
}

const lockedSide = (): ChainSide =>
  ({
    script: { next: () => ({ kind: 'block' }), perform: () => ({ kind: 'block', block: { number: 11, logs: [] } }) },
    indexer: {
      apply: () => {
        throw new OutboxLocked("the outbox stayed locked against the harness's writer: database is locked");
      },
    },
  }) as unknown as ChainSide;

t.test('a commit locked out while the server is stopped ends the run where it waits, and rejects nothing unawaited', async (t) => {
  const run = stoppedOnce();
  t.teardown(run.dispose);
  const stop = commitWhileStopped(run.ctx, run.server, lockedSide(), run.under);
  await t.rejects(
    awaitStopCommitted(run.ctx, stop, () => false),
    { name: 'OutboxLocked' },
    'the wait for the commit throws the lock',
  );
  await stop.watching; // resolves: the failure is kept, not rejected
  t.throws(() => stop.throwIfFailed(), { name: 'OutboxLocked' }, 'and the end of the run throws it again');
  t.notOk(stop.committed(), 'nothing counts as committed');
  await new Promise((r) => setImmediate(r));
  t.equal(run.unhandled(), undefined, 'no unhandled rejection');
});

t.test('a commit that succeeds while the server is stopped is journaled and the wait ends', async (t) => {
  const run = stoppedOnce();
  t.teardown(run.dispose);
  let mined = 0;
  const side = {
    script: { next: () => ({ kind: 'block' }), perform: () => ({ kind: 'block', block: { number: 11 + mined, logs: [{}] } }) },
    indexer: { apply: () => void mined++ },
  } as unknown as ChainSide;
  const stop = commitWhileStopped(run.ctx, run.server, side, run.under);
  await awaitStopCommitted(run.ctx, stop, () => false);
  t.ok(stop.committed());
  t.equal(mined, 3, 'the three blocks were committed');
  t.doesNotThrow(() => stop.throwIfFailed());
  t.match(run.journal, [{ type: 'outbox-commit' }, { type: 'outbox-commit' }, { type: 'outbox-commit' }, { type: 'fault', name: 'commit-while-stopped' }]);
});

t.test('playRest with a delivery gate: a block waits for the one before it, the rest shifts, a miss ends the wait', async (t) => {
  const period = 50;
  const logs: string[] = [];
  const ctx = {
    scenario: { lab: { chain: { confirmations: 0 }, time: { blockPeriodMs: period } } },
    journal: { write: () => {} },
    log: (line: string) => logs.push(line),
    signal: new AbortController().signal,
  } as unknown as RunContext<FeedPlan>;
  const committedAt: number[] = [];
  let left = 5;
  const side = {
    chain: { head: { number: 15 } },
    script: { next: () => (left-- > 0 ? { kind: 'block' } : undefined), perform: () => ({ kind: 'block', block: { number: 16 - left, logs: [] } }) },
    indexer: { apply: () => committedAt.push(performance.now()) },
  } as unknown as ChainSide;
  // The first block takes 200 ms to reach the clients, the second 1 ms; the third never does (60 ms bound).
  const gateMs = [200, 1, 60];
  const gated: number[] = [];
  const gateOver: number[] = [];
  const delivered: AwaitDelivered = async () => {
    const ms = gateMs[gated.length]!;
    gated.push(ms);
    await new Promise((r) => setTimeout(r, ms));
    gateOver.push(performance.now());
    return gated.length < 3;
  };
  await playRest(ctx, side, () => false, delivered);
  t.equal(committedAt.length, 5, 'every block committed');
  t.same(gated, gateMs, 'the gate held the first three blocks, and none after the miss');
  // Lower bounds only, with half a period to spare: a timer fires late on a loaded machine, and a
  // millisecond or two early anywhere (Node counts whole milliseconds; CI once saw 18.7 of 20).
  const waited = committedAt[1]! - committedAt[0]!;
  t.ok(waited >= gateMs[0]! - period / 2, `the second block waited for the first to be delivered (${waited.toFixed(0)} ms, without the gate ${period})`);
  // The schedule restarts where the late delivery ended: the third block comes a period after
  // it, not at once (a schedule that is not shifted has it due 150 ms after the start, long past).
  const after = committedAt[2]! - gateOver[0]!;
  t.ok(after >= period / 2, `the third block kept its period after the late delivery instead of catching up at once (${after.toFixed(0)} ms)`);
  t.match(logs, [/did not reach every client within the lag bound/], 'the miss is said once');
});
