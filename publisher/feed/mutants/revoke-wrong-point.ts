#!/usr/bin/env node
// Server mutant "revoke-wrong-point": a subscribe whose block hash was abandoned is answered with
// a revoke from the cursor's own block instead of the fork point, where the abandoned branch left
// the canonical chain. The abandoned rows between the fork point and the cursor's block stay in
// the consumer's store, and it replays the new branch only from its cursor's block.
//
// It breaks this line of the server contract (section 3): "a `blockHash` on an abandoned branch:
// `revoke` with `fromCursor` = position `0000` of the first block where that branch left the
// canonical chain; then every row from there on".
//
// Killed by: feed-server-reorg — a probe is away while the chain abandons blocks below its
// cursor's block; its resubscribe gets a revoke from the wrong point (the wire check names it).
// Python twin: revoke-wrong-point.py.

import { parseCursor } from '../../../protocol/feed/cursor.js';
import { positionBeforeBlock } from '../outbox/position.js';
import { planResume } from '../server/delivery.js';
import { runServer } from '../server/program.js';

await runServer({
  steps: {
    resume(reader, cursor, blockHash, topics) {
      const plan = planResume(reader, cursor, blockHash, topics);
      if (plan.kind !== 'replay' || plan.revokeFromBlock === undefined) return plan;
      // BUG: the revoke starts at the cursor's block, not at the fork point below it.
      const block = parseCursor(cursor).blockNumber;
      return { ...plan, revokeFromBlock: block, from: positionBeforeBlock(block) };
    },
  },
});
