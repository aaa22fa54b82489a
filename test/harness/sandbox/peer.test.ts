// The unsealed fallback: for each accepted loopback connection, which process is at the other
// end (via /proc/net/tcp{,6} and /proc/<pid>/fd), so the publisher can tell a connection that
// came through Toxiproxy from one that went around it. No root needed.
import t from 'tap';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import {
  classifyPeer,
  decodeProcAddress,
  findPeerProcess,
  holdsSocket,
  listenerInode,
  listensOnLoopback,
  normaliseAddress,
  type PeerProcess,
  peerOfSocket,
} from '../../../harness/sandbox/peer.js';
import { waitFor } from '../../helpers/sandbox.js';

t.test('addresses as /proc/net writes them', async (t) => {
  t.equal(decodeProcAddress('0100007F:1F90'), '127.0.0.1 8080');
  t.equal(decodeProcAddress('00000000000000000000000001000000:0050'), `${normaliseAddress('::1')} 80`);
  t.equal(decodeProcAddress('0000000000000000FFFF00000100007F:0016'), '127.0.0.1 22', 'IPv4-mapped IPv6 is IPv4');
  t.equal(decodeProcAddress('garbage'), '');
  t.equal(normaliseAddress('::ffff:127.0.0.1'), '127.0.0.1');
  t.equal(normaliseAddress('::FFFF:7f00:1'), '127.0.0.1');
  t.equal(normaliseAddress('0:0:0:0:0:0:0:1'), normaliseAddress('::1'));
  t.equal(normaliseAddress('fe80::1%lo'), 'fe80:0:0:0:0:0:0:1');
  t.equal(normaliseAddress('127.0.0.1'), '127.0.0.1');
});

t.test('classifyPeer', async (t) => {
  const peer = (pid: number, pids = [pid]): PeerProcess => ({ pid, pids, uid: 0, inode: 1, comm: 'x', cmdline: ['python3', 'client.py'] });
  t.equal(classifyPeer(peer(10), { proxyPids: [10] }).kind, 'proxy');
  t.equal(classifyPeer(peer(11), { proxyPids: [10], trustedPids: [11] }).kind, 'trusted');
  const around = classifyPeer(peer(12, [12, 13]), { proxyPids: [10], trustedPids: new Set([11]) });
  t.equal(around.kind, 'around-proxy');
  t.equal(around.detail, 'connected around the proxy: pid 12 (python3 client.py)');
  t.equal(classifyPeer(peer(14, [14, 10]), { proxyPids: [10] }).kind, 'proxy', 'any holder counts');
  t.equal(classifyPeer(undefined, { proxyPids: [10] }).kind, 'unknown');
});

interface Accepted {
  server: Server;
  port: number;
  next(): Promise<Socket>;
}

async function listen(host: string): Promise<Accepted> {
  const waiting: Array<(socket: Socket) => void> = [];
  const queued: Socket[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => {});
    const resolve = waiting.shift();
    if (resolve) resolve(socket);
    else queued.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    server,
    port: (server.address() as { port: number }).port,
    next: () => {
      const socket = queued.shift();
      return socket ? Promise.resolve(socket) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

const children: ChildProcess[] = [];
t.teardown(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** A node process that connects to host:port and stays. */
function client(host: string, port: number): ChildProcess {
  const child = spawn(process.execPath, ['-e', `require('net').connect(${port}, ${JSON.stringify(host)}).on('error', () => {}); setInterval(() => {}, 1000)`], {
    stdio: 'ignore',
  });
  children.push(child);
  return child;
}

/** A tiny TCP relay (a stand-in for Toxiproxy): listens on an ephemeral port, forwards to `port`; prints its port. */
async function relay(port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const net = require('net'); const s = net.createServer((a) => { const b = net.connect(${port}, '127.0.0.1'); a.pipe(b).pipe(a); a.on('error', () => {}); b.on('error', () => {}); }); s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await waitFor('the relay', () => out.includes('\n'), 10_000);
  return { child, port: Number(out.trim()) };
}

t.test('a direct connection is traced to the process that made it', async (t) => {
  const publisher = await listen('127.0.0.1');
  t.teardown(() => publisher.server.close());
  const consumer = client('127.0.0.1', publisher.port);
  const socket = await publisher.next();
  const started = performance.now();
  const peer = peerOfSocket(socket);
  t.comment(`lookup took ${(performance.now() - started).toFixed(1)} ms`);
  t.equal(peer?.pid, consumer.pid, 'the consumer’s pid');
  t.equal(peer?.uid, process.getuid?.(), 'running as us');
  t.match(peer?.cmdline, [process.execPath, '-e', /connect/]);
  const verdict = classifyPeer(peer, { proxyPids: [] });
  t.equal(verdict.kind, 'around-proxy');
  t.match(verdict.detail, new RegExp(`^connected around the proxy: pid ${consumer.pid} \\(`));
  socket.destroy();
});

t.test('through a relay, the peer is the relay (Toxiproxy’s place)', async (t) => {
  const publisher = await listen('127.0.0.1');
  t.teardown(() => publisher.server.close());
  const proxy = await relay(publisher.port);
  const consumer = client('127.0.0.1', proxy.port);
  const socket = await publisher.next();
  const peer = peerOfSocket(socket);
  t.equal(peer?.pid, proxy.child.pid, 'the relay’s pid, not the consumer’s');
  t.not(peer?.pid, consumer.pid);
  t.equal(classifyPeer(peer, { proxyPids: [proxy.child.pid!] }).kind, 'proxy');
  const started = performance.now();
  const quick = peerOfSocket(socket, { candidates: [proxy.child.pid!, process.pid] });
  t.comment(`lookup with the proxy as a candidate took ${(performance.now() - started).toFixed(1)} ms`);
  t.equal(quick?.pid, proxy.child.pid, 'found among the candidates');
  socket.destroy();
});

t.test('IPv6 and IPv4-mapped connections', async (t) => {
  const v6 = await listen('::1').catch(() => undefined);
  if (!v6) return t.plan(0, 'no ::1 here');
  t.teardown(() => v6.server.close());
  const consumer = client('::1', v6.port);
  const socket = await v6.next();
  t.equal(peerOfSocket(socket)?.pid, consumer.pid, 'over ::1');
  socket.destroy();

  const dual = await listen('::');
  t.teardown(() => dual.server.close());
  const mapped = client('127.0.0.1', dual.port);
  const mappedSocket = await dual.next();
  t.match(mappedSocket.remoteAddress, /^(::ffff:)?127\.0\.0\.1$/);
  t.equal(peerOfSocket(mappedSocket)?.pid, mapped.pid, 'a dual-stack listener sees ::ffff:127.0.0.1: still found');
  mappedSocket.destroy();
});

t.test('a socket shared with a forked child names every holder', async (t) => {
  const publisher = await listen('127.0.0.1');
  t.teardown(() => publisher.server.close());
  // bash opens the connection on fd 3 and a background child inherits it
  const parent = spawn('/bin/bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${publisher.port}; sleep 1000 & echo $!; wait`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(parent);
  let out = '';
  parent.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const socket = await publisher.next();
  await waitFor('the child pid', () => out.includes('\n'));
  const sleeper = Number(out.trim());
  children.push({ kill: () => process.kill(sleeper, 'SIGKILL') } as unknown as ChildProcess);
  const peer = peerOfSocket(socket);
  t.same(
    peer?.pids,
    [parent.pid!, sleeper].sort((a, b) => a - b),
    'both the shell and its child hold it',
  );
  socket.destroy();
});

t.test('nothing found for a connection that is not there', async (t) => {
  t.equal(findPeerProcess({ localAddress: '127.0.0.1', localPort: 1, remoteAddress: '127.0.0.1', remotePort: 2 }), undefined);
  const unconnected = { localAddress: undefined, localPort: undefined, remoteAddress: undefined, remotePort: undefined } as unknown as Socket;
  t.equal(peerOfSocket(unconnected), undefined);
});

t.test('the listening socket a server holds, found once and then checked by its fds alone', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const inode = listenerInode(process.pid, '127.0.0.1', port);
  t.type(inode, 'number', 'this process listens there');
  t.equal(listenerInode(process.pid, '127.0.0.1', port === 65535 ? 1 : port + 1), undefined, 'not on the next port');
  t.equal(listenerInode(1, '127.0.0.1', port), undefined, 'nor does another process');
  t.ok(holdsSocket(process.pid, inode!), 'held');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  t.notOk(holdsSocket(process.pid, inode!), 'closed: no longer held');
});

t.test('listensOnLoopback: the process itself, not whoever else listens on the port', async (t) => {
  // Another process listening on a port is what a connection attempt cannot tell apart from the
  // process watched (a test that expects "nothing listened" failed so in CI).
  const other = spawn(process.execPath, ['-e', "const s = require('net').createServer(); s.listen(0, '127.0.0.1', () => console.log(s.address().port));"], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => other.kill('SIGKILL'));
  let printed = '';
  other.stdout!.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8');
  });
  await waitFor('the other process to listen', () => printed.includes('\n'), 30_000);
  const port = Number(printed.trim());
  t.ok(listensOnLoopback(other.pid!, port), 'the process that listens');
  t.notOk(listensOnLoopback(process.pid, port), 'not this one, which could connect there');
  t.notOk(listensOnLoopback(other.pid!, port === 65535 ? 1 : port + 1), 'not on another port');
  for (const host of ['0.0.0.0', '::1']) {
    const server = createServer();
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(0, host, () => resolve(true));
    });
    if (!listening) {
      t.comment(`no ${host} here`);
      continue;
    }
    const mine = (server.address() as { port: number }).port;
    t.ok(listensOnLoopback(process.pid, mine), `listening on ${host} counts`);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    t.notOk(listensOnLoopback(process.pid, mine), `${host}: closed, no longer`);
  }
});
