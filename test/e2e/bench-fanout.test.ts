// make bench §5's tooling on a few connections, with real processes and sockets (so an e2e
// file): the load client speaks the feed protocol to the real feed server
// (bench/fanout-publisher.mjs) and to the plain floor server, reads every event, joins each live
// read with its block's time, and leaves nothing behind; a reset reader ends the wait (against a
// stand-in server). Counts only, no timing.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

// bench/ is plain JavaScript beside dist/ (bench tooling, not shipped): imported by URL, untyped.
const fanout = await import(new URL('../../bench/fanout.mjs', import.meta.url).href);

const dir = mkdtempSync(join(tmpdir(), 'chaoslab-fanout-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('replay: every connection reads the whole stream, from the feed server and from the floor', async (t) => {
  for (const mode of ['replay', 'raw']) {
    const run = await fanout.fanOutRun({ mode, connections: 3, events: 100, dir });
    t.equal(run.client.incomplete, undefined, `${mode}: complete`);
    t.equal(run.client.events, 300, `${mode}: 3 connections x 100 events`);
    t.same(run.client.resets, {}, `${mode}: no reset`);
    t.equal(run.client.closedEarly, 0);
    t.equal(run.client.other, 0, `${mode}: only events (and pongs, pings)`);
    t.ok(run.client.eventsPerSec > 0);
    t.ok(run.publisher.maxRssMiB >= run.publisher.rssMiB && run.publisher.rssMiB > 20, `${mode}: the publisher's memory (a Node process with SQLite)`);
    t.same(readdirSync(dir), [], `${mode}: the outbox is removed`);
  }
});

t.test('live: a snapshot each, then every live event with its delivery lag', async (t) => {
  // 40 blocks, one every 75 ms: 3 s, well past the client's first ping (at most 1.5 s in).
  const run = await fanout.fanOutRun({ mode: 'live', connections: 2, blocks: 40, intervalMs: 75, dir });
  const { client } = run;
  t.equal(client.incomplete, undefined);
  t.equal(client.snapshots, 2);
  t.equal(client.expected, 2 * 40 * fanout.LIVE_LOGS_PER_BLOCK, 'two connections x 40 blocks x their events');
  t.equal(client.lag.n, client.expected, 'one lag per live event read');
  t.ok(client.lag.p50 <= client.lag.p99 && client.lag.p99 <= client.lag.max, 'p50 ≤ p99 ≤ max');
  t.ok(client.lag.p50 >= 0, 'read after written, on one clock');
  t.same(client.resets, {});
  t.ok(client.pongs > 0, 'the client pinged the server while it only read, and counted its pongs');
  t.equal(client.other, 0);
  t.same(readdirSync(dir), []);
});

t.test('withFileLimit: the same argv when the limit suffices, else raised where the hard limit allows', async (t) => {
  const soft = Number(execFileSync('bash', ['-c', 'ulimit -Sn'], { encoding: 'utf8' }));
  const probe = ['bash', '-c', 'ulimit -Sn'];
  t.same(fanout.withFileLimit(probe, soft), { argv: probe });
  const raised = fanout.withFileLimit(probe, soft + 1);
  if (raised.refused) t.match(raised.refused, /needs ulimit -n ≥ \d+, the hard limit here is \d+ and cannot be raised/);
  else {
    const [cmd, ...args] = raised.argv;
    t.equal(Number(execFileSync(cmd, args, { encoding: 'utf8' })), soft + 1, 'the child runs with the raised limit');
    t.equal(raised.raised, `ulimit -n raised from ${soft} to ${soft + 1}`);
  }
});

t.test('a publisher that cannot start: the error names the run and the process, and ends with what it wrote to stderr', async (t) => {
  await t.rejects(
    fanout.fanOutRun({ mode: 'replay', connections: 2, events: 20, dir: join(dir, 'no-such-folder') }),
    /^fan-out replay run, 2 connections \(publisher exit 1, client not started\): closed before a line with "port"\npublisher's stderr ended:\n[\s\S]*Cannot open database because the directory does not exist/,
  );
});

t.test('live: a reader the server resets ends the run once the others have read everything, not at the timeout', async (t) => {
  // A stand-in server: a snapshot to each subscriber; then, per block the test announces, an
  // event to the first connection and a reset (left open) to the second.
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.once('data', () => socket.write('{"op":"snapshot","cursor":"1:00000000000000:0000","blockHash":"0x00","balances":{}}\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const client = spawn('node', [
    'bench/fanout-client.mjs',
    '--port',
    String(port),
    '--connections',
    '2',
    '--topics',
    'a',
    '--mode',
    'live',
    '--timeout-s',
    '120',
  ]);
  t.teardown(() => client.kill());
  const lines = createInterface({ input: client.stdout });
  const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
  t.same(JSON.parse(await next()), { ready: true }, 'both subscribed');
  const ms = () => Number(process.hrtime.bigint()) / 1e6;
  client.stdin.write(`${JSON.stringify({ block: 1, t: ms(), events: 1 })}\n`);
  sockets[0]!.write('{"op":"event","cursor":"1:00000000000001:0000","type":"Transfer","payload":{}}\n');
  sockets[1]!.write('{"op":"reset","reason":"slow-consumer"}\n');
  await new Promise((r) => setTimeout(r, 200));
  client.stdin.write('{"mined":true}\n');
  const result = JSON.parse(await next());
  t.equal(result.incomplete, '1 reset of 2 readers before the stream was read');
  t.same(result.resets, { 'slow-consumer': 1 });
  t.equal(result.lag.n, 1, "the other reader's event was timed");
  const [code] = await once(client, 'exit');
  t.equal(code, 0);
  for (const socket of sockets) socket.destroy();
});
