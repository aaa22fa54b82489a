#!/usr/bin/env node
// Server mutant "unbounded-queue": a connection's queue has no limit. A client that does not
// keep up is never reset: everything produced for it waits in the server's memory, which grows
// with the client's backlog for as long as the client lags (for ever, for a client that stopped
// reading but keeps its connection).
//
// It breaks the server contract, section 4: "A connection may have at most
// `CHAOSLAB_QUEUE_LIMIT` frames pending … One more frame while the queue is full: drop
// everything pending for it, send `reset slow-consumer`, and close", and "One slow client costs
// the server at most its queue: the server's memory stays bounded".
//
// Killed by: feed-server-slow-reader — its slow client falls thousands of frames behind (far
// more than the run's small socket buffers and the queue hold) and no `reset slow-consumer`
// comes; the server's RSS grows meanwhile.
// Python twin: unbounded-queue.py.

import { runServer } from '../server/program.js';

await runServer({
  policy: {
    // BUG: the limit is never enforced: the queue keeps every frame, however far behind the client is.
    onOverflow: () => 'carry-on',
  },
});
