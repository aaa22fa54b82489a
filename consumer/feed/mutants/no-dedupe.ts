// Mutant "no-dedupe": every event is applied as new, resends included: its row is written again
// (INSERT OR REPLACE, so the primary key does not stop it), its amounts are added to the
// balances again and the cursor is set to it.
//
// It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt, T18, 実践):
//   「重複が届いた場合、除去が機能したか？」 — "When duplicates arrive, did removing them work?"
// and the contract (consumer/feed/CONTRACT.md, section 4): an event whose cursor is at or below
// the stored one is a duplicate: "change nothing (whatever its content)". Delivery is at least
// once (section 2).
//
// Only `applyEventInTransaction` is replaced. feed-happy-path never resends (one connection,
// events released strictly after the snapshot's cursor): a near miss. Killed by:
// feed-resend-after-reconnect — after the reconnect the server resends an event this consumer
// already holds; its transfer is counted twice (the checker: "off by exactly the effect of
// ...: applied twice?").
// Python twin: consumer/feed/mutants/no-dedupe.py.
import { main } from '../typescript/feed-client.js';

await main({
  async applyEventInTransaction(s, ev) {
    const { db } = s;
    // BUG: no "cursor <= stored cursor" check: a resend is applied like a new event.
    const n = ++s.counters.apply;
    db.prepare('INSERT OR REPLACE INTO feed_events (cursor, type, payload) VALUES (?, ?, ?)').run(ev.cursor, ev.type, ev.payloadText);
    if (ev.transfer) {
      for (const [account, delta] of s.steps.balanceEffect(s, ev.transfer)) {
        const row = db.prepare('SELECT amount FROM feed_balances WHERE account = ?').get(account) as { amount: string } | undefined;
        const amount = (row === undefined ? 0n : BigInt(row.amount)) + delta;
        db.prepare('INSERT OR REPLACE INTO feed_balances (account, amount) VALUES (?, ?)').run(account, amount.toString());
      }
    }
    db.prepare('UPDATE feed_state SET cursor = ?, block_hash = ? WHERE id = 1').run(ev.cursor, ev.blockHash);
    if (s.config.applyDelayMs > 0) await s.pause(s.config.applyDelayMs);
    s.fault('apply', n);
    db.exec('COMMIT');
    s.fault('commit', n);
    return 'applied';
  },
});
