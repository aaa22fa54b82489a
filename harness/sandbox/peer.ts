// Who is at the other end of an accepted loopback TCP connection: for unsealed runs, where
// nothing stops a consumer from connecting to the publisher directly. The publisher asks, for
// each connection it accepts, which process owns the remote socket; when that is neither
// Toxiproxy nor the control, the connection went around the proxy (a finding).
//
// How (Linux, same network namespace): the remote end of our socket is a socket whose local
// address is our remote one and whose remote address is our local one. /proc/net/tcp and
// /proc/net/tcp6 list every TCP socket of the namespace with its inode; the process holding
// it has a /proc/<pid>/fd/N link reading "socket:[inode]". Only processes of the socket's uid
// (a column of the same line) are scanned. As a non-root harness, /proc/<pid>/fd of other
// users' processes cannot be read, so a peer of another uid is "unknown" — but an unsealed
// consumer runs as the harness's own user, so it is always found.

import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { cmdlineOf, listPids, readStat, uidOf } from './proc.js';

export interface SocketEnds {
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
}

export interface PeerProcess {
  /** The process holding the remote socket (the lowest pid when several share it). */
  pid: number;
  /** Every process holding it (a forked child inherits the socket). */
  pids: number[];
  uid: number;
  inode: number;
  comm: string;
  cmdline: string[];
}

interface TcpRow {
  local: string;
  remote: string;
  state: string;
  uid: number;
  inode: number;
}

/** "127.0.0.1", "::ffff:127.0.0.1" and "::1" in one form (IPv4-mapped addresses as IPv4). */
export function normaliseAddress(address: string): string {
  const lower = address.toLowerCase().replace(/%.*$/, ''); // drop a zone id ("fe80::1%lo")
  return lower.includes(':') ? expandIpv6(lower) : lower;
}

function expandIpv6(address: string): string {
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const parts = v4[1]!.split('.').map(Number);
    text = `${text.slice(0, -v4[1]!.length)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const words = groups.map((g: string) => Number.parseInt(g || '0', 16));
  if (words.length === 8 && words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return `${words[6]! >> 8}.${words[6]! & 0xff}.${words[7]! >> 8}.${words[7]! & 0xff}`;
  }
  return words.map((w) => w.toString(16)).join(':');
}

/** Decodes "0100007F:1F90" (tcp) or a 32-hex-digit address (tcp6) into "address port". */
export function decodeProcAddress(field: string): string {
  const [hex, portHex] = field.split(':');
  if (hex === undefined || portHex === undefined) return '';
  const port = Number.parseInt(portHex, 16);
  const bytes: number[] = [];
  // each 32-bit word is in host byte order (little-endian on the machines this runs on)
  for (let i = 0; i < hex.length; i += 8) {
    const word = hex.slice(i, i + 8);
    for (let j = 6; j >= 0; j -= 2) bytes.push(Number.parseInt(word.slice(j, j + 2), 16));
  }
  let address: string;
  if (bytes.length === 4) {
    address = bytes.join('.');
  } else {
    const words: string[] = [];
    for (let i = 0; i < 16; i += 2) words.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
    address = normaliseAddress(words.join(':'));
  }
  return `${address} ${port}`;
}

/**
 * The kernel's TCP sockets, IPv4's table first, each file read only when the caller asks past
 * the one before: a read of /proc/net/tcp walks the whole connection hash, whatever it holds
 * (5 ms each here for a table of 29 lines), and an IPv4 socket is never in the IPv6 table.
 */
function* tcpRows(): Generator<TcpRow> {
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      yield { local: decodeProcAddress(f[1]!), remote: decodeProcAddress(f[2]!), state: f[3]!, uid: Number(f[7]), inode: Number(f[9]) };
    }
  }
}

/** The first socket that matches, reading no further than it. (Iterator helpers need Node 22.) */
function firstRow(matches: (row: TcpRow) => boolean): TcpRow | undefined {
  for (const row of tcpRows()) if (matches(row)) return row;
  return undefined;
}

function holds(pid: number, needle: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone, or not ours to read
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === needle) return true;
    } catch {}
  }
  return false;
}

/** Pids of `uid` (every uid when undefined) holding socket `inode`. */
export function socketHolders(inode: number, uid?: number): number[] {
  const needle = `socket:[${inode}]`;
  return listPids().filter((pid) => pid !== process.pid && (uid === undefined || uidOf(pid) === uid) && holds(pid, needle));
}

/**
 * The process at the far end of a loopback TCP connection given by its two ends as seen from our
 * side. `candidates` (e.g. Toxiproxy's and the control's pids) are looked at first: when one of
 * them holds the socket, the machine-wide scan of /proc/<pid>/fd (tens of ms as root on a busy
 * machine) is skipped and `pids` lists only the candidates that hold it.
 */
export function findPeerProcess(ends: SocketEnds, options: { candidates?: Iterable<number> } = {}): PeerProcess | undefined {
  const far = `${normaliseAddress(ends.remoteAddress)} ${ends.remotePort}`;
  const near = `${normaliseAddress(ends.localAddress)} ${ends.localPort}`;
  const row = firstRow((r) => r.local === far && r.remote === near && r.inode !== 0);
  if (!row) return undefined;
  const needle = `socket:[${row.inode}]`;
  let pids = [...new Set(options.candidates ?? [])].filter((pid) => holds(pid, needle));
  if (pids.length === 0) pids = socketHolders(row.inode, row.uid);
  pids.sort((a, b) => a - b);
  const pid = pids[0];
  if (pid === undefined) return undefined;
  return { pid, pids, uid: uidOf(pid) ?? row.uid, inode: row.inode, comm: readStat(pid)?.comm ?? '', cmdline: cmdlineOf(pid) };
}

/**
 * The inode of the socket with which process `pid` listens on `address` `port` of this namespace
 * (the server that answers there is that process, not another that took the port first);
 * undefined where it holds none, or /proc/net/tcp cannot be read. Reading /proc/net/tcp walks the
 * kernel's whole socket table, some milliseconds: a later check asks holdsSocket instead.
 */
export function listenerInode(pid: number, address: string, port: number): number | undefined {
  if (!existsSync('/proc/net/tcp')) return undefined;
  const local = `${normaliseAddress(address)} ${port}`;
  // 0A: TCP_LISTEN.
  return firstRow((r) => r.local === local && r.state === '0A' && r.inode !== 0 && holds(pid, `socket:[${r.inode}]`))?.inode;
}

/** Whether process `pid` still holds socket `inode` (its own fds only). */
export function holdsSocket(pid: number, inode: number): boolean {
  return holds(pid, `socket:[${inode}]`);
}

/** Where a server answering at 127.0.0.1 may listen: the loopback (IPv4, IPv6) or every address. */
const LOOPBACK_LISTEN = ['127.0.0.1', '0:0:0:0:0:0:0:1', '0.0.0.0', '0:0:0:0:0:0:0:0'];

/**
 * Pids holding a socket that listens on `port` of this machine's loopback (or every address),
 * lowest first: the server that answers at http://127.0.0.1:<port>. Empty when none can be seen
 * (no /proc, or held by a process we may not read).
 */
export function loopbackListenerPids(port: number): number[] {
  const inodes = [...tcpRows()].filter(listensOnLoopbackPort(port)).map((r) => r.inode);
  return [...new Set(inodes.flatMap((inode) => socketHolders(inode)))].sort((a, b) => a - b);
}

/**
 * Whether process `pid` itself (its own fds) holds a socket listening on `port` of the loopback
 * or every address. Unlike a connection attempt, another process that happens to listen on the
 * same port does not count. It reads /proc/net/tcp, milliseconds of kernel time: confirm an
 * accepted connection with it, do not poll it in a tight loop.
 */
export function listensOnLoopback(pid: number, port: number): boolean {
  const listening = listensOnLoopbackPort(port);
  return firstRow((r) => listening(r) && holdsSocket(pid, r.inode)) !== undefined;
}

function listensOnLoopbackPort(port: number): (row: TcpRow) => boolean {
  const locals = new Set(LOOPBACK_LISTEN.map((address) => `${address} ${port}`));
  // 0A: TCP_LISTEN.
  return (r) => r.state === '0A' && r.inode !== 0 && locals.has(r.local);
}

/** findPeerProcess for an accepted (or connected) net.Socket. */
export function peerOfSocket(socket: Socket, options: { candidates?: Iterable<number> } = {}): PeerProcess | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (localAddress === undefined || localPort === undefined || remoteAddress === undefined || remotePort === undefined) return undefined;
  return findPeerProcess({ localAddress, localPort, remoteAddress, remotePort }, options);
}

export type PeerKind = 'proxy' | 'trusted' | 'around-proxy' | 'unknown';

export interface PeerVerdict {
  kind: PeerKind;
  peer?: PeerProcess;
  /** One line for the journal, e.g. "connected around the proxy: pid 4242 (python3 client.py)". */
  detail: string;
}

/**
 * Classifies an accepted connection: through the proxy (held by a Toxiproxy pid), trusted (the
 * control, or another harness process), around the proxy (anyone else: the consumer or one of its
 * children), or unknown (the owner could not be seen).
 */
export function classifyPeer(peer: PeerProcess | undefined, known: { proxyPids: Iterable<number>; trustedPids?: Iterable<number> }): PeerVerdict {
  if (!peer) return { kind: 'unknown', detail: 'the process at the other end could not be found (gone, or not readable)' };
  const proxy = new Set(known.proxyPids);
  const trusted = new Set(known.trustedPids ?? []);
  const who = `pid ${peer.pid} (${peer.cmdline.join(' ').slice(0, 200) || peer.comm})`;
  if (peer.pids.some((pid) => proxy.has(pid))) return { kind: 'proxy', peer, detail: `through the proxy: ${who}` };
  if (peer.pids.some((pid) => trusted.has(pid))) return { kind: 'trusted', peer, detail: `trusted: ${who}` };
  return { kind: 'around-proxy', peer, detail: `connected around the proxy: ${who}` };
}
