// The commit made while the server under test is stopped at its hook: when the outbox is locked
// against it (OutboxLocked, the server's doing), the run must end on it where it waits, and the
// watch's promise must never reject unawaited (that took a whole sealed worker down under load).
import t from 'tap';
import type { RunContext } from '../../../../../harness/lab-api/lab.js';
import { OutboxLocked } from '../../../../../harness/labs/feed/server/guard/outbox-lock.js';
import type { ServerProcess } from '../../../../../harness/labs/feed/server/process.js';
import { awaitStopCommitted, type ChainSide, commitWhileStopped } from '../../../../../harness/labs/feed/server/script.js';
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
