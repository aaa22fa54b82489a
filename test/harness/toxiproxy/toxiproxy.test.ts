// Runs against the REAL toxiproxy-server (scripts/install-toxiproxy.sh makes .tools/bin/toxiproxy-server).
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../../harness/base/paths.js';
import { locateToxiproxyServer, startToxiproxy, type ToxiproxyServer } from '../../../harness/toxiproxy/server.js';
import { REQUEST_TIMEOUT_MS, ToxiproxyAdapter, ToxiproxyApiError, type ProxyHandle } from '../../../harness/toxiproxy/adapter.js';
import { runCleanups } from '../../../harness/base/cleanup.js';
import { tsLoaderArgs } from '../../helpers/ts-loader-args.js';

// ---- helpers ---------------------------------------------------------------------------------

const startedPids = new Set<number>();
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(options: Parameters<typeof startToxiproxy>[0] = {}): Promise<ToxiproxyServer> {
  const server = await startToxiproxy(options);
  if (server.pid !== undefined) startedPids.add(server.pid);
  return server;
}

/** Resolves with the error code of a failed connect (ECONNREFUSED), or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((done) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

/** A TCP client that records what happens to it. */
class Client {
  readonly socket: net.Socket;
  private chunks: Buffer[] = [];
  readonly openedAt = Date.now();
  ended = false;
  errorCode: string | undefined;
  readonly closed: Promise<void>;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.chunks.push(chunk));
    socket.on('end', () => {
      this.ended = true;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.errorCode = error.code ?? error.message;
    });
    this.closed = new Promise((done) => socket.once('close', () => done()));
  }

  static async open(port: number): Promise<Client> {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return new Client(socket);
  }

  get received(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  /** Waits until at least n bytes arrived (or the socket closed, or timeoutMs passed). */
  async waitFor(n: number, timeoutMs = 3000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Buffer.concat(this.chunks).length < n && !this.socket.closed && Date.now() < deadline) await sleep(5);
    return this.received;
  }

  /** Waits until the socket is closed; returns how long it stayed open. */
  async waitClosed(timeoutMs = 3000): Promise<number> {
    const timer = sleep(timeoutMs).then(() => 'timeout' as const);
    const outcome = await Promise.race([this.closed.then(() => 'closed' as const), timer]);
    if (outcome === 'timeout') throw new Error(`socket still open after ${timeoutMs} ms`);
    return Date.now() - this.openedAt;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Echo server on 127.0.0.1 that tolerates resets. */
async function echoServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

// ---- shared real server ----------------------------------------------------------------------

let server: ToxiproxyServer;
let adapter: ToxiproxyAdapter;
let echo: Awaited<ReturnType<typeof echoServer>>;
let proxySeq = 0;
const newProxy = (label: string): Promise<ProxyHandle> => adapter.createProxy(`chaoslab-test-${label}-${++proxySeq}`, { host: '127.0.0.1', port: echo.port });

// Never let the shared URL of a developer's environment leak into these tests.
const savedUrl = process.env.TOXIPROXY_URL;
delete process.env.TOXIPROXY_URL;

t.before(async () => {
  server = await start();
  adapter = new ToxiproxyAdapter(server.url);
  echo = await echoServer();
});

t.teardown(async () => {
  await echo?.close();
  await server?.stop();
  if (savedUrl !== undefined) process.env.TOXIPROXY_URL = savedUrl;
  for (const pid of startedPids) {
    if (isAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      throw new Error(`toxiproxy-server pid ${pid} outlived the tests`);
    }
  }
});

// ---- lifecycle -------------------------------------------------------------------------------

t.test('locates the project-local binary and the project root', async (t) => {
  const root = projectRoot;
  t.equal(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name, 'chaoslab');
  const saved = process.env.TOXIPROXY_SERVER;
  delete process.env.TOXIPROXY_SERVER;
  try {
    t.equal(locateToxiproxyServer(), join(root, '.tools', 'bin', 'toxiproxy-server'));
  } finally {
    if (saved !== undefined) process.env.TOXIPROXY_SERVER = saved;
  }
  t.throws(
    () => locateToxiproxyServer('/nonexistent/toxiproxy-server'),
    /not an executable file[\s\S]*make setup[\s\S]*install-toxiproxy\.sh[\s\S]*TOXIPROXY_URL/,
  );
});

t.test('start/stop: real server on 127.0.0.1, version, process and port gone after stop', async (t) => {
  const own = await start();
  t.equal(own.owned, true);
  t.match(own.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(own.version, '2.12.0', 'pinned version reported by GET /version');
  t.ok(own.pid !== undefined && isAlive(own.pid), 'process running');
  t.equal(await new ToxiproxyAdapter(own.url).version(), '2.12.0', 'adapter reads the same version');
  t.ok(
    own.logTail().some((line) => line.includes('Starting Toxiproxy')),
    'log captured',
  );
  const port = Number(new URL(own.url).port);

  await own.stop();
  t.notOk(isAlive(own.pid!), 'process gone');
  t.equal(await tryConnect(port), 'ECONNREFUSED', 'API port closed');
  await own.stop(); // idempotent
  t.pass('second stop() is a no-op');
});

t.test('start failure: log tail in the error, process killed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaoslab-tp-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pidFile = join(dir, 'pid');

  // Not a server: a stand-in that never answers, to exercise the timeout path.
  const silent = join(dir, 'silent');
  writeFileSync(silent, `#!/bin/sh\necho $$ > ${pidFile}\necho "silent stand-in says hello"\nexec sleep 30\n`);
  chmodSync(silent, 0o755);
  const started = Date.now();
  await t.rejects(start({ binary: silent, readyTimeoutMs: 600 }), /did not answer within 600 ms[\s\S]*silent stand-in says hello/);
  t.ok(Date.now() - started < 5000, 'gave up in time');
  const pid = Number(readFileSync(pidFile, 'utf8'));
  t.notOk(isAlive(pid), 'stand-in killed');

  // One that reports a failed bind (as toxiproxy does, without exiting): retried, then reported.
  const busy = join(dir, 'busy');
  writeFileSync(
    busy,
    `#!/bin/sh\necho '{"level":"error","error":"listen tcp: bind: address already in use","message":"Server finished with error"}'\nexec sleep 30\n`,
  );
  chmodSync(busy, 0o755);
  await t.rejects(start({ binary: busy, logLevel: 'warn' as never }), /log level must be trace, debug or info/);
  const lines: string[] = [];
  await t.rejects(start({ binary: busy, log: (line) => lines.push(line) }), /could not bind its API port[\s\S]*address already in use/);
  t.equal(lines.length, 4, 'tried four ports');
});

t.test('TOXIPROXY_URL: uses the running server, owned=false, stop does nothing', async (t) => {
  const theirs = await start();
  t.teardown(() => theirs.stop());
  process.env.TOXIPROXY_URL = `${theirs.url}/`;
  try {
    const used = await start({ binary: '/nonexistent/should-not-be-used' });
    t.equal(used.owned, false);
    t.equal(used.url, theirs.url, 'trailing slash dropped');
    t.equal(used.version, '2.12.0');
    t.equal(used.pid, theirs.pid, 'its process found by the API port it listens on');
    t.match(used.identity, new RegExp(`its process is pid ${theirs.pid}`));
    const own = await start({ own: true });
    t.equal(own.owned, true, 'own: true starts a server of its own all the same (a sealed run)');
    t.not(own.url, theirs.url);
    await own.stop();
    await used.stop();
    t.ok(isAlive(theirs.pid!), 'server still running after stop()');
    t.equal(await new ToxiproxyAdapter(theirs.url).version(), '2.12.0', 'still answers');
  } finally {
    delete process.env.TOXIPROXY_URL;
  }
  const explicit = await start({ url: theirs.url });
  t.equal(explicit.owned, false, 'url option works the same way');
  await t.rejects(start({ url: `http://127.0.0.1:${await closedPort()}` }), /does not answer GET \/version.*ECONNREFUSED/);
});

// ---- proxies and toxics ----------------------------------------------------------------------

t.test('proxy on an ephemeral port forwards bytes both ways', async (t) => {
  const proxy = await newProxy('fwd');
  t.teardown(() => proxy.remove());
  t.equal(proxy.listen.host, '127.0.0.1');
  t.ok(proxy.listen.port > 0, `server bound a real port (${proxy.listen.port})`);
  t.not(proxy.listen.port, echo.port);
  const info = await proxy.info();
  t.same(info.listen, proxy.listen, 'GET agrees with the create response');
  t.equal(info.enabled, true);
  t.equal(info.upstream, `127.0.0.1:${echo.port}`);

  const client = await Client.open(proxy.listen.port);
  client.socket.write('hello through toxiproxy');
  t.equal(await client.waitFor(23), 'hello through toxiproxy');
  client.destroy();
});

t.test('toxics: add, list, remove; latency delays', async (t) => {
  const proxy = await newProxy('lat');
  t.teardown(() => proxy.remove());
  const added = await proxy.addToxic({ name: 'slow', type: 'latency', stream: 'downstream', attributes: { latency: 1000 } });
  t.same(added, { name: 'slow', type: 'latency', stream: 'downstream', toxicity: 1, attributes: { latency: 1000, jitter: 0 } });
  await proxy.addToxic({ name: 'thin', type: 'bandwidth', stream: 'upstream', toxicity: 0.5, attributes: { rate: 1000 } });
  const listed = await proxy.toxics();
  t.same(listed.map((x) => x.name).sort(), ['slow', 'thin']);
  t.equal(listed.find((x) => x.name === 'thin')?.toxicity, 0.5);
  await proxy.removeToxic('thin');

  const slow = await Client.open(proxy.listen.port);
  let sent = Date.now();
  slow.socket.write('ping');
  await slow.waitFor(4);
  const delayed = Date.now() - sent;
  t.ok(delayed >= 980, `latency toxic delayed the echo (${delayed} ms)`);

  await proxy.removeToxic('slow');
  t.same(await proxy.toxics(), [], 'no toxics left');
  sent = Date.now();
  slow.socket.write('pong'); // same connection: removal applies to open connections
  await slow.waitFor(8);
  const fast = Date.now() - sent;
  // 1 s of latency against an echo that takes milliseconds: far apart even on a loaded machine.
  t.ok(fast < 500, `no delay after removal (${fast} ms)`);
  slow.destroy();
});

t.test('limit_data cuts the connection after N bytes', async (t) => {
  const proxy = await newProxy('limit');
  t.teardown(() => proxy.remove());
  await proxy.addToxic({ name: 'cut', type: 'limit_data', stream: 'downstream', attributes: { bytes: 10 } });
  const client = await Client.open(proxy.listen.port);
  client.socket.write('0123456');
  await client.waitFor(7);
  client.socket.write('789abcdef');
  await client.waitClosed();
  t.equal(client.received, '0123456789', 'exactly 10 bytes delivered');
  t.equal(client.ended, true, 'closed with FIN');
  t.equal(client.errorCode, undefined);
});

t.test('reset_peer resets the connection on the first data', async (t) => {
  const proxy = await newProxy('reset');
  t.teardown(() => proxy.remove());
  await proxy.addToxic({ name: 'rst', type: 'reset_peer', stream: 'upstream', attributes: { timeout: 0 } });
  const client = await Client.open(proxy.listen.port);
  await sleep(50);
  t.equal(client.socket.closed, false, 'still open before any data');
  client.socket.write('boom');
  await client.waitClosed();
  t.equal(client.errorCode, 'ECONNRESET');
  t.equal(client.received, '', 'data dropped');
});

t.test('timeout stops data and closes after the timeout', async (t) => {
  const proxy = await newProxy('timeout');
  t.teardown(() => proxy.remove());
  await proxy.addToxic({ name: 'stall', type: 'timeout', stream: 'downstream', attributes: { timeout: 300 } });
  const client = await Client.open(proxy.listen.port);
  client.socket.write('anyone?');
  const openMs = await client.waitClosed();
  t.ok(openMs >= 250 && openMs < 2000, `closed after ~300 ms (${openMs} ms)`);
  t.equal(client.received, '', 'nothing got through');
});

t.test('disable closes open connections and refuses new ones; enable restores the same port', async (t) => {
  const proxy = await newProxy('toggle');
  t.teardown(() => proxy.remove());
  const open = await Client.open(proxy.listen.port);
  open.socket.write('x');
  t.equal(await open.waitFor(1), 'x');

  await proxy.setEnabled(false);
  await open.waitClosed();
  t.pass('open connection closed by disable');
  t.equal(open.ended, true, 'with FIN, not RST');
  t.equal(await tryConnect(proxy.listen.port), 'ECONNREFUSED', 'new connections refused');
  t.equal((await proxy.info()).enabled, false);

  await proxy.setEnabled(true);
  t.same((await proxy.info()).listen, proxy.listen, 'same listen address after re-enable');
  const again = await Client.open(proxy.listen.port);
  again.socket.write('back');
  t.equal(await again.waitFor(4), 'back');
  again.destroy();
});

t.test('remove: proxy gone, port closed, errors name proxy and status', async (t) => {
  const proxy = await newProxy('gone');
  const open = await Client.open(proxy.listen.port);
  await proxy.remove();
  await open.waitClosed();
  t.pass('open connection closed by removal');
  t.notOk(
    (await adapter.listProxies()).some((p) => p.name === proxy.name),
    'not listed',
  );
  t.equal(await tryConnect(proxy.listen.port), 'ECONNREFUSED');
  await proxy.remove();
  t.pass('second remove() is a no-op');

  const error = await proxy.addToxic({ name: 'late', type: 'latency', stream: 'downstream', attributes: { latency: 1 } }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(error, ToxiproxyApiError);
  const apiError = error as ToxiproxyApiError;
  t.equal(apiError.status, 404);
  t.equal(apiError.serverMessage, 'proxy not found');
  t.match(
    apiError.message,
    `toxiproxy: add toxic "late" on proxy "${proxy.name}" failed: HTTP 404: proxy not found (POST ${server.url}/proxies/${proxy.name}/toxics)`,
  );
  await t.rejects(proxy.setEnabled(true), { name: 'ToxiproxyApiError', status: 404, message: new RegExp(`enable proxy "${proxy.name}" failed: HTTP 404`) });
  await t.rejects(proxy.toxics(), { name: 'ToxiproxyApiError', status: 404, message: /list toxics of proxy "chaoslab-test-gone-\d+" failed: HTTP 404/ });
});

t.test('more errors: duplicate toxic, unknown toxic, bad type, bad name, duplicate proxy, unreachable server', async (t) => {
  const proxy = await newProxy('errors');
  t.teardown(() => proxy.remove());
  await proxy.addToxic({ name: 'dup', type: 'latency', stream: 'upstream', attributes: { latency: 1 } });
  await t.rejects(proxy.addToxic({ name: 'dup', type: 'latency', stream: 'upstream', attributes: { latency: 1 } }), {
    status: 409,
    message: /add toxic "dup" on proxy "chaoslab-test-errors-\d+" failed: HTTP 409: toxic already exists/,
  });
  await t.rejects(proxy.removeToxic('nope'), { status: 404, message: /remove toxic "nope" on proxy .*HTTP 404: toxic not found/ });
  await t.rejects(proxy.addToxic({ name: 'weird', type: 'bogus' as never, stream: 'upstream', attributes: {} }), {
    name: 'ToxiproxyApiError',
    status: 400,
    serverMessage: 'invalid toxic type',
  });
  await t.rejects(adapter.createProxy('bad name/with slash', { host: '127.0.0.1', port: 1 }), /invalid proxy name/);
  await t.rejects(adapter.createProxy(proxy.name, { host: '127.0.0.1', port: echo.port }), {
    status: 409,
    message: /create proxy "chaoslab-test-errors-\d+" failed: HTTP 409: proxy already exists/,
  });
  await t.rejects(new ToxiproxyAdapter(`http://127.0.0.1:${await closedPort()}`).version(), /read version failed: cannot reach the server \(ECONNREFUSED\)/);
});

t.test('removeAllWithPrefix removes only matching proxies', async (t) => {
  const a = await adapter.createProxy('chaoslab-sweep-a', { host: '127.0.0.1', port: echo.port });
  const b = await adapter.createProxy('chaoslab-sweep-b', { host: '127.0.0.1', port: echo.port });
  const keep = await newProxy('keep');
  t.teardown(() => keep.remove());
  t.same(await adapter.removeAllWithPrefix('chaoslab-sweep-'), ['chaoslab-sweep-a', 'chaoslab-sweep-b']);
  const names = (await adapter.listProxies()).map((p) => p.name);
  t.notOk(names.includes(a.name) || names.includes(b.name));
  t.ok(names.includes(keep.name));
  await a.remove(); // already gone on the server: still fine
  await b.remove();
  await t.rejects(adapter.removeAllWithPrefix(''), /empty prefix/);
});

// ---- cleanup integration (kept last: runCleanups() also ends the shared server) ---------------

/** Takes `port` for a plain HTTP server that records what it is asked (retrying while the port is still held). */
async function impostorOn(port: number, asked: string[]): Promise<http.Server> {
  const impostor = http.createServer((request, response) => {
    asked.push(`${request.method} ${request.url}`);
    response.end('{"version": "2.12.0"}');
  });
  for (let i = 0; i < 250 && !impostor.listening; i++) {
    const outcome = await new Promise<'up' | 'busy'>((done) => {
      impostor.once('listening', () => done('up'));
      impostor.once('error', () => done('busy'));
      impostor.listen(port, '127.0.0.1');
    });
    impostor.removeAllListeners('listening').removeAllListeners('error');
    if (outcome === 'busy') await sleep(20);
  }
  return impostor;
}

t.test('identity: a server whose API port another process took is never talked to', async (t) => {
  const own = await start();
  const port = Number(new URL(own.url).port);
  t.equal(own.identityProblem(true), undefined, 'alive, and holding its API port');
  t.match(own.identity, new RegExp(`^checked: pid ${own.pid} holds the listening socket of port ${port}`));
  const checked = new ToxiproxyAdapter(own.url, (thorough) => own.identityProblem(thorough));
  t.equal(await checked.version(), '2.12.0', 'the real server answers through the check');

  // It dies (a hostile unsealed consumer, a crash), and another process takes its port.
  process.kill(own.pid!, 'SIGKILL');
  const asked: string[] = [];
  const impostor = await impostorOn(port, asked);
  t.teardown(() => void impostor.close());
  t.ok(impostor.listening, 'the impostor holds the port');
  t.match(own.identityProblem(false), new RegExp(`^toxiproxy-server pid ${own.pid} \\(${own.url}\\), the one this run started, is gone`));
  await t.rejects(checked.listProxies(), { name: 'ToxiproxyIdentityError', message: /^toxiproxy: list proxies not sent: toxiproxy-server pid \d+ .* is gone/ });
  await t.rejects(checked.createProxy('chaoslab-impostor', { host: '127.0.0.1', port: echo.port }), { name: 'ToxiproxyIdentityError' });
  t.same(asked, [], 'not one request reached the impostor');

  // Unchecked (an external TOXIPROXY_URL: the user's choice), whatever answers is believed.
  t.equal(await new ToxiproxyAdapter(own.url).version(), '2.12.0');
  t.same(asked, ['GET /version'], 'an unchecked adapter would have talked to it');
  await own.stop();
});

t.test('identity: an external server is not checked, and says so', async (t) => {
  const external = await startToxiproxy({ url: server.url });
  t.equal(external.identityProblem(true), undefined);
  t.match(external.identity, /^not checked: a server run by the user \(url option\)/);
});

t.test('a call the server never answers fails after REQUEST_TIMEOUT_MS, naming it', async (t) => {
  const silent = net.createServer(() => {}); // accepts, never answers
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  t.teardown(() => void silent.close());
  const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const from = Date.now();
  await t.rejects(new ToxiproxyAdapter(url).listProxies(), { message: new RegExp(`no answer within ${REQUEST_TIMEOUT_MS} ms`) });
  const took = Date.now() - from;
  t.ok(took >= REQUEST_TIMEOUT_MS - 50 && took < REQUEST_TIMEOUT_MS + 2000, `failed after ${took} ms`);
});

t.test('SIGTERM to the harness process stops its server (cleanup registry)', async (t) => {
  const serverModule = new URL('../../../harness/toxiproxy/server.ts', import.meta.url).href;
  const loaderArgs = tsLoaderArgs();
  const script = [
    `import { startToxiproxy } from ${JSON.stringify(serverModule)};`,
    `delete process.env.TOXIPROXY_URL;`,
    `const s = await startToxiproxy();`,
    `process.stdout.write(JSON.stringify({ pid: s.pid }) + '\\n');`,
    `setInterval(() => {}, 1000);`,
  ].join('\n');
  const child = spawn(process.execPath, [...loaderArgs, '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // Transpiling server.ts through tap's loader and starting the Go server takes seconds on a busy CI machine.
  const deadline = Date.now() + 90_000;
  while (!out.includes('\n') && child.exitCode === null && Date.now() < deadline) await sleep(20);
  const pid = (JSON.parse(out.split('\n')[0] || '{}') as { pid?: number }).pid;
  t.ok(pid !== undefined, `child started a server (stderr: ${err.slice(0, 300)})`);
  if (pid === undefined) {
    child.kill('SIGKILL');
    return;
  }
  startedPids.add(pid);
  t.ok(isAlive(pid), 'server running');
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 143, 'harness exited via its SIGTERM handler');
  t.notOk(isAlive(pid), 'server stopped by the cleanup');
});

t.test('runCleanups removes proxies first, then stops owned servers', async (t) => {
  const lines: string[] = [];
  const own = await start({ log: (line) => lines.push(line) });
  const ownAdapter = new ToxiproxyAdapter(own.url);
  const proxy = await ownAdapter.createProxy('chaoslab-cleanup-probe', { host: '127.0.0.1', port: echo.port });
  const complaints: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    complaints.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await runCleanups();
  } finally {
    process.stderr.write = write;
  }
  t.same(complaints, [], 'no cleanup failed');
  t.notOk(isAlive(own.pid!), 'owned server stopped');
  t.notOk(isAlive(server.pid!), 'shared server stopped too');
  const terminated = lines.findIndex((l) => l.includes('Terminated proxy') && l.includes(proxy.name));
  const shutdown = lines.findIndex((l) => l.includes('Shutdown started'));
  t.ok(terminated >= 0 && shutdown > terminated, 'proxy deleted through the API before the server shut down');
  await proxy.remove().catch(() => undefined);
});
