#!/usr/bin/env node
// Server mutant "snapshot-then-subscribe": a null-cursor subscribe is answered the way a student
// who has not met the race writes it. Read the snapshot, send it and the rows that were behind it
// when it was read, wait until they are sent (handed to the kernel: `await` on the socket's write),
// and only then start following the outbox, from its head as it is by then. Rows committed after
// the snapshot's read and before that moment are never sent to that connection: lost, without a
// reset. The window is the real time the snapshot and its rows take to go out — longer when the
// client reads slowly, the socket buffers are small or the server is busy — not a sleep.
//
// It breaks this sentence of the server contract (section 3): "Nothing committed between the
// snapshot and going live may be lost: subscribe (start buffering), snapshot, release what is
// after the snapshot's cursor", and the seed's 「購読してからスナップショット」 — subscribe first,
// then take the snapshot (subscribe-buffer-snapshot-release).
//
// With one subscriber and a block now and then, a commit rarely lands in the window: the happy
// path passes (a near miss).
// Killed by: feed-server-snapshot-race — the server stops itself after the first snapshot was
// read (CHAOSLAB_FAULT=stop@snapshot:1), the harness commits blocks meanwhile, and the probe's
// store misses their events; and statistically by feed-server-snapshot-storm (a commit every
// 20 ms while 80 clients subscribe with cursor null: some client loses rows in nearly every run).
// Python twin: snapshot-then-subscribe.py.

import type { OutboxRow } from '../outbox/schema.js';
import { positionAfterBlock } from '../outbox/position.js';
import { runServer } from '../server/program.js';

const PAGE = 1000;

await runServer({
  steps: {
    async followFromSnapshot(reader, topics, plan, out) {
      // What the snapshot's read saw above its cursor: the outbox up to the head then.
      const rows = reader.read(() => {
        const behind: OutboxRow[] = [];
        let after = plan.position;
        for (;;) {
          const page = reader.eventsAfter(after, topics, PAGE).filter((row) => row.block_number <= plan.head);
          behind.push(...page);
          if (page.length < PAGE) break;
          const last = page.at(-1)!;
          after = { block: last.block_number, logIndex: last.log_index };
        }
        return behind;
      });
      out.send(rows);
      await out.written();
      const last = rows.at(-1);
      const held = last ? { block: last.block_number, logIndex: last.log_index } : plan.position;
      // BUG: subscribes only now, from the head as it is now: what came since the snapshot's read is skipped.
      return reader.read(() => ({ state: { read: positionAfterBlock(reader.head().number), held, reorgSeen: reader.latestReorgId() } }));
    },
  },
});
