import { type Socket, connect } from 'node:net';
import t, { type Test } from 'tap';
import { ResyncRequired, RetentionLog } from '../../../publisher/ledger/log.js';
import { Publisher } from '../../../publisher/ledger/server.js';
import type { StreamConfig } from '../../../publisher/ledger/stream.js';
import type { TranscriptEntry } from '../../../publisher/transcript.js';

const script = (deltas: number[]) => deltas.map((delta, seq) => ({ seq, delta }));

/** A bare test client: collects lines, can send lines, resolves when closed. */
class Client {
  lines: string[] = [];
  closed: Promise<void>;
  private buffer = '';
  private waiters: (() => void)[] = [];
  constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let lf: number;
      while ((lf = this.buffer.indexOf('\n')) !== -1) {
        this.lines.push(this.buffer.slice(0, lf + 1));
        this.buffer = this.buffer.slice(lf + 1);
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
  }
  static open(port: number): Promise<Client> {
    return new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => resolve(new Client(s)));
      s.once('error', reject);
    });
  }
  send(line: string): void {
    this.socket.write(line);
  }
  async waitLines(n: number, ms = 2000): Promise<string[]> {
    const deadline = Date.now() + ms;
    while (this.lines.length < n) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} lines, have ${JSON.stringify(this.lines)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
    return this.lines.slice(0, n);
  }
}

async function start(t: Test, config: Omit<StreamConfig, 'name'>) {
  const transcript: TranscriptEntry[] = [];
  const publisher = await Publisher.start([{ name: 's', ...config }], { onTranscript: (e) => transcript.push(e) });
  t.teardown(() => publisher.close());
  return { publisher, port: publisher.stream('s').port, transcript, stream: publisher.stream('s').stream };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('RetentionLog: replay boundaries, empty log', async (t) => {
  const log = new RetentionLog(script([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), 10);
  t.same(
    log.replay(9).map((e) => e.seq),
    [10, 11],
    'cursor start-1 is served',
  );
  t.same(
    log.replay(10).map((e) => e.seq),
    [11],
  );
  t.same(log.replay(11), [], 'nothing after the last item');
  t.throws(() => log.replay(8), ResyncRequired, 'cursor start-2 needs a trimmed item');
  t.match(
    t.throws(() => log.replay(-1)),
    { firstAvailable: 10 },
  );
  t.same(
    new RetentionLog(script([1, 2, 3])).replay(-1, 2).map((e) => e.seq),
    [0, 1],
    'limit',
  );
  t.throws(() => new RetentionLog([]), /empty/, 'an empty log is an error, not "nothing new"');
  t.throws(() => new RetentionLog(script([1, 2]), 2), /empty/, 'everything trimmed is an error too');
  t.throws(() => new RetentionLog([{ seq: 1, delta: 1 }]), /contiguous/);
  t.throws(() => log.moveStart(3), /forward/);
  log.moveStart(11);
  t.throws(() => log.replay(9), ResyncRequired, 'moved retention');
});

t.test('streams the script after RESUME, closes only after the last ACK', async (t) => {
  const { port, transcript } = await start(t, { events: script([7, 5, -3]) });
  const c = await Client.open(port);
  c.send('RESUME -1\n');
  t.same(await c.waitLines(3), ['EVENT 0 7\n', 'EVENT 1 5\n', 'EVENT 2 -3\n']);
  c.send('ACK 0\nACK 1\n');
  await sleep(100);
  t.equal(c.socket.readableEnded, false, 'still open while ACK 2 is outstanding');
  c.send('ACK 2\n');
  await c.closed;
  const close = transcript.find((e) => e.kind === 'close');
  t.match(close, { by: 'publisher', reason: 'all events acknowledged' });
  t.same(
    transcript.filter((e) => e.kind === 'recv').map((e) => (e as { line: string }).line),
    ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'],
  );
  t.ok(
    transcript.every((e, i) => i === 0 || e.t >= transcript[i - 1]!.t),
    'monotonic timestamps',
  );
});

t.test('replays from the cursor; retention start 10 serves RESUME 9, answers RESUME 8 with RESYNC 10', async (t) => {
  const { port, transcript } = await start(t, { events: script(Array.from({ length: 13 }, (_, i) => i + 1)), retentionStart: 10 });
  const a = await Client.open(port);
  a.send('RESUME 9\n');
  t.same(await a.waitLines(3), ['EVENT 10 11\n', 'EVENT 11 12\n', 'EVENT 12 13\n']);
  a.socket.destroy();
  const b = await Client.open(port);
  b.send('RESUME 8\n');
  await b.closed;
  t.same(b.lines, ['RESYNC 10\n'], 'RESYNC and nothing else');
  t.match(transcript.filter((e) => e.kind === 'close').at(-1), { by: 'publisher', reason: /resync required/ });
});

t.test('window: at most N unacknowledged events in flight', async (t) => {
  const { port } = await start(t, { events: script([1, 1, 1, 1, 1, 1, 1, 1]), window: 3 });
  const c = await Client.open(port);
  c.send('RESUME -1\n');
  await c.waitLines(3);
  await sleep(150);
  t.equal(c.lines.length, 3, 'waits for ACKs before a 4th');
  c.send('ACK 0\n');
  await c.waitLines(4);
  await sleep(100);
  t.same(c.lines.at(-1), 'EVENT 3 1\n');
  t.equal(c.lines.length, 4, 'one ACK opens one slot');
});

t.test('redelivery of unacknowledged events before new ones (the ack-crash resend)', async (t) => {
  for (const redeliverUnacked of [true, false]) {
    const { port } = await start(t, { events: script([7, 5, -3]), redeliverUnacked });
    const first = await Client.open(port);
    first.send('RESUME -1\n');
    await first.waitLines(3);
    first.send('ACK 0\n');
    await sleep(50);
    first.socket.destroy(); // committed 1 but died before ACK 1
    const second = await Client.open(port);
    second.send('RESUME 1\n');
    const expected = redeliverUnacked ? ['EVENT 1 5\n', 'EVENT 2 -3\n'] : ['EVENT 2 -3\n'];
    t.same(await second.waitLines(expected.length), expected, `redeliverUnacked=${redeliverUnacked}`);
    second.socket.destroy();
  }
});

t.test('closes after the ACK deadline when the last ACK never comes', async (t) => {
  const { port, transcript } = await start(t, { events: script([1, 2]), ackDeadlineMs: 200 });
  const c = await Client.open(port);
  c.send('RESUME -1\n');
  await c.waitLines(2);
  c.send('ACK 0\n');
  await c.closed;
  t.match(
    transcript.find((e) => e.kind === 'close'),
    { by: 'publisher', reason: /ack deadline \(200 ms\) passed without ACK 1/ },
  );
});

t.test('trigger points hold the stream until the harness says go', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const seen: string[] = [];
  const { port } = await start(t, {
    events: script([1, 2, 3]),
    hooks: {
      onResume: (_c, cursor) => void seen.push(`resume ${cursor}`),
      beforeEvent: (_c, seq) => (seq === 1 ? held : undefined),
      onAck: (_c, seq) => void seen.push(`ack ${seq}`),
    },
  });
  const c = await Client.open(port);
  c.send('RESUME -1\n');
  await c.waitLines(1);
  await sleep(150);
  t.same(c.lines, ['EVENT 0 1\n'], 'EVENT 1 is held');
  release();
  t.same(await c.waitLines(3), ['EVENT 0 1\n', 'EVENT 1 2\n', 'EVENT 2 3\n']);
  c.send('ACK 0\n');
  await sleep(50);
  t.same(seen, ['resume -1', 'ack 0']);
});

t.test('a malformed consumer line, or ACK before RESUME, makes the publisher close', async (t) => {
  const { port, transcript } = await start(t, { events: script([1]) });
  const a = await Client.open(port);
  a.send('RESUME  -1\n');
  await a.closed;
  t.match(
    transcript.find((e) => e.kind === 'recv'),
    { line: 'RESUME  -1\n', error: /not "RESUME/ },
  );
  const b = await Client.open(port);
  b.send('ACK 0\n');
  await b.closed;
  t.match(transcript.filter((e) => e.kind === 'close').at(-1), { by: 'publisher', reason: 'ACK 0 before RESUME' });
});

t.test('a consumer that resets the connection: every ACK before the reset is kept', async (t) => {
  const { port, transcript, stream } = await start(t, { events: script([1, 2, 3]) });
  const c = await Client.open(port);
  c.send('RESUME -1\n');
  await c.waitLines(3);
  c.send('ACK 0\nACK 1\n');
  await sleep(50);
  c.socket.resetAndDestroy();
  await sleep(100);
  t.same([...stream.acked].sort(), [0, 1]);
  t.match(transcript.at(-1), { kind: 'close', by: 'reset' });
});

t.test('misbehaviour: duplicate, skip, replace, insert on the named connection only', async (t) => {
  const { port, transcript } = await start(t, {
    events: script([1, 2, 3, 4]),
    misbehaviour: [
      { action: 'duplicate', seq: 0 },
      { action: 'skip', seq: 1 },
      { action: 'replace', seq: 2, bytes: 'EVENT 02 3\n' },
      { action: 'insert', seq: 3, bytes: 'EVENT 0 99\n' },
      { action: 'duplicate', seq: 3, connection: 2 },
    ],
  });
  const c = await Client.open(port);
  c.send('RESUME -1\n');
  t.same(await c.waitLines(2), ['EVENT 0 1\n', 'EVENT 0 1\n'], 'a duplicate goes out at once');
  await sleep(150);
  t.equal(c.lines.length, 2, 'the skip waits until the ACKs already owed are in');
  c.send('ACK 0\n');
  t.same(await c.waitLines(5), ['EVENT 0 1\n', 'EVENT 0 1\n', 'EVENT 02 3\n', 'EVENT 0 99\n', 'EVENT 3 4\n']);
  t.match(
    transcript.find((e) => e.kind === 'send' && e.line === 'EVENT 02 3\n'),
    { note: 'misbehaviour: replace at EVENT 2' },
  );
  c.socket.destroy();
  const d = await Client.open(port);
  d.send('RESUME 2\n');
  t.same(await d.waitLines(2), ['EVENT 3 4\n', 'EVENT 3 4\n'], 'connection 2 gets its own rule');
});

t.test('misbehaviour: silence keeps the connection open; close sends a fragment and closes', async (t) => {
  const { port, transcript } = await start(t, {
    events: script([1, 2, 3]),
    ackDeadlineMs: 100,
    misbehaviour: [
      { action: 'silence', seq: 1 },
      { action: 'close', seq: 1, bytes: 'EVENT 1 2', connection: 2 },
    ],
  });
  const a = await Client.open(port);
  a.send('RESUME -1\n');
  await a.waitLines(1);
  a.send('ACK 0\n');
  await sleep(300);
  t.same(a.lines, ['EVENT 0 1\n']);
  t.equal(a.socket.readableEnded, false, 'silent, but not closed (even past the ACK deadline)');
  t.match(
    transcript.find((e) => e.kind === 'note'),
    { text: /silent from EVENT 1/ },
  );
  a.socket.destroy();
  const b = await Client.open(port);
  b.send('RESUME 0\n');
  await b.closed;
  t.same(b.lines, [], 'the fragment has no LF, so no complete line');
  t.match(transcript.filter((e) => e.kind === 'send').at(-1), { line: 'EVENT 1 2', note: /close at EVENT 1/ });
  t.match(transcript.at(-1), { kind: 'close', by: 'publisher', reason: 'misbehaviour: close at EVENT 1' });
});

t.test('misbehaviour: silence with bytes sends them instead of the EVENT, then nothing more; behind the cursor, nothing at all', async (t) => {
  const { port, transcript } = await start(t, {
    events: script([1, 2, 3, 4]),
    ackDeadlineMs: 100,
    misbehaviour: [
      { action: 'silence', seq: 1, bytes: 'A'.repeat(100) },
      { action: 'silence', seq: 1, bytes: 'A'.repeat(100), connection: 2 },
    ],
  });
  const a = await Client.open(port);
  a.send('RESUME -1\n');
  await a.waitLines(1);
  a.send('ACK 0\n');
  await sleep(300);
  t.same(a.lines, ['EVENT 0 1\n'], 'the fragment has no LF, and nothing follows it');
  t.equal(a.socket.readableEnded, false, 'silent, but not closed (even past the ACK deadline)');
  t.match(transcript.filter((e) => e.kind === 'send').at(-1), { line: 'A'.repeat(100), note: /silence at EVENT 1/ });
  a.socket.destroy();
  // Connection 2 resumes past EVENT 1: its rule never fires, and the stream goes on to the end.
  const b = await Client.open(port);
  b.send('RESUME 1\n');
  await b.waitLines(2);
  t.same(b.lines, ['EVENT 2 3\n', 'EVENT 3 4\n']);
  b.send('ACK 2\nACK 3\n');
  await b.closed;
  t.match(transcript.at(-1), { kind: 'close', by: 'publisher' });
});

t.test('retention moves while the consumer is away; forgetting acknowledged events', async (t) => {
  const moved = await start(t, { events: script([1, 2, 3, 4, 5, 6]), retentionMoves: [{ connection: 2, to: 4 }] });
  const a = await Client.open(moved.port);
  a.send('RESUME -1\n');
  await a.waitLines(6);
  a.socket.destroy();
  const b = await Client.open(moved.port);
  b.send('RESUME 2\n');
  await b.closed;
  t.same(b.lines, ['RESYNC 4\n'], 'cursor 2 is now older than retention 4');

  const forget = await start(t, { events: script([1, 2, 3, 4]), forgetAcked: true, redeliverUnacked: true });
  const c = await Client.open(forget.port);
  c.send('RESUME -1\n');
  await c.waitLines(4);
  c.send('ACK 0\nACK 1\n');
  await sleep(50);
  t.equal(forget.stream.log.first, 2, 'acknowledged prefix forgotten');
  t.equal(forget.stream.complete, false);
  c.send('ACK 2\nACK 3\n');
  await c.closed;
  t.equal(forget.stream.log.first, 3, 'the last item is kept: an empty log is an error');
  t.equal(forget.stream.complete, true);
  const d = await Client.open(forget.port);
  d.send('RESUME 0\n');
  await d.closed;
  t.same(d.lines, ['RESYNC 3\n'], 'an ACK that was a broken promise now shows as a loss');
});

t.test('the ACK deadline also runs while the window is full: a consumer that stops acknowledging is not waited for forever', async (t) => {
  const { port, transcript } = await start(t, { events: script([1, 2, 3, 4]), window: 1, ackDeadlineMs: 200 });
  const c = await Client.open(port);
  c.send('RESUME -1\n');
  await c.waitLines(1);
  c.send('ACK 0\n');
  await c.waitLines(2);
  const sentAt = Date.now();
  await c.closed; // never acknowledges EVENT 1
  t.ok(Date.now() - sentAt >= 150, 'not before the deadline');
  t.same(c.lines, ['EVENT 0 1\n', 'EVENT 1 2\n'], 'nothing more was sent while ACK 1 was owed');
  t.match(
    transcript.find((e) => e.kind === 'close'),
    { by: 'publisher', reason: 'ack deadline (200 ms) passed without ACK 1' },
  );
});
