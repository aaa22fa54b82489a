#!/usr/bin/env node
// Server mutant "state-in-memory": it serves a resume from what it has kept in memory since its
// own start, not from the outbox. A cursor from before it started resumes from the outbox's head
// as it was then: rows committed while no server ran (between a crash and the restart) are never
// sent to that consumer. Lost, without a reset.
//
// It breaks this sentence of the server contract (section 1): "It keeps no state that a restart
// could lose: a client resumes from its cursor alone, on this process, on a restarted one, or on
// another instance started on the same outbox".
//
// Without a restart (or a second instance) every cursor is from its own lifetime: it passes.
// Killed by: feed-server-restart — the server is killed, blocks are committed, it starts again;
// the probes' resumes skip those blocks (the wire check names the first row skipped).
// Python twin: state-in-memory.py.

import { OutboxReader } from '../outbox/reader.js';
import { comparePositions, positionAfterBlock } from '../outbox/position.js';
import { planResume } from '../server/delivery.js';
import { runServer } from '../server/program.js';

// What this process has "seen": the outbox from its head at start-up on.
const path = process.env.CHAOSLAB_OUTBOX_DB ?? '';
let memoryFrom: ReturnType<typeof positionAfterBlock> | undefined;
try {
  const reader = new OutboxReader(path);
  memoryFrom = positionAfterBlock(reader.read(() => reader.head().number));
  reader.close();
} catch {
  // runServer names the bad outbox and exits 64.
}

await runServer({
  steps: {
    resume(reader, cursor, blockHash, topics) {
      const plan = planResume(reader, cursor, blockHash, topics);
      if (plan.kind !== 'replay' || memoryFrom === undefined || comparePositions(plan.from, memoryFrom) >= 0) return plan;
      // BUG: nothing before its own start is in memory: replay starts at the head as it was then.
      return { ...plan, from: memoryFrom };
    },
  },
});
