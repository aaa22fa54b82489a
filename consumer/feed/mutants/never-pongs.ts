// Mutant "never-pongs": the server's pings are read and dropped; no `pong` is ever sent. The
// consumer still sends its own pings, so the server hears from it and keeps the connection.
//
// It breaks this sentence of the seed (seeds/002_2e30d52b5b4dd016.txt):
//   「ハートビートは双方向です。一方だけ送ると、片側しか相手の停止を判定できません。」
//   "Heartbeats go both ways. If only one side sends them, only one side can tell that the
//    other has stopped."
// and the contract (section 4): `ping` — "answer `pong` with the same `id`, as soon as it arrives".
//
// A near miss: feed-happy-path has no quiet moment, so the server never pings there. Killed
// by: feed-acceptance (expect.quiet_ping, and its stalls) — "left 5 pings of 10 unanswered …
// every ping must be answered with a pong carrying the same id".
// Python twin: consumer/feed/mutants/never-pongs.py.
import { main, type Session } from '../typescript/feed-client.js';

await main({
  answerPing(_s: Session, _id: string): void {
    // BUG: the ping is not answered
  },
});
