// The probe's line relay: bytes pass both ways unchanged, every complete line is reported in the
// transcript's terms (recv: probe to server, send: server to probe), an end travels on as an end
// (a frame written just before it arrives whole), a refused target closes the probe's socket
// without a record, and repointing leads only later connections elsewhere.
import { createServer, type Server, type Socket, connect } from 'node:net';
import t from 'tap';
import type { TranscriptEvent } from '../../../../../../publisher/transcript.js';
import { LineRelay, LineSplitter } from '../../../../../../harness/labs/feed/server/wire/relay.js';

interface Upstream {
  server: Server;
  port: number;
  sockets: Socket[];
  accepted: Promise<Socket>[];
}

async function upstream(): Promise<Upstream> {
  const sockets: Socket[] = [];
  const waiters: ((s: Socket) => void)[] = [];
  const accepted: Promise<Socket>[] = Array.from({ length: 4 }, () => new Promise<Socket>((resolve) => waiters.push(resolve)));
  const server = createServer((s) => {
    sockets.push(s);
    waiters.shift()?.(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, sockets, accepted };
}

function record(): {
  events: { conn: number; event: TranscriptEvent }[];
  sink: (conn: number, event: TranscriptEvent) => void;
  until: (p: (e: { conn: number; event: TranscriptEvent }[]) => boolean) => Promise<void>;
} {
  const events: { conn: number; event: TranscriptEvent }[] = [];
  const waiting: (() => void)[] = [];
  return {
    events,
    sink: (conn, event) => {
      events.push({ conn, event });
      for (const w of waiting.splice(0)) w();
    },
    until: async (p) => {
      while (!p(events)) await new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}

const read = (s: Socket): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    s.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    s.on('end', () => resolve(text));
    s.on('close', () => resolve(text));
  });

t.test('LineSplitter: lines across chunks, the unfinished rest counted', async (t) => {
  const s = new LineSplitter();
  t.same(s.push(Buffer.from('{"op":"pi')), []);
  t.equal(s.pending, 9);
  t.same(s.push(Buffer.from('ng"}\n{"a":1}\n{"b"')), ['{"op":"ping"}', '{"a":1}']);
  t.equal(s.pending, 4);
  t.same(s.push(Buffer.from(':2}\n')), ['{"b":2}']);
  t.equal(s.pending, 0);
});

t.test('bytes pass both ways unchanged; lines are reported as recv and send; the end of the server reaches the probe after its last frame', async (t) => {
  const up = await upstream();
  const rec = record();
  const relay = await LineRelay.start({ host: '127.0.0.1', port: up.port, tag: 'instance 1' }, rec.sink);
  t.teardown(async () => {
    await relay.close();
    up.server.close();
  });
  const probe = connect({ host: '127.0.0.1', port: relay.port });
  const got = read(probe);
  probe.write('{"op":"subscribe"');
  const server = await up.accepted[0]!;
  let heard = '';
  const line = new Promise<void>((resolve) =>
    server.on('data', (c: Buffer) => {
      heard += c.toString();
      if (heard.endsWith('\n')) resolve();
    }),
  );
  probe.write(',"cursor":null}\n');
  await line;
  await rec.until((e) => e.some((x) => x.event.kind === 'recv'));
  t.equal(heard, '{"op":"subscribe","cursor":null}\n', 'the server got the bytes as sent');
  server.end('{"op":"snapshot"}\n{"op":"reset","reason":"shutdown"}\n');
  t.equal(await got, '{"op":"snapshot"}\n{"op":"reset","reason":"shutdown"}\n', 'the probe got both frames, then the end');
  probe.end();
  await rec.until((e) => e.some((x) => x.event.kind === 'close'));
  t.same(
    rec.events.map((x) => [x.conn, x.event.kind, 'line' in x.event ? x.event.line : 'tag' in x.event ? x.event.tag : 'by' in x.event ? x.event.by : '']),
    [
      [1, 'open', 'instance 1'],
      [1, 'recv', '{"op":"subscribe","cursor":null}\n'],
      [1, 'send', '{"op":"snapshot"}\n'],
      [1, 'send', '{"op":"reset","reason":"shutdown"}\n'],
      [1, 'close', 'publisher'],
    ],
  );
});

t.test('a refused target closes the probe unrecorded; repointing leads later connections to the new target', async (t) => {
  const a = await upstream();
  const b = await upstream();
  const rec = record();
  const relay = await LineRelay.start({ host: '127.0.0.1', port: a.port, tag: 'instance 1' }, rec.sink);
  t.teardown(async () => {
    await relay.close();
    a.server.close();
    b.server.close();
  });
  const first = connect({ host: '127.0.0.1', port: relay.port });
  await a.accepted[0];
  relay.repoint({ host: '127.0.0.1', port: b.port, tag: 'instance 2' });
  t.equal(relay.current.tag, 'instance 2');
  const second = connect({ host: '127.0.0.1', port: relay.port });
  await b.accepted[0];
  t.equal(a.sockets.length, 1, 'the open connection stayed where it was');
  t.equal(b.sockets.length, 1, 'the new one went to the new target');
  first.destroy();
  second.destroy();
  await new Promise<void>((resolve) => b.server.close(() => resolve()));
  for (const s of b.sockets) s.destroy();
  await rec.until((e) => e.filter((x) => x.event.kind === 'close').length === 2);
  const before = rec.events.length;
  const refused = connect({ host: '127.0.0.1', port: relay.port });
  await new Promise<void>((resolve) => refused.on('close', () => resolve()).on('error', () => {}));
  t.equal(rec.events.length, before, 'a connection the target refused left no record');
  t.same(
    rec.events.filter((x) => x.event.kind === 'open').map((x) => (x.event as { tag: string }).tag),
    ['instance 1', 'instance 2'],
  );
});
