#!/usr/bin/env node
// Server mutant "no-reset-on-stale": a cursor older than the retention window is answered with
// a replay of what is left above it instead of `reset stale-cursor`. The consumer gets the rows
// retention kept and believes it holds the whole history: a partial history served as complete.
//
// It breaks this sentence of the server contract (section 3): "a cursor older than the window:
// retention deleted a followed account's row above it … `reset stale-cursor`, then close. Never
// serve a partial history as if it were complete" — the seed's second scene (3 hours away, a
// 1-hour replay window). A cursor of another chain or an unknown hash is still reset.
//
// Killed by: feed-server-stale-cursor — a probe away longer than the window resubscribes with its
// old cursor; the wire check finds events where `reset stale-cursor` was due.
// Python twin: no-reset-on-stale.py.

import { parseCursor } from '../../../protocol/feed/cursor.js';
import { positionOf } from '../outbox/position.js';
import { planResume } from '../server/delivery.js';
import { runServer } from '../server/program.js';

await runServer({
  steps: {
    resume(reader, cursor, blockHash, topics) {
      const plan = planResume(reader, cursor, blockHash, topics);
      if (plan.kind !== 'stale') return plan;
      // BUG: retention deleted rows above the cursor; replay what is left as if nothing were missing
      // (from the last deleted position on, so catching up meets no deleted row either).
      return reader.read(() => {
        let from = positionOf(parseCursor(cursor));
        for (let pruned = reader.prunedAfter(from, topics); pruned; pruned = reader.prunedAfter(from, topics)) from = pruned.position;
        return { kind: 'replay', from, reorgSeen: reader.latestReorgId() };
      });
    },
  },
});
