// The feed lab's verdict on a finished run: the push server's checks (a lone server or a scene),
// the storm's, or the consumer's; each reads the stores through its own connection and journals
// what it read. Imported when a run starts, beside the run, never when scenarios are loaded.

import type { RunContext } from '../../lab-api/lab.js';
import type { Verdict } from '../../findings/verdict.js';
import { checkFeedRun } from './check/checker.js';
import { feedRowBound, readFeedStore } from './check/store-reader.js';
import { journalRead } from './run/stores.js';
import type { FeedPlan } from './scenario/load.js';
import { checkServerRun } from './server/check.js';
import { probeOfStore } from './server/probe.js';
import { checkSceneRun } from './server/scene/check-scene.js';
import { lockedOutboxFirst } from './server/server-problems.js';
import { checkStorm } from './storm/checker.js';

export function checkRun(ctx: RunContext<FeedPlan>): Verdict {
  const { lab } = ctx.scenario;
  if (lab.serverUnderTest)
    return lockedOutboxFirst(
      ctx.journal.entries,
      (lab.serverUnderTest.scene ? checkSceneRun : checkServerRun)({
        journal: ctx.journal.entries,
        plan: ctx.scenario,
        under: lab.serverUnderTest,
        read: (db) => {
          const store = readFeedStore(db, { writerGone: true });
          journalRead(ctx, 'control', probeOfStore(ctx.journal.entries, db), 'final', db, store);
          return store;
        },
      }),
    );
  if (lab.storm) return checkStorm(ctx.journal.entries, lab, lab.storm);
  return checkFeedRun({
    journal: ctx.journal.entries,
    plan: ctx.scenario,
    read: (role, db) => {
      const store =
        role === 'consumer'
          ? readFeedStore(db, { writerGone: true, guard: ctx.consumerStore, maxRows: feedRowBound(lab.chain) })
          : readFeedStore(db, { writerGone: true });
      journalRead(ctx, role, undefined, 'final', db, store);
      return store;
    },
  });
}
