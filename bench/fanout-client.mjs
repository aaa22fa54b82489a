// make bench §5's load client: one Node process holding N feed connections (not N processes).
// Each one subscribes, reads frames, answers pings and pings when it has been quiet (so the
// server's idle timeout never cuts a busy reader off). Light on purpose: an event frame is
// counted from its first bytes, only pings and the rare control frames are parsed.
//   --mode replay: subscribe from genesis; done when every connection holds --events events.
//                  Reports the aggregate events/s from the subscribes to the last event.
//   --mode live:   subscribe for a snapshot, say {"ready":true}, then read the publisher's block
//                  lines on stdin ({"block","t","events"}, then {"mined":true}); the delivery lag
//                  of each event is its read time minus its block's `t` (one monotonic clock).
//   A reader that is reset or closed reads no more: once the others have read everything, the
//   run ends with `incomplete` saying how many (not at --timeout-s).
//   --stalled k:   k more connections subscribe (live) and stop reading after their snapshot (they
//                  go on pinging, so they are heard from); when the readers are done they read
//                  again, up to the server's reset or close: how many events each got, and why
//                  it ended, go into the result's "stalled". They count in no other figure.
// Prints one JSON result line on stdout at the end.
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { percentile } from '../dist/harness/bench/figures.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    connections: { type: 'string' },
    topics: { type: 'string' },
    mode: { type: 'string' },
    events: { type: 'string', default: '0' },
    cursor: { type: 'string', default: '' },
    'block-hash': { type: 'string', default: '' },
    'timeout-s': { type: 'string', default: '120' },
    stalled: { type: 'string', default: '0' },
  },
});
const port = Number(values.port);
const n = Number(values.connections);
const stalledCount = Number(values.stalled);
/** After the readers are done, how long a stalled connection may take to read up to its reset. */
const STALLED_DRAIN_MS = 10_000;
const topics = (values.topics ?? '').split(',');
const live = values.mode === 'live';
const perConnection = Number(values.events);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const say = (object) => process.stdout.write(`${JSON.stringify(object)}\n`);
const PING_MS = 1000;
const CONNECTING_AT_ONCE = 200;
const EVENT_PREFIX = '{"op":"event","cursor":"';

const conns = [];
const resets = {};
let events = 0;
let eventBytes = 0;
let t0 = 0;
let tLast = 0;
let completed = 0;
let snapshots = 0;
let closedEarly = 0;
let pongs = 0;
let other = 0;
// Live: read times waiting for their block's time, the lags, the blocks mined live.
const blockTime = new Map();
const waiting = new Map();
const lags = [];
let expectedLive = 0;
let mined = false;
let finished = false;

function onEvent(conn, line) {
  conn.events++;
  if (conn.stalled) return;
  events++;
  eventBytes += line.length + 1;
  tLast = now();
  if (live) {
    const colon = line.indexOf(':', EVENT_PREFIX.length);
    const block = Number(line.slice(colon + 1, colon + 15));
    const written = blockTime.get(block);
    if (written !== undefined) lags.push(tLast - written);
    else {
      let list = waiting.get(block);
      if (!list) waiting.set(block, (list = []));
      list.push(tLast);
    }
  } else if (conn.events === perConnection) completed++;
  maybeFinish();
}

function onLine(conn, line) {
  if (line.startsWith(EVENT_PREFIX)) return onEvent(conn, line);
  const frame = JSON.parse(line);
  if (frame.op === 'ping') send(conn, `{"op":"pong","id":${frame.id}}\n`);
  else if (frame.op === 'snapshot') {
    snapshots++;
    if (conn.stalled) conn.socket.pause();
    if (snapshots === n + stalledCount) say({ ready: true });
  } else if (frame.op === 'reset') {
    conn.reset = frame.reason;
    if (!conn.stalled) resets[frame.reason] = (resets[frame.reason] ?? 0) + 1;
    maybeFinish();
  } else if (frame.op === 'pong') pongs++;
  else other++;
}

function send(conn, text) {
  conn.lastSent = now();
  conn.socket.write(text);
}

function open() {
  return new Promise((resolve, reject) => {
    const conn = { socket: connect(port, '127.0.0.1'), rest: '', events: 0, lastSent: 0, open: false, stalled: conns.length >= n };
    conn.socket.setNoDelay(true);
    conn.socket.setEncoding('latin1');
    conn.socket.once('connect', () => {
      conn.open = true;
      resolve(conn);
    });
    conn.socket.on('error', (error) => (conn.open ? undefined : reject(error)));
    conn.socket.on('data', (chunk) => {
      let text = conn.rest + chunk;
      let at = text.indexOf('\n');
      let from = 0;
      while (at >= 0) {
        onLine(conn, text.slice(from, at));
        from = at + 1;
        at = text.indexOf('\n', from);
      }
      text = text.slice(from);
      conn.rest = text;
    });
    conn.socket.on('close', () => {
      if (conn.open && !finished && !conn.stalled) closedEarly++;
      conn.open = false;
      maybeFinish();
    });
    conns.push(conn);
  });
}

function maybeFinish() {
  if (finished) return;
  const done = live ? mined && lags.length >= expectedLive * n : completed === n;
  if (done) return void finish();
  // A reader that was reset or closed will read no more: once every reader has read all it
  // will, the run ends (incomplete) instead of waiting for the timeout.
  const readers = conns.slice(0, n);
  if (conns.length < n + stalledCount) return;
  if (readers.every((c) => !c.open)) return void finish('every connection closed before the stream was read');
  const due = live ? expectedLive : perConnection;
  const over = (c) => !c.open || c.reset !== undefined;
  if ((live && !mined) || !readers.every((c) => over(c) || c.events >= due)) return;
  const reset = readers.filter((c) => c.reset !== undefined).length;
  const closed = readers.filter((c) => c.reset === undefined && !c.open).length;
  if (reset + closed === 0) return;
  const words = [reset ? `${reset} reset` : '', closed ? `${closed} closed` : ''].filter(Boolean).join(' and ');
  void finish(`${words} of ${n} readers before the stream was read`);
}

/** The stalled connections read again, each up to its reset, its close or STALLED_DRAIN_MS. */
async function drainStalled() {
  const stalled = conns.filter((c) => c.stalled);
  await Promise.all(
    stalled.map(
      (conn) =>
        new Promise((resolve) => {
          const check = setInterval(() => (conn.reset || !conn.open ? done() : undefined), 20);
          const timer = setTimeout(() => done(), STALLED_DRAIN_MS);
          function done() {
            clearInterval(check);
            clearTimeout(timer);
            resolve();
          }
          conn.socket.resume();
        }),
    ),
  );
  return stalled.map((c) => ({ events: c.events, ...(c.reset ? { reset: c.reset } : {}), closed: !c.open }));
}

async function finish(incomplete) {
  if (finished) return;
  finished = true;
  const stalled = stalledCount > 0 ? await drainStalled() : undefined;
  const seconds = (tLast - t0) / 1000;
  const sorted = Float64Array.from(lags).sort();
  say({
    connections: n,
    events,
    seconds,
    // Live: only the events of blocks mined live count (the snapshot's tail came before).
    eventsPerSec: (live ? lags.length : events) / seconds,
    eventBytes: events ? eventBytes / events : 0,
    ...(stalled ? { stalled } : {}),
    ...(live
      ? {
          lag: { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) },
          expected: expectedLive * n,
          // How long mining the live blocks took: longer than scheduled when the server's event loop was busy.
          blocksSpanS: blockTime.size ? (Math.max(...blockTime.values()) - Math.min(...blockTime.values())) / 1000 : 0,
        }
      : {}),
    snapshots,
    resets,
    closedEarly,
    pongs,
    other,
    ...(incomplete ? { incomplete } : {}),
  });
  for (const conn of conns) conn.socket.destroy();
  process.exit(0);
}

if (live) {
  createInterface({ input: process.stdin }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.block !== undefined) {
      blockTime.set(message.block, message.t);
      expectedLive += message.events;
      for (const read of waiting.get(message.block) ?? []) lags.push(read - message.t);
      waiting.delete(message.block);
      // The first live block starts the clock of the live events/s.
      if (t0 === 0) t0 = message.t;
    }
    if (message.mined) mined = true;
    maybeFinish();
  });
}

// Connect everyone first (CONNECTING_AT_ONCE at a time: the listen backlog is finite), then
// subscribe everyone at once, so that the replay clock measures delivery, not connection set-up.
const total = n + stalledCount;
for (let i = 0; i < total; i += CONNECTING_AT_ONCE) await Promise.all(Array.from({ length: Math.min(CONNECTING_AT_ONCE, total - i) }, open));
const cursor = live ? null : values.cursor;
const blockHash = live ? null : values['block-hash'];
if (!live) t0 = now();
for (const [i, conn] of conns.entries()) send(conn, `${JSON.stringify({ op: 'subscribe', client: `c${i + 1}`, topics, cursor, blockHash })}\n`);
setInterval(() => {
  const quiet = now() - PING_MS;
  for (const conn of conns) if (conn.open && conn.lastSent < quiet) send(conn, `{"op":"ping","id":${Math.floor(conn.lastSent)}}\n`);
}, PING_MS / 2).unref();
setTimeout(() => void finish(`timed out after ${values['timeout-s']} s`), Number(values['timeout-s']) * 1000);
