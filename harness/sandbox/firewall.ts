// The run namespace's output filter: each sealed consumer's uid may open TCP connections to its
// proxy port(s) only; everything else it sends — other TCP ports (Toxiproxy's API, the
// publisher, the control), UDP, ICMP, over IPv4 or IPv6 — is rejected and counted.
//
//   table inet chaoslab_seal {
//     set allow_61000 { type inet_service; elements = { 41234 } }
//     counter allowed_61000 {}
//     counter rejected_61000 {}
//     chain output {
//       type filter hook output priority filter; policy accept;
//       meta skuid 61000 tcp dport @allow_61000 counter name "allowed_61000" accept
//       meta skuid 61000 meta l4proto tcp counter name "rejected_61000" reject with tcp reset
//       meta skuid 61000 counter name "rejected_61000" reject
//     }
//   }
//
// `inet` covers IPv4 and IPv6 in one table. A TCP attempt is answered with a reset, so the
// consumer sees ECONNREFUSED at once rather than a timeout; other protocols get EPERM/ICMP.
// The allowed ports are a named set, so the proxy port can be added once Toxiproxy has picked
// it (allowPorts). Processes of other uids (the harness, Toxiproxy, the control) are not
// touched. The table is this module's alone: a later feature (packet loss) adds its own table
// or chain to the same namespace. Everything dies with the namespace; removeFirewall() is only
// for a namespace that lives on.
//
// A server under test (issue 31) is a uid with the same rules plus ports it serves: it may answer
// on them, never open a connection from them (a pure SYN, ECN bits or not, is the only way to open
// one; SO_REUSEPORT lets a process bind its listening port to connect out):
//
//     set serve_61450 { type inet_service; elements = { 41300 } }
//     meta skuid 61450 tcp sport @serve_61450 tcp flags & (syn | ack) != syn counter name "allowed_61450" accept

import { spawnSync } from 'node:child_process';
import type { RunNamespace } from './namespace.js';
import { execHere, requireTool } from './tools.js';

export const FIREWALL_TABLE = 'chaoslab_seal';

export interface ConsumerRule {
  uid: number;
  /** TCP ports the uid may connect to (its proxy port). May be empty at first: see allowPorts. */
  allowTcpPorts: readonly number[];
  /** A server's: TCP ports it may answer connections on (its listen port), never connect from. */
  serveTcpPorts?: readonly number[];
}

export interface Counter {
  packets: number;
  bytes: number;
}

export interface UidCounters {
  /** Packets of the uid that went to an allowed port. */
  allowed: Counter;
  /** Packets of the uid that were rejected: an attempt to go around the proxy. */
  rejected: Counter;
}

function checkUid(uid: number): void {
  if (!Number.isInteger(uid) || uid <= 0 || uid > 0xfffffffe) throw new RangeError(`firewall: uid must be a positive integer, not ${uid}`);
}

function checkPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`firewall: port must be 1..65535, not ${port}`);
}

/** The nft script that creates the table (pure; see the module comment for its shape). */
export function firewallRuleset(rules: readonly ConsumerRule[], table = FIREWALL_TABLE): string {
  const lines = [`table inet ${table} {`];
  const elements = (ports: readonly number[]) => (ports.length > 0 ? ` elements = { ${[...new Set(ports)].join(', ')} };` : '');
  for (const { uid, allowTcpPorts, serveTcpPorts } of rules) {
    checkUid(uid);
    allowTcpPorts.forEach(checkPort);
    serveTcpPorts?.forEach(checkPort);
    lines.push(`  set allow_${uid} { type inet_service;${elements(allowTcpPorts)} }`);
    if (serveTcpPorts) lines.push(`  set serve_${uid} { type inet_service;${elements(serveTcpPorts)} }`);
    lines.push(`  counter allowed_${uid} { }`);
    lines.push(`  counter rejected_${uid} { }`);
  }
  lines.push('  chain output {');
  lines.push('    type filter hook output priority filter; policy accept;');
  for (const { uid, serveTcpPorts } of rules) {
    lines.push(`    meta skuid ${uid} tcp dport @allow_${uid} counter name "allowed_${uid}" accept`);
    if (serveTcpPorts) lines.push(`    meta skuid ${uid} tcp sport @serve_${uid} tcp flags & (syn | ack) != syn counter name "allowed_${uid}" accept`);
    lines.push(`    meta skuid ${uid} meta l4proto tcp counter name "rejected_${uid}" reject with tcp reset`);
    lines.push(`    meta skuid ${uid} counter name "rejected_${uid}" reject`);
  }
  lines.push('  }');
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** Where nft runs: a namespace from outside, or this process's own (a sealed run's worker is inside). */
export type NftTarget = Pick<RunNamespace, 'exec'>;

/** This process's own namespace: a sealed run's worker is inside the run's. */
export const NFT_HERE: NftTarget = { exec: execHere };

async function nft(ns: NftTarget, args: readonly string[], input?: string): Promise<string> {
  const result = await ns.exec([requireTool('nft'), ...args], input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`nft ${args.join(' ')} in the run namespace failed: ${result.summary}`);
  return result.stdout;
}

/** Installs the table in the namespace (replacing one of the same name). */
export async function installFirewall(ns: NftTarget, rules: readonly ConsumerRule[], table = FIREWALL_TABLE): Promise<void> {
  if (rules.length === 0) throw new Error('firewall: no consumer rule given');
  // "add" then "delete" makes the delete succeed whether or not the table existed; one transaction.
  const script = `add table inet ${table}\ndelete table inet ${table}\n${firewallRuleset(rules, table)}`;
  await nft(ns, ['-f', '-'], script);
}

/** Lets `uid` (already in the table) also reach `ports`, e.g. the proxy port once it is known. */
export async function allowPorts(ns: NftTarget, uid: number, ports: readonly number[], table = FIREWALL_TABLE): Promise<void> {
  checkUid(uid);
  ports.forEach(checkPort);
  if (ports.length === 0) return;
  await nft(ns, ['add', 'element', 'inet', table, `allow_${uid}`, `{ ${ports.join(', ')} }`]);
}

/**
 * Lets `uid` (a server in the table) answer on `ports` too: its listen port, once known. In this
 * process's own namespace (a sealed run's worker is inside the run's), and synchronously: the
 * port must be open before the server is spawned, or its first SYN-ACK is refused and counted.
 */
export function allowServePortsHere(uid: number, ports: readonly number[], table = FIREWALL_TABLE): void {
  checkUid(uid);
  ports.forEach(checkPort);
  if (ports.length === 0) return;
  const args = ['add', 'element', 'inet', table, `serve_${uid}`, `{ ${ports.join(', ')} }`];
  const result = spawnSync(requireTool('nft'), args, { encoding: 'utf8', timeout: 10_000, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
  if (result.status !== 0) throw new Error(`nft ${args.join(' ')} failed: ${result.error?.message ?? (result.stderr.trim() || `status ${result.status}`)}`);
}

/** Takes `ports` away from `uid` again. */
export async function forbidPorts(ns: NftTarget, uid: number, ports: readonly number[], table = FIREWALL_TABLE): Promise<void> {
  checkUid(uid);
  ports.forEach(checkPort);
  if (ports.length === 0) return;
  await nft(ns, ['delete', 'element', 'inet', table, `allow_${uid}`, `{ ${ports.join(', ')} }`]);
}

/** Counters of every uid in the table, from `nft -j list counters`. */
export async function readFirewallCounters(ns: NftTarget, table = FIREWALL_TABLE): Promise<Map<number, UidCounters>> {
  return parseCounters(await nft(ns, ['-j', 'list', 'counters', 'table', 'inet', table]), table);
}

/** Parses `nft -j list counters` output (exported for tests). */
export function parseCounters(json: string, table = FIREWALL_TABLE): Map<number, UidCounters> {
  const parsed = JSON.parse(json) as { nftables?: Array<{ counter?: { name?: string; table?: string; packets?: number; bytes?: number } }> };
  const byUid = new Map<number, UidCounters>();
  for (const item of parsed.nftables ?? []) {
    const counter = item.counter;
    if (!counter || counter.table !== table || counter.name === undefined) continue;
    const match = /^(allowed|rejected)_(\d+)$/.exec(counter.name);
    if (!match) continue;
    const uid = Number(match[2]);
    const entry = byUid.get(uid) ?? { allowed: { packets: 0, bytes: 0 }, rejected: { packets: 0, bytes: 0 } };
    entry[match[1] as 'allowed' | 'rejected'] = { packets: counter.packets ?? 0, bytes: counter.bytes ?? 0 };
    byUid.set(uid, entry);
  }
  return byUid;
}

/** Whether the table is in the namespace. */
export async function hasFirewall(ns: NftTarget, table = FIREWALL_TABLE): Promise<boolean> {
  const result = await ns.exec([requireTool('nft'), 'list', 'table', 'inet', table]);
  return result.code === 0;
}

/** Removes the table (a namespace that is destroyed takes it along anyway). */
export async function removeFirewall(ns: NftTarget, table = FIREWALL_TABLE): Promise<void> {
  await nft(ns, ['-f', '-'], `add table inet ${table}\ndelete table inet ${table}\n`);
}
