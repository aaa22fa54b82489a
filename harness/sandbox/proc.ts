// Small, synchronous readers of /proc shared by the sandbox modules: one process's stat line,
// which namespaces a process is in, who is in a namespace, who a process's children are. The
// supervisor's poller (processes/process-tree.ts) reads every stat line through them too.
// Every reader returns undefined (or an empty list) for a process that is gone or not ours to
// read: processes come and go between two reads and the callers treat "gone" as an answer.

import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, statSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  comm: string;
  /** R, S, D, T (stopped), t (traced), Z (zombie), X (dead), I (idle). */
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  /** Start time in clock ticks since boot: with the pid, identifies a process uniquely. */
  start: string;
}

export type NamespaceKind = 'net' | 'pid' | 'mnt' | 'user' | 'pid_for_children';

/** One stat line is far shorter (comm holds at most 64 bytes); reused, as a poller reads every process's. */
const STAT_BUFFER = Buffer.allocUnsafe(4096);
const SPACE = 0x20;
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;

/** The fields of a stat line in `bytes[0, length)`, decoding only the fields it returns. */
export function parseStat(pid: number, bytes: Buffer, length = bytes.length): ProcStat | undefined {
  // "pid (comm) state ppid pgrp session tty_nr ... starttime(22nd field) ..."; comm may hold
  // spaces and parentheses, so fields are counted after the last ')'.
  const open = bytes.indexOf(OPEN_PAREN);
  const close = bytes.lastIndexOf(CLOSE_PAREN, length - 1);
  if (open < 0 || close < open) return undefined;
  const fields: string[] = [];
  let from = close + 2;
  while (fields.length < 20 && from < length) {
    let to = bytes.indexOf(SPACE, from);
    if (to < 0 || to > length) to = length;
    fields.push(bytes.toString('latin1', from, to));
    from = to + 1;
  }
  const [state, ppid, pgid, sid] = fields;
  const start = fields[19]?.trimEnd();
  if (state === undefined || ppid === undefined || pgid === undefined || sid === undefined || !start) return undefined;
  const comm = bytes.toString('latin1', open + 1, close);
  return { pid, comm, state, ppid: Number(ppid), pgid: Number(pgid), sid: Number(sid), start };
}

export function readStat(pid: number): ProcStat | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
  } catch {
    return undefined; // gone
  }
  try {
    return parseStat(pid, STAT_BUFFER, readSync(fd, STAT_BUFFER, 0, STAT_BUFFER.length, 0));
  } catch {
    return undefined; // gone between the open and the read
  } finally {
    closeSync(fd);
  }
}

/** A process in this state runs or can run again: not a zombie, not dead. */
export function isRunningState(state: string): boolean {
  return state !== 'Z' && state !== 'X';
}

/** Alive means not gone and not a zombie: a zombie runs nothing and holds nothing but its pid. */
export function isAlive(pid: number, start?: string): boolean {
  const stat = readStat(pid);
  if (stat === undefined || !isRunningState(stat.state)) return false;
  return start === undefined || stat.start === start;
}

/** Every pid on the machine as this process's /proc sees it. */
export function listPids(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code >= 48 && code <= 57) pids.push(Number(name));
  }
  return pids;
}

/** The stat of every process on the machine but those in `skip` (a process gone meanwhile is left out). */
export function scanProcesses(skip?: ReadonlySet<number>): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const pid of listPids()) {
    if (skip?.has(pid)) continue;
    const stat = readStat(pid);
    if (stat) stats.push(stat);
  }
  return stats;
}

/** "net:[4026532281]" for `kind` of `pid`; undefined when the process is gone or a zombie. */
export function namespaceOf(pid: number | 'self', kind: NamespaceKind): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    return undefined;
  }
}

/** `pid`'s pid in each PID namespace it is in, outermost first (the NSpid line); [] when it is gone. */
export function nestedPids(pid: number | 'self'): number[] {
  try {
    const line = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    return line ? line.trim().split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/** Live processes (not zombies) in the namespace `id` of kind `kind`. */
export function pidsInNamespace(kind: NamespaceKind, id: string): number[] {
  const found: number[] = [];
  for (const pid of listPids()) {
    if (namespaceOf(pid, kind) === id && isAlive(pid)) found.push(pid);
  }
  return found;
}

/** Live children of `pid` (a scan of every stat line: /proc/<pid>/task/<tid>/children is not always built in). */
export function childrenOf(pid: number): number[] {
  return scanProcesses()
    .filter((stat) => stat.ppid === pid && isRunningState(stat.state))
    .map((stat) => stat.pid);
}

/** Real uid of a process (the owner of its /proc directory), undefined when gone. */
export function uidOf(pid: number): number | undefined {
  try {
    return statSync(`/proc/${pid}`).uid;
  } catch {
    return undefined;
  }
}

/** argv of a process; empty when gone, a zombie or a kernel thread. */
export function cmdlineOf(pid: number): string[] {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((part, index, all) => part !== '' || index < all.length - 1);
  } catch {
    return [];
  }
}

/** Effective capabilities of this process, from /proc/self/status (0n when unreadable). */
export function effectiveCapabilities(): bigint {
  try {
    const match = /^CapEff:\s*([0-9a-f]+)$/im.exec(readFileSync('/proc/self/status', 'latin1'));
    return match ? BigInt(`0x${match[1]}`) : 0n;
  } catch {
    return 0n;
  }
}

/** Capability numbers (linux/capability.h) the sandbox needs. */
export const CAP = { SETGID: 6, SETUID: 7, KILL: 5, NET_ADMIN: 12, SYS_ADMIN: 21, SYS_PTRACE: 19, CHOWN: 0, DAC_OVERRIDE: 1 } as const;

export function hasCapability(caps: bigint, cap: number): boolean {
  return ((caps >> BigInt(cap)) & 1n) === 1n;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
