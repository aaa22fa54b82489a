// The outbox's one writer in a server run, guarded. A server under test may read the outbox, and
// every reader can take shared fcntl locks on its `-shm` lock bytes: held on the write lock's
// byte, they keep the harness's indexer out until its busy timeout ends in SQLITE_BUSY. That is
// the server's doing, not the harness's failing: the guard names who held which lock (from
// /proc/locks), journals it as `outbox-locked`, and ends the script with `OutboxLocked`, which
// the run stops on; the checker makes it the verdict's first finding.

import type { ChainChange } from '../../../../../publisher/feed/chain/chain.js';
import type { RunContext } from '../../../../lab-api/lab.js';
import { lockHolders } from '../../../../sandbox/file-locks.js';
import type { FeedPlan } from '../../scenario/plan.js';

/** What a server run writes the outbox through. */
export interface OutboxWriter {
  apply(change: ChainChange): void;
}

export class OutboxLocked extends Error {
  override name = 'OutboxLocked';
}

const isBusy = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'SQLITE_BUSY';

/** `indexer` whose writes, when locked out, journal the lock holders other than the harness and throw `OutboxLocked`. */
export function guardOutbox(ctx: RunContext<FeedPlan>, indexer: OutboxWriter, outbox: string): OutboxWriter {
  return {
    apply(change) {
      try {
        indexer.apply(change);
      } catch (e) {
        if (!isBusy(e)) throw e;
        const holders = lockHolders([outbox, `${outbox}-wal`, `${outbox}-shm`]).filter((h) => h.pid !== process.pid);
        ctx.journal.write({ type: 'outbox-locked', message: (e as Error).message, holders });
        throw new OutboxLocked(`the outbox stayed locked against the harness's writer: ${(e as Error).message}`);
      }
    },
  };
}

/** Runs a server run's body; a locked outbox ends it early, every process killed, for the checker to judge. */
export async function untilOutboxLocked(ctx: RunContext<FeedPlan>, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    if (!(e instanceof OutboxLocked)) throw e;
    ctx.log(e.message);
    await ctx.processes.killAll();
  }
}
