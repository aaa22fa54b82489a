// The reference push server as a program of its own (dist/publisher/feed/server/main.js), run
// as a real process under the server contract (publisher/feed/CONTRACT.md): a bad environment
// is named and ends it with 64 before anything listens; SIGTERM resets every client and exits 0
// within 2 s; the fault hooks stop it between reading a snapshot and sending it, and end it
// right before an event frame is queued.

import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../../harness/base/free-port.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { formatCursor } from '../../../protocol/feed/cursor.js';
import { SimChain } from '../../../publisher/feed/chain/chain.js';
import { OutboxIndexer } from '../../../publisher/feed/outbox/indexer.js';
import { FeedClient, applyFrames, chainBalances, chainEvents, waitFor } from '../../helpers/feed-lab.js';
import { ROOT } from '../../helpers/feed-rig.js';
import { acceptsOwn } from '../../helpers/feed-server-rig.js';

const MAIN = join(ROOT, 'dist/publisher/feed/server/main.js');

/** A chain and its outbox, written by the project's indexer (the server's only input). */
function outbox(t: Test, blocks: number) {
  const chain = new SimChain({ seed: 9, confirmations: 2, logsPerBlock: { min: 1, max: 3 } });
  const path = join(t.testdir(), 'outbox.db');
  const indexer = new OutboxIndexer(path, { chainId: 1, confirmations: 2, genesis: chain.genesis, genesisBalances: chain.genesisBalances });
  t.teardown(() => indexer.close());
  const mine = (n: number) => {
    for (let i = 0; i < n; i++) indexer.apply(chain.mine());
  };
  mine(blocks);
  const reorg = (depth: number, length: number) => indexer.apply(chain.reorg({ depth, length }));
  return { chain, path, mine, reorg };
}

const environment = (outboxPath: string, port: number): Record<string, string> => ({
  CHAOSLAB_OUTBOX_DB: outboxPath,
  CHAOSLAB_HOST: '127.0.0.1',
  CHAOSLAB_PORT: String(port),
  CHAOSLAB_QUEUE_LIMIT: '100',
  // No heartbeat or idle close during a test: every frame a client gets is one the test is about.
  CHAOSLAB_PING_MS: '600000',
  CHAOSLAB_IDLE_MS: '600000',
  CHAOSLAB_POLL_MS: '50',
});

interface Server {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts main.js with exactly `env` (and PATH); killed in teardown, stopped or not. */
function startServer(t: Test, env: Record<string, string | undefined>): Server {
  const clean = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...clean }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { child, stderr: () => stderr, exited };
}

async function listening(server: Server): Promise<void> {
  await waitFor(() => server.stderr().includes('feed server listening') || server.child.exitCode !== null, 'the server to listen');
  if (server.child.exitCode !== null) throw new Error(`the server exited ${server.child.exitCode}: ${server.stderr()}`);
}

/** Connection attempts until the process has exited: how many a listener of its own accepted (acceptsOwn). */
async function acceptedWhileAlive(port: number, server: Server): Promise<number> {
  let accepted = 0;
  let alive = true;
  void server.exited.then(() => {
    alive = false;
  });
  while (alive) if (await acceptsOwn(server.child.pid!, port)) accepted++;
  return accepted;
}

/** The one-letter state of a process (`T` = stopped), from /proc/<pid>/stat. */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
}

t.test('a bad environment: exit 64, the variable named on stderr, nothing listening', async (t) => {
  const { path } = outbox(t, 3);
  const dir = t.testdir();
  const notSqlite = join(dir, 'not-sqlite.db');
  const notSqliteText = 'this is not a database\n';
  writeFileSync(notSqlite, notSqliteText);
  const otherDb = join(dir, 'other.db');
  new Database(otherDb).exec('CREATE TABLE chain (chain_id INTEGER PRIMARY KEY); INSERT INTO chain VALUES (1)').close();
  const folder = join(dir, 'a-folder.db');
  mkdirSync(folder);
  const required = ['CHAOSLAB_OUTBOX_DB', 'CHAOSLAB_HOST', 'CHAOSLAB_PORT', 'CHAOSLAB_QUEUE_LIMIT', 'CHAOSLAB_PING_MS', 'CHAOSLAB_IDLE_MS', 'CHAOSLAB_POLL_MS'];
  const cases: [string, Record<string, string | undefined>, string][] = [
    ...required.map((name): [string, Record<string, string | undefined>, string] => [`${name} missing`, { [name]: undefined }, name]),
    ...required.map((name): [string, Record<string, string | undefined>, string] => [`${name} empty`, { [name]: '' }, name]),
    ...(
      [
        ['CHAOSLAB_PORT', '65536'],
        ['CHAOSLAB_PORT', '0'],
        ['CHAOSLAB_PORT', 'http'],
        ['CHAOSLAB_PORT', '08080'],
        ['CHAOSLAB_QUEUE_LIMIT', '0'],
        ['CHAOSLAB_QUEUE_LIMIT', '-5'],
        ['CHAOSLAB_PING_MS', '1.5'],
        ['CHAOSLAB_PING_MS', '1e3'],
        ['CHAOSLAB_IDLE_MS', ' 100'],
        ['CHAOSLAB_POLL_MS', '2147483648'],
        ['CHAOSLAB_FAULT', ''],
        ['CHAOSLAB_FAULT', 'raise@event:1'],
        ['CHAOSLAB_FAULT', 'exit@event:0'],
        ['CHAOSLAB_FAULT', 'exit@event:01'],
        ['CHAOSLAB_FAULT', 'exit@apply:1'],
        ['CHAOSLAB_FAULT', 'stop@snapshot'],
        ['CHAOSLAB_FAULT', 'EXIT@event:1'],
        ['CHAOSLAB_FAULT', 'exit@event:1,'],
        ['CHAOSLAB_FAULT', 'exit@event:1, stop@snapshot:1'],
      ] as const
    ).map(([name, value]): [string, Record<string, string | undefined>, string] => [`${name}=${JSON.stringify(value)}`, { [name]: value }, name]),
    ['an outbox that does not exist', { CHAOSLAB_OUTBOX_DB: join(dir, 'missing.db') }, 'CHAOSLAB_OUTBOX_DB'],
    ['an outbox that is not SQLite', { CHAOSLAB_OUTBOX_DB: notSqlite }, 'CHAOSLAB_OUTBOX_DB'],
    ['a database without the outbox tables', { CHAOSLAB_OUTBOX_DB: otherDb }, 'CHAOSLAB_OUTBOX_DB'],
    ['an outbox that is a folder', { CHAOSLAB_OUTBOX_DB: folder }, 'CHAOSLAB_OUTBOX_DB'],
  ];
  const port = await freePort();
  // A few at a time: each is a Node start-up.
  for (let i = 0; i < cases.length; i += 4) {
    await Promise.all(
      cases.slice(i, i + 4).map(async ([what, change, name]) => {
        const server = startServer(t, { ...environment(path, port), ...change });
        const accepted = await acceptedWhileAlive(port, server);
        const { code } = await server.exited;
        t.equal(code, 64, `${what}: exit 64`);
        t.match(server.stderr(), new RegExp(`^feed server: ${name}\\b`), `${what}: stderr names ${name}`);
        t.equal(accepted, 0, `${what}: nothing listened`);
      }),
    );
  }
  t.equal(readFileSync(notSqlite, 'utf8'), notSqliteText, 'a file that is not an outbox is left as it was');

  // Another process's listener on the same port (here this test's own) is not the server's.
  const taken = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const takenPort = (taken.address() as { port: number }).port;
  const server = startServer(t, { ...environment(path, takenPort), CHAOSLAB_QUEUE_LIMIT: '0' });
  t.equal(await acceptedWhileAlive(takenPort, server), 0, 'a port another process listens on: the server itself listened on nothing');
  t.equal((await server.exited).code, 64);
});

t.test('SIGTERM with a client connected: reset shutdown to it, exit 0 within 2 s', async (t) => {
  const { chain, path } = outbox(t, 6);
  const port = await freePort();
  const server = startServer(t, environment(path, port));
  await listening(server);
  const client = await FeedClient.subscribe(port, [...chain.accounts]);
  t.teardown(() => client.destroy());
  const last = chainEvents(chain, chain.accounts, '1:00000000000000:0000').at(-1);
  await client.waitFrames('the snapshot and the events after it', (c) => c.ofOp('event').at(-1)?.cursor === last);
  const sent = performance.now();
  server.child.kill('SIGTERM');
  const { code, signal } = await server.exited;
  const took = performance.now() - sent;
  t.same({ code, signal }, { code: 0, signal: null }, 'exit 0');
  t.ok(took < 2000, `within 2 s (took ${Math.round(took)} ms)`);
  await client.closed;
  t.same(client.data.at(-1), { op: 'reset', reason: 'shutdown' }, 'the last frame the client got');
  t.equal(client.lines.at(-1), '{"op":"reset","reason":"shutdown"}');
});

t.test('stop@snapshot:1: stopped after reading the snapshot, before sending it; rows committed meanwhile still arrive', async (t) => {
  const { chain, path, mine } = outbox(t, 6);
  const port = await freePort();
  const server = startServer(t, { ...environment(path, port), CHAOSLAB_FAULT: 'stop@snapshot:1' });
  t.teardown(() => {
    if (server.child.exitCode === null) server.child.kill('SIGCONT');
  });
  await listening(server);
  const topics = [...chain.accounts];
  const client = await FeedClient.subscribe(port, topics);
  t.teardown(() => client.destroy());
  const pid = server.child.pid!;
  await waitFor(() => processState(pid) === 'T', 'the server to stop itself');
  const safeWhenRead = chain.safeHeight;
  mine(3); // committed while the server is stopped between its snapshot and the frame
  t.equal(processState(pid), 'T', 'still stopped');
  t.same(client.lines, [], 'nothing has arrived while it is stopped');
  server.child.kill('SIGCONT');
  const head = () => chainEvents(chain, topics, '1:00000000000000:0000').at(-1);
  await client.waitFrames('the snapshot, then everything to the new head', (c) => c.ofOp('event').at(-1)?.cursor === head());
  const [snapshot] = client.data;
  t.match(snapshot, { op: 'snapshot', blockHash: chain.canonicalAt(safeWhenRead)!.hash }, 'the first frame is the snapshot read before the stop');
  const snapshotCursor = (snapshot as { cursor: string }).cursor;
  t.same(
    client.ofOp('event').map((e) => e.cursor),
    chainEvents(chain, topics, snapshotCursor),
    'every event after its cursor, the blocks committed during the stop included, each once',
  );
  t.same(applyFrames(client.frames, topics).balances, chainBalances(chain, topics), 'snapshot + events = the chain');
});

t.test('exit@event:2: exit 86 after exactly one event frame', async (t) => {
  const { chain, path } = outbox(t, 6);
  const topics = [...chain.accounts];
  const genesis = formatCursor({ chainId: 1, blockNumber: 0, logIndex: 0 });
  t.ok(chainEvents(chain, topics, genesis).length >= 2, 'at least two events to replay');
  const port = await freePort();
  const server = startServer(t, { ...environment(path, port), CHAOSLAB_FAULT: 'exit@event:2' });
  await listening(server);
  const client = await FeedClient.subscribe(port, topics, genesis, chain.genesis.hash);
  t.teardown(() => client.destroy());
  const { code } = await server.exited;
  t.equal(code, 86);
  await client.closed;
  t.same(
    client.ofOp('event').map((e) => e.cursor),
    chainEvents(chain, topics, genesis).slice(0, 1),
    'the first event only',
  );
  t.same(client.data.length, 1, 'and nothing else');
});

t.test('exit@revoke:1 counts the revoke that answers a subscribe: exit 86 before it is queued', async (t) => {
  const { chain, path, reorg } = outbox(t, 10);
  const topics = [...chain.accounts];
  const held = formatCursor({ chainId: 1, blockNumber: 9, logIndex: 0 });
  const heldHash = chain.canonicalAt(9)!.hash;
  reorg(2, 3); // abandons blocks 9 and 10: the answer to that cursor is a revoke from 9:0000
  const port = await freePort();
  const server = startServer(t, { ...environment(path, port), CHAOSLAB_FAULT: 'exit@revoke:1' });
  await listening(server);
  const client = await FeedClient.subscribe(port, topics, held, heldHash);
  t.teardown(() => client.destroy());
  t.equal((await server.exited).code, 86);
  await client.closed;
  t.same(client.lines, [], 'the revoke was never queued');
});
