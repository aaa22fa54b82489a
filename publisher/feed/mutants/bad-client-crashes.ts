#!/usr/bin/env node
// Server mutant "bad-client-crashes": a client frame that is not JSON, or a line past the 1 MiB
// limit, throws out of the connection's handler, as in a server that parses each line in its
// socket's `data` callback without a try: the exception reaches the event loop and the process
// exits, taking every other client's connection with it.
//
// It breaks the server contract, section 5: "A client frame that is not valid JSON … or is longer
// than 1 MiB: close that connection, sending nothing first … A bad client never takes the server
// or another connection down."
//
// Killed by: feed-server-bad-clients — a client sends garbage, another a 2 MiB line: the server
// exits before the run is over.
// Python twin: bad-client-crashes.py.

import { runServer } from '../server/program.js';

await runServer({
  policy: {
    onBadFrame(why) {
      // BUG: thrown outside any catch (the callback's own tick), so nothing but the process handles it.
      process.nextTick(() => {
        throw new Error(`bad frame from a client: ${why}`);
      });
    },
  },
});
