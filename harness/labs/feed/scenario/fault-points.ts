// The trigger points the feed lab's run fires (harness/labs/feed/run/): a scenario's `faults`
// start and end on them, and the checker words a trigger never reached with them.

import type { FaultPointSpec } from '../../../scenario/fault-points.js';

export const FEED_FAULT_POINTS: Record<string, FaultPointSpec> = {
  before_block: {
    description: 'Just before block <n> of the script is mined (a block number of the script, mined one by one).',
    value: 'seq',
    canEnd: true,
    random: true,
    describe: (n) => `before block ${n}`,
  },
  before_event: {
    description: "Just before the n-th distinct event is first sent on the consumer under test's stream (1-based; resends and replays do not count).",
    value: 'ordinal',
    canEnd: true,
    describe: (n) => `before event #${n} is first sent`,
  },
  on_subscribe: {
    description: "When the n-th subscribe arrives on the consumer under test's stream (1-based), before it is answered.",
    value: 'ordinal',
    canEnd: true,
    describe: (n) => `subscribe #${n} arrived`,
  },
  on_snapshot: {
    description: "Just before the n-th snapshot is sent on the consumer under test's stream (1-based).",
    value: 'ordinal',
    canEnd: true,
    describe: (n) => `before snapshot #${n}`,
  },
  before_reorg: {
    description: "Just before the script's n-th reorganisation is written to the outbox (1-based, in the order they happen).",
    value: 'ordinal',
    canEnd: true,
    describe: (n) => `before reorganisation #${n}`,
  },
};
