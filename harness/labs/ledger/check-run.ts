// The ledger lab's verdict on a finished run: its checker, reading each store through its own
// connection (the consumer's bounded by the scenario's events) and journaling what it read.
// Imported when a run starts, beside the run, never when scenarios are loaded.

import type { RunContext } from '../../lab-api/lab.js';
import type { Verdict } from '../../findings/verdict.js';
import { checkLedgerRun } from './check/checker.js';
import { ledgerRowBound, readStore } from './check/store-reader.js';
import type { LedgerPlan } from './scenario/load.js';

export function checkRun(ctx: RunContext<LedgerPlan>): Verdict {
  return checkLedgerRun(ctx.journal.entries, ctx.scenario, (role, db) => {
    const store =
      role === 'consumer'
        ? readStore(db, { writerGone: true, guard: ctx.consumerStore, maxRows: ledgerRowBound(ctx.scenario.lab.events.length) })
        : readStore(db, { writerGone: true });
    ctx.journal.write({ type: 'store-read', role, when: 'final', db, store });
    return store;
  });
}
