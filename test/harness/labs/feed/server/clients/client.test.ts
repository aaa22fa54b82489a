// The raw client the harness drives: what it reads is recorded as the server's `send` lines in
// wire order, what it writes as `recv`; a paused client reads nothing until it is told to, a
// paced one no faster than its rate; the end says who closed (the server's FIN, its RST, the
// client). The clients' behaviours: a slow reader answers pings and closes on a reset, a
// half-open one answers nothing, the bad ones send their bad line first.
import { createServer, type Server, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import type { TranscriptEvent } from '../../../../../../publisher/transcript.js';
import { RawClient } from '../../../../../../harness/labs/feed/server/clients/client.js';
import { driveClient, GARBAGE_LINE, OVERSIZED_BYTES } from '../../../../../../harness/labs/feed/server/clients/behaviours.js';
import { awaitedAtWindUp } from '../../../../../../harness/labs/feed/server/clients/run.js';

async function server(t: Test, onSocket: (socket: Socket) => void): Promise<{ port: number; received: () => string }> {
  let text = '';
  const s: Server = createServer((socket) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', () => {});
    onSocket(socket);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => s.close(() => resolve())));
  return { port: (s.address() as { port: number }).port, received: () => text };
}

const until = async (what: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

const recorder = () => {
  const events: TranscriptEvent[] = [];
  return { events, record: (e: TranscriptEvent) => events.push(e), lines: () => events.flatMap((e) => (e.kind === 'send' ? [e.line] : [])) };
};

t.test('flowing: every line recorded in order as the server sent it; the server’s FIN is its close', async (t) => {
  const { port } = await server(t, (socket) => socket.end('a\nb\nc\n'));
  const r = recorder();
  const client = await RawClient.open('127.0.0.1', port, r.record, { kind: 'flowing' });
  await client.closed;
  t.same(r.lines(), ['a\n', 'b\n', 'c\n']);
  t.match(r.events.at(-1), { kind: 'close', by: 'publisher' });
  t.equal(client.endedByWhom, 'publisher');
});

t.test('paused: nothing is read until it flows, then the backlog comes in order', async (t) => {
  let peer: Socket | undefined;
  const { port } = await server(t, (socket) => {
    peer = socket;
    for (let i = 0; i < 50; i++) socket.write(`line ${i}\n`);
  });
  const r = recorder();
  const client = await RawClient.open('127.0.0.1', port, r.record, { kind: 'paused' });
  await until(() => peer !== undefined);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.same(r.lines(), [], 'nothing read while paused');
  client.read({ kind: 'flowing' });
  await until(() => r.lines().length === 50);
  t.same(
    r.lines(),
    Array.from({ length: 50 }, (_, i) => `line ${i}\n`),
  );
  client.close('done');
  t.match(r.events.at(-1), { kind: 'close', by: 'consumer', reason: 'done' });
});

t.test('paced: no faster than its rate', async (t) => {
  const { port } = await server(t, (socket) => {
    for (let i = 0; i < 1000; i++) socket.write(`line ${i}\n`);
  });
  const r = recorder();
  const client = await RawClient.open('127.0.0.1', port, r.record, { kind: 'paced', perSecond: 20 });
  const from = performance.now();
  await until(() => r.lines().length >= 10);
  const took = performance.now() - from;
  // 20 a second with a burst of at most 2: ten lines need at least ~400 ms, however fast the machine.
  t.ok(took >= 350, `10 lines took ${took.toFixed(0)} ms`);
  t.same(
    r.lines().slice(0, 10),
    Array.from({ length: 10 }, (_, i) => `line ${i}\n`),
  );
  client.close('done');
});

t.test('an RST from the server is told apart from its FIN; what had arrived is still read', async (t) => {
  const { port } = await server(t, (socket) => {
    socket.write('last\n', () => setTimeout(() => socket.resetAndDestroy(), 100));
  });
  const r = recorder();
  const client = await RawClient.open('127.0.0.1', port, r.record, { kind: 'flowing' });
  await client.closed;
  t.same(r.lines(), ['last\n']);
  t.equal(client.endedByWhom, 'reset');
});

t.test('behaviours: the slow reader answers a ping and closes on a reset; its first line is a subscribe', async (t) => {
  const { port, received } = await server(t, (socket) => {
    socket.write('{"op":"event","cursor":"1:00000000000011:0002","type":"transfer","payload":{}}\n{"op":"ping","id":7}\n');
    setTimeout(() => socket.write('{"op":"reset","reason":"slow-consumer"}\n'), 100);
  });
  const r = recorder();
  const base = {
    host: '127.0.0.1',
    port,
    clientId: 'c',
    topics: ['0x' + 'a'.repeat(40)],
    serverPingMs: 500,
    serverIdleMs: 3000,
    readsPerSecond: 100,
    record: r.record,
  };
  const driven = await driveClient('slow-reader', base);
  await driven.client.closed;
  const sent = received().split('\n').filter(Boolean);
  t.match(JSON.parse(sent[0]!), { op: 'subscribe', client: 'c', cursor: null, blockHash: null });
  t.ok(sent.includes('{"op":"pong","id":7}'), 'pong with the ping’s id');
  t.match(r.events.at(-1), { kind: 'close', by: 'consumer', reason: /read the reset/ });
  t.equal(driven.lastEvent?.cursor, '1:00000000000011:0002', 'the last event it read, for the wind-up');
  driven.windUp();
});

t.test('behaviours: the half-open client answers nothing; the bad ones send their bad line first', async (t) => {
  const { port, received } = await server(t, (socket) => socket.write('{"op":"ping","id":1}\n'));
  const r = recorder();
  const base = {
    host: '127.0.0.1',
    port,
    clientId: 'c',
    topics: ['0x' + 'a'.repeat(40)],
    serverPingMs: 500,
    serverIdleMs: 3000,
    readsPerSecond: 1,
    record: r.record,
  };
  const half = await driveClient('half-open', base);
  await until(() => r.lines().length === 1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(received().split('\n').filter(Boolean).length, 1, 'only its subscribe');
  half.windUp();
  await half.client.closed;

  const garbage = await server(t, () => {});
  const g = await driveClient('garbage', { ...base, port: garbage.port });
  await until(() => garbage.received().length > 0);
  t.equal(garbage.received(), GARBAGE_LINE);
  g.windUp();

  const big = await server(t, () => {});
  const o = await driveClient('oversized', { ...base, port: big.port });
  await until(() => big.received().endsWith('\n'));
  t.ok(big.received().length > OVERSIZED_BYTES, 'a line past 2 MiB');
  t.equal(big.received().indexOf('\n'), big.received().length - 1, 'one line');
  o.windUp();
});

t.test('wind-up: waits for what the server must still close, not for a slow reader with nothing left to reset it for', async (t) => {
  const last = '1:00000000000160:0011';
  const reader = { kind: 'slow-reader', quiet: false } as const;
  const read = (cursor: string, at: number) => ({ cursor, at });
  t.notOk(awaitedAtWindUp(reader, false, undefined, last, 0), 'a closed client is not waited for');
  t.notOk(awaitedAtWindUp({ kind: 'pinger', quiet: false }, true, undefined, last, 0), 'a pinger is heard all along');
  for (const kind of ['half-open', 'never-reads', 'garbage', 'oversized'] as const)
    t.ok(awaitedAtWindUp({ kind, quiet: false }, true, read(last, 0), last, 60_000), `${kind}: the server may still close it (idle, reset)`);
  t.ok(awaitedAtWindUp(reader, true, read('1:00000000000100:0003', 0), last, 60_000), 'a slow reader still behind: its reset may be on its way');
  t.ok(awaitedAtWindUp(reader, true, undefined, last, 60_000), 'a slow reader that read no event yet');
  t.ok(awaitedAtWindUp(reader, true, read(last, 10_000), last, 10_500), 'the last event read half a second ago: a reset may be just behind it');
  t.notOk(awaitedAtWindUp(reader, true, read(last, 10_000), last, 11_000), 'the last event read a second ago: no backlog left to reset it for');
  t.notOk(awaitedAtWindUp({ kind: 'slow-reader', quiet: true }, true, undefined, last, 0), 'a quiet slow reader has no events to fall behind on');
  t.notOk(awaitedAtWindUp(reader, true, undefined, undefined, 0), 'a chain with no event of its accounts');
});
