#!/usr/bin/env node
// Server mutant "snapshot-then-subscribe": a null-cursor subscribe takes the snapshot first and
// only then starts following the outbox, from the head as it is then. The rows the snapshot's
// read saw above its cursor are sent, but rows committed between that read and the moment it
// starts following are never sent to that connection: lost, without a reset.
//
// It breaks this sentence of the server contract (section 3): "Nothing committed between the
// snapshot and going live may be lost: subscribe (start buffering), snapshot, release what is
// after the snapshot's cursor", and the seed's 「購読してからスナップショット」 — subscribe first,
// then take the snapshot (subscribe-buffer-snapshot-release).
//
// Without a fault the gap between the snapshot's read and following is a few microseconds, and
// a commit rarely lands in it: the run passes (a near miss).
// Killed by: feed-server-snapshot-race — the server stops itself after the first snapshot was
// read (CHAOSLAB_FAULT=stop@snapshot:1), the harness commits blocks meanwhile, and the probe's
// store misses their events.
// Python twin: snapshot-then-subscribe.py.

import type { OutboxRow } from '../outbox/schema.js';
import { positionAfterBlock } from '../outbox/position.js';
import { runServer } from '../server/program.js';

const PAGE = 1000;

await runServer({
  steps: {
    followFromSnapshot(reader, topics, plan) {
      return reader.read(() => {
        // What the snapshot's read saw above its cursor: the outbox up to the head then.
        const rows: OutboxRow[] = [];
        let after = plan.position;
        for (;;) {
          const page = reader.eventsAfter(after, topics, PAGE).filter((row) => row.block_number <= plan.head);
          rows.push(...page);
          if (page.length < PAGE) break;
          const last = page.at(-1)!;
          after = { block: last.block_number, logIndex: last.log_index };
        }
        const last = rows.at(-1);
        const held = last ? { block: last.block_number, logIndex: last.log_index } : plan.position;
        // BUG: subscribes only now, from the head as it is now: what came since the snapshot's read is skipped.
        const read = positionAfterBlock(reader.head().number);
        return { state: { read, held, reorgSeen: reader.latestReorgId() }, rows };
      });
    },
  },
});
