// Mutant "stale-block-hash": subscribes with its durable cursor but with the block hash of its
// last snapshot (`snapshot_block_hash`) instead of the hash of the cursor's own block
// (`block_hash`): the two columns mixed up.
//
// It breaks this sentence of the contract (consumer/feed/CONTRACT.md, section 2): in
// `subscribe`, "cursor is your stored cursor and blockHash the stored hash of its block" — "The
// server compares your blockHash with its chain: if your block was abandoned by a
// reorganisation while you were away, it first sends a revoke from the fork point." With a hash
// from an older, confirmed block the server cannot see that the cursor's block was abandoned.
//
// Only the `subscription` step is replaced. feed-happy-path subscribes once, on a fresh store,
// with cursor null (and hash null): a near miss. Killed by: feed-reorg-while-away — after the
// cut it resubscribes from a block the reorganisation abandoned, with a hash that is not that
// block's (the checker: "subscribed from ... with block hash ..., but its store held block hash
// ... for that cursor"). The server cannot trace that hash to the cursor's block either, so it
// answers `reset stale-cursor` (server contract, section 3), and the mutant recovers only through
// a snapshot that empties the user's activity list: the wire shows the fault, not the store.
// Python twin: consumer/feed/mutants/stale-block-hash.py.
import { main, readState, subscription } from '../typescript/feed-client.js';

await main({
  subscription(s) {
    const sub = subscription(s);
    if (sub.cursor === null) return sub;
    return { cursor: sub.cursor, blockHash: readState(s.db).snapshotBlockHash }; // BUG: the snapshot's hash, not the cursor block's
  },
});
