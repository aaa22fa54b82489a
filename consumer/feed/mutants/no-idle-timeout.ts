// Mutant "no-idle-timeout": CHAOSLAB_IDLE_MS is validated but never applied: a connection on
// which nothing arrives stays open for ever (and so does a connect that hangs). The variable is
// still checked (a bad value still exits 64), then replaced by 2^31-1 ms (about 24.8 days, the
// longest wait Node's timers support).
//
// It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
//   「両側にタイムアウト判定が必要です。なければ半開接続が残ります。」
//   "Both sides need a timeout check; without one, half-open connections remain."
// and the contract (section 5): "Close a connection on which you have received nothing at all
// for CHAOSLAB_IDLE_MS, then reconnect."
//
// A server that keeps sending (events, pings) or closes cleanly never lets the timeout matter —
// a near miss (feed-happy-path).
// Killed by: feed-half-open — the link goes half-open (Toxiproxy `timeout` both ways): nothing
// arrives and no FIN comes; this one keeps the dead connection and never connects again while
// the link is dead, which the checker names.
// Python twin: consumer/feed/mutants/no-idle-timeout.py. (The override is of the environment,
// as the ledger lab's no-timeout does: the idle limit is read from it, not from a step.)
import { MAX_MS, main, parseEnv } from '../typescript/feed-client.js';

try {
  parseEnv(process.env); // the reference's checks first: a bad environment still exits 64
  process.env.CHAOSLAB_IDLE_MS = String(MAX_MS); // BUG: read, checked, and then not used
} catch {
  // leave it as it is: the reference reports it and exits 64
}
await main();
