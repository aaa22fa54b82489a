#!/usr/bin/env node
// Server mutant "no-heartbeat": connections have no heartbeat. The server never pings a client
// it has nothing to send to, and never closes one it has not heard from: a half-open client (its
// peer gone without a FIN) holds its connection and its queue for ever. Pings from clients are
// still answered.
//
// It breaks the server contract, section 5: "Send `ping` after `CHAOSLAB_PING_MS` without
// sending; … close a connection on which nothing arrived for `CHAOSLAB_IDLE_MS` (a half-open
// client must not hold a queue forever)".
//
// Killed by: feed-server-heartbeats — a client that subscribes to a quiet account and then sends
// nothing gets no ping, and is still open long after CHAOSLAB_IDLE_MS.
// Python twin: no-heartbeat.py.

import { runServer } from '../server/program.js';

await runServer({
  policy: {
    // BUG: no timers at all: nothing is sent on a silent connection, nothing notices a dead one.
    heartbeat: () => ({ sent() {}, received() {}, stop() {} }),
  },
});
