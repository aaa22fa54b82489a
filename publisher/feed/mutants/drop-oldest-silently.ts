#!/usr/bin/env node
// Server mutant "drop-oldest-silently": a connection's queue that is full while its client is
// not reading drops its oldest frame and carries on, like a ring buffer. The client never
// learns: it gets the frames after the gap as if nothing was missing, and its store silently
// lacks the dropped events.
//
// It breaks the server contract, section 4: "One more frame while the queue is full: drop
// everything pending for it, send `reset slow-consumer`, and close. Never drop a frame silently
// and carry on" (the seed: the bounded queue resets the client, never drops in silence).
//
// Killed by: feed-server-slow-reader — a client reading at a tenth of the event rate, its
// backlog far past what the run's small socket buffers and the queue hold: the frames it gets
// skip events of its accounts with no reset before the gap.
// Python twin: drop-oldest-silently.py.

import { runServer } from '../server/program.js';

await runServer({
  policy: {
    onOverflow(queue) {
      // BUG: the oldest pending frame is thrown away and the connection goes on as if whole.
      queue.dropOldest();
      return 'carry-on';
    },
  },
});
