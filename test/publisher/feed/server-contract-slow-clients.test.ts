// The server contract (publisher/feed/CONTRACT.md §4, §10.6) with clients that read slowly or not
// at all, checked from outside as in ./server-contract.test.ts: a replay paced by a client that
// pings while it reads nothing, and a client that stops reading (reset slow-consumer after a
// gap-free prefix) beside one that reads. A file of its own: some 30 s of waiting on the kernel's
// buffers and the server's queue, run beside the rest of the contract.

import { encodePing } from '../../../protocol/feed/encode.js';
import { FeedClient, chainEvents, sleep } from '../../helpers/feed-lab.js';
import { atHead, eventCursors, forEachServer, lastCursorOfBlock, lastEventReached } from '../../helpers/feed-server-contract.js';
import { startOutbox, startServer } from '../../helpers/feed-server-rig.js';

forEachServer('a client that catches up while it pings, reading nothing for a while, is never reset: the replay is paced by it', async (t, server) => {
  // A replay that waits for the queue never overflows by itself (contract §10.6), but the
  // client's pings are answered into the same queue (§4: every frame counts): a page that fills
  // the queue to its limit leaves no place for the pong. 20 000 rows of about 350 bytes are past
  // what loopback's kernel buffers absorb, so the replay fills the queue while the client reads
  // nothing; its pings (at most a tenth of the queue) must still be answered, and it then gets
  // every row. Without room for them the Python reference reset such a probe as slow in the
  // slow-reader scene, again at each resume, and the probe never caught up.
  const { path, chain } = startOutbox(t, { chain: { logsPerBlock: { min: 10, max: 10 } }, initialBlocks: 2000 });
  const proc = await startServer(t, server, path, { CHAOSLAB_QUEUE_LIMIT: '200' });
  const topics = [...chain.accounts];
  const from = lastCursorOfBlock(chain, 1);
  const c = await FeedClient.subscribe(proc.port, topics, from, chain.canonicalAt(1)!.hash);
  c.socket.pause(); // reads nothing: the kernel's buffers fill, then the server's queue
  const pings = 15;
  for (let id = 1; id <= pings; id++) {
    c.send(encodePing(id));
    await sleep(300); // pacing, as a client's heartbeat is: no condition to wait for
  }
  c.socket.resume();
  const reached = lastEventReached(chain, topics);
  await c.waitFrames('every row, or a reset', (c) => reached(c) || c.ofOp('reset').length > 0 || c.isClosed, 120_000);
  t.same(c.ofOp('reset'), [], 'never reset');
  t.same(eventCursors(c), chainEvents(chain, topics, from), 'every row above its cursor, in order');
  t.same(
    c.ofOp('pong').map((p) => p.id),
    Array.from({ length: pings }, (_, i) => i + 1),
    'every ping answered',
  );
  c.destroy();
});

forEachServer('a client that stops reading gets reset slow-consumer after a gap-free prefix; a client that reads is unaffected', async (t, server) => {
  // The kernel absorbs some 3-4 MB for a client that reads nothing (the server's send buffer
  // grows that large on loopback, whatever the client's receive buffer): 30 000 rows of about
  // 350 bytes are well past it and the queue of 100 together.
  const { path, chain, producer } = startOutbox(t, { chain: { logsPerBlock: { min: 10, max: 10 } }, initialBlocks: 5 });
  const proc = await startServer(t, server, path, { CHAOSLAB_QUEUE_LIMIT: '100' });
  const topics = [...chain.accounts];
  const reader = await FeedClient.subscribe(proc.port, topics);
  const stalled = await FeedClient.subscribe(proc.port, topics);
  await stalled.waitFrames('the snapshot', (c) => c.ofOp('snapshot').length === 1, 60_000);
  await reader.waitFrames('the head', atHead(chain, topics), 60_000);
  stalled.socket.pause(); // reads nothing more: the kernel's buffers fill, then the server's queue
  const rows = 30_000;
  for (let written = 0; written < rows; written += 100) {
    producer.mine(10); // 100 rows, no more than the queue holds: a client that reads keeps up
    await reader.waitFrames(`row ${written + 100} of ${rows}`, lastEventReached(chain, topics), 60_000);
  }
  t.same(reader.ofOp('reset'), [], 'the client that reads was never reset');
  t.equal(reader.isClosed, false, 'and is still connected');
  t.same(eventCursors(reader), chainEvents(chain, topics, reader.ofOp('snapshot')[0]!.cursor), 'and has every row, in order');
  reader.destroy();

  stalled.socket.resume();
  await stalled.waitFrames('the reset', (c) => c.ofOp('reset').length > 0 || c.isClosed, 120_000);
  t.same(stalled.data.at(-1), { op: 'reset', reason: 'slow-consumer' }, 'the stalled client: reset slow-consumer, its last frame');
  const got = eventCursors(stalled);
  const due = chainEvents(chain, topics, stalled.ofOp('snapshot')[0]!.cursor);
  t.ok(got.length < due.length, `it got ${got.length} of ${due.length} rows: the server did not buffer them all`);
  t.same(got, due.slice(0, got.length), 'what it got is a gap-free prefix: nothing dropped in silence');
  stalled.destroy();
});
