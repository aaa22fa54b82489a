// The room's disk quota: a size-limited tmpfs mounted at the room's path for the run, its content
// copied onto the disk at the end (so reports and later inspection see the same files) and the
// tmpfs unmounted.
//
// Why tmpfs and not a loop-mounted image: a mount takes ~2 ms and no disk until the end; the
// size, inode count, owner and mode are mount options; nothing needs mkfs, a loop device or a
// file to delete. Its pages are RAM (no swap here), charged to the memory cgroup of the process
// that wrote them (the consumer's, 2 GiB), so the quota × the rooms of the running runs bounds
// what it can take from the machine. Hard links out of it cannot exist (another filesystem).
//
// Every mount's source names the process that made it ("chaoslab-room-<pid>-<start time>"), as
// cgroup folders do: a harness (or worker) killed with SIGKILL leaves its mounts, and the next
// one keeps their content and unmounts them (sweepStaleRoomMounts).
//
// Hitting the quota is ENOSPC inside; the harness sees it as a room without free space (or
// files) when it samples the room (at each consumer exit, on a timer, and at the end).

import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readFileSync, renameSync, rmSync, rmdirSync, statfsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isAlive, readStat } from './proc.js';
import { closeRoom } from './room.js';
import { requireTool, runTool } from './tools.js';

const MiB = 1024 ** 2;

/** Default quota of a consumer's room: ~100× what the references' largest rooms hold (docs/sandbox.md). */
export const DEFAULT_ROOM_QUOTA_BYTES = 256 * MiB;
/** Files (inodes) a room may hold: a flood of empty files is bounded too. */
export const ROOM_INODES = 16_384;
/** "Full" when less than this share of the quota is free (a tmpfs allocates whole pages). */
const FULL_SHARE = 0.01;

const SOURCE = /^chaoslab-room-(\d+)-(\d+)$/;

/** The mount source that names this process as the room's owner. */
function ownSource(): string {
  return `chaoslab-room-${process.pid}-${readStat(process.pid)?.start ?? '0'}`;
}

/** Mounts a tmpfs of `quotaBytes` at `room` (an existing empty folder): uid:gid's, mode 0700, nosuid, nodev. */
export function mountRoomFs(room: string, uid: number, gid: number, quotaBytes: number): void {
  if (!Number.isInteger(quotaBytes) || quotaBytes < 4096) throw new RangeError(`room quota must be a whole number of bytes >= 4096, not ${quotaBytes}`);
  const options = `nosuid,nodev,size=${quotaBytes},nr_inodes=${ROOM_INODES},mode=0700,uid=${uid},gid=${gid}`;
  execFileSync(requireTool('mount'), ['-t', 'tmpfs', '-o', options, ownSource(), room], { stdio: ['ignore', 'ignore', 'pipe'] });
}

export interface RoomUsage {
  usedBytes: number;
  usedFiles: number;
  /** Free space below 1 % of the quota, or no inode left: writes failed or were about to. */
  full: boolean;
}

/** What a mounted room holds now; undefined when it is not there. */
export function roomUsage(room: string): RoomUsage | undefined {
  try {
    const s = statfsSync(room);
    const total = s.blocks * s.bsize;
    const free = s.bavail * s.bsize;
    return { usedBytes: total - free, usedFiles: s.files - s.ffree, full: free < total * FULL_SHARE || s.ffree === 0 };
  } catch {
    return undefined;
  }
}

/**
 * After the run (no process of the consumer's uid left): copies the tmpfs's content to the disk
 * without following links (`cp -a`: owners, modes, hard links, fifos kept; zeros stored as holes),
 * unmounts it, and puts the copy at the room's path. The unmount happens whatever the copy did;
 * returns what went wrong, if anything.
 */
export async function keepRoomFs(room: string): Promise<string | undefined> {
  const stage = join(dirname(room), `.${basename(room)}.kept`);
  rmSync(stage, { recursive: true, force: true });
  const copy = await runTool([requireTool('cp'), '-a', '--sparse=always', '--no-target-directory', room, stage], { timeoutMs: 120_000 });
  const problems: string[] = [];
  if (copy.code !== 0) problems.push(`copying the room out of its tmpfs: ${copy.summary}`);
  const unmounted = await unmount(room);
  if (unmounted !== undefined) problems.push(unmounted);
  else if (existsSync(stage)) {
    rmdirSync(room); // the empty folder the tmpfs was mounted on
    renameSync(stage, room);
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}

async function unmount(path: string): Promise<string | undefined> {
  const plain = await runTool([requireTool('umount'), path]);
  if (plain.code === 0) return undefined;
  // Busy (a file still open): detach it now; the kernel frees it when the last file closes.
  const lazy = await runTool([requireTool('umount'), '--lazy', path]);
  return lazy.code === 0 ? undefined : `unmounting the room ${path}: ${plain.summary}`;
}

export interface RoomMount {
  path: string;
  /** The pid and start time of the process that mounted it. */
  owner: { pid: number; start: string };
}

/** Mount points escape space, tab, newline and backslash as \ooo in mountinfo. */
const unescapeMount = (field: string): string => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/** Every room tmpfs mounted on this machine (this mount namespace), from /proc/self/mountinfo. */
export function roomMounts(mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): RoomMount[] {
  const found: RoomMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const [fsType, source] = right.split(' ');
    const match = fsType === 'tmpfs' && source !== undefined ? SOURCE.exec(source) : null;
    const path = left.split(' ')[4];
    if (match && path !== undefined) found.push({ path: unescapeMount(path), owner: { pid: Number(match[1]), start: match[2]! } });
  }
  return found;
}

/**
 * Keeps, unmounts and hands to root the rooms whose mounting process is gone (a SIGKILLed
 * harness or worker), or, with `owner`, those that process made. Each room is made root's and
 * 0700 first: a process of the same uid (leased again since) cannot reach it while it is
 * copied. Returns the rooms swept, and what went wrong with each.
 */
export async function sweepStaleRoomMounts(owner?: number): Promise<{ path: string; problem?: string }[]> {
  const swept: { path: string; problem?: string }[] = [];
  for (const mount of roomMounts()) {
    if (owner !== undefined ? mount.owner.pid !== owner : isAlive(mount.owner.pid, mount.owner.start)) continue;
    try {
      chownSync(mount.path, 0, 0);
      chmodSync(mount.path, 0o700);
    } catch {}
    let problem = await keepRoomFs(mount.path).catch((error: unknown) => String(error));
    try {
      closeRoom(mount.path);
    } catch (error) {
      problem = [problem, `handing the room to root: ${String(error)}`].filter(Boolean).join('; ');
    }
    swept.push(problem === undefined ? { path: mount.path } : { path: mount.path, problem });
  }
  return swept;
}
