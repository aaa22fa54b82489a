// One numeric uid per job slot, so two runs going on at once cannot signal or ptrace each
// other's consumer (the kernel allows both only between processes of the same uid). The uids
// come from a reserved range and need no passwd entry: setpriv takes numbers.
//
// Slot n prefers uid UID_BASE + n. Other harnesses on the same machine (another worktree, a
// second `make test`) may use the same slots at the same time, so a uid is LEASED: a lock file
// /run/chaoslab/uids/<uid> created exclusively, holding the owner's pid and start time. A lock
// whose owner is gone (crashed, SIGKILLed) is taken over. A uid that has a passwd entry or a
// live process is never handed out.

import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, listPids, readStat, uidOf } from './proc.js';

export const UID_BASE = 61000;
/** Slots 0..UID_SLOTS-1 map to UID_BASE..UID_BASE+UID_SLOTS-1. */
export const UID_SLOTS = 900;
/** Used only by the probe, for a process that lives a few milliseconds; outside the slot range. */
export const PROBE_UID = 61999;
export const DEFAULT_LOCK_DIR = '/run/chaoslab/uids';

/** The uid slot `slot` prefers (no lease: see leaseUid). */
export function uidForSlot(slot: number): number {
  if (!Number.isInteger(slot) || slot < 0 || slot >= UID_SLOTS) throw new RangeError(`uid slot must be an integer 0..${UID_SLOTS - 1}, not ${slot}`);
  return UID_BASE + slot;
}

export interface UidLease {
  readonly uid: number;
  /** Equal to uid: each sealed consumer gets a group of its own too. */
  readonly gid: number;
  readonly slot: number;
  /** Gives the uid back; idempotent. Call only once no process of that uid is left. */
  release(): void;
}

/** uids with a passwd entry (never handed out, whatever the range says). */
function passwdUids(): Set<number> {
  const uids = new Set<number>();
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const uid = Number(line.split(':')[2]);
      if (line !== '' && Number.isInteger(uid)) uids.add(uid);
    }
  } catch {}
  return uids;
}

/** uids some live process runs as (a leftover of a run whose lease was lost must not be joined). */
function busyUids(): Set<number> {
  const uids = new Set<number>();
  for (const pid of listPids()) {
    const uid = uidOf(pid);
    if (uid !== undefined && uid >= UID_BASE && uid <= PROBE_UID && isAlive(pid)) uids.add(uid);
  }
  return uids;
}

/** Creates `path` holding `owner`, atomically (written aside, then hard-linked: link() fails if
 *  the name exists), so a lock file is never seen half-written. A lock whose owner is gone is removed. */
function tryLock(path: string, owner: string): boolean {
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, owner, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(aside, path);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let holder: string;
      try {
        holder = readFileSync(path, 'utf8');
      } catch {
        continue; // released meanwhile: try again
      }
      const [pid, start] = holder.trim().split(' ');
      if (pid !== undefined && start !== undefined && isAlive(Number(pid), start)) return false;
      try {
        unlinkSync(path); // stale: its owner is gone
      } catch {}
    }
    return false;
  } finally {
    try {
      unlinkSync(aside);
    } catch {}
  }
}

/**
 * Leases a uid for one job slot: UID_BASE + slot when free, else the next free one in the range.
 * Throws when the whole range is taken.
 */
export function leaseUid(slot = 0, options: { lockDir?: string } = {}): UidLease {
  const lockDir = options.lockDir ?? DEFAULT_LOCK_DIR;
  mkdirSync(lockDir, { recursive: true, mode: 0o700 });
  const owner = `${process.pid} ${readStat(process.pid)?.start ?? '0'}\n`;
  const reserved = passwdUids();
  const busy = busyUids();
  for (let i = 0; i < UID_SLOTS; i++) {
    const candidateSlot = (slot + i) % UID_SLOTS;
    const uid = uidForSlot(candidateSlot);
    if (reserved.has(uid) || busy.has(uid)) continue;
    const path = join(lockDir, String(uid));
    if (!tryLock(path, owner)) continue;
    let released = false;
    return {
      uid,
      gid: uid,
      slot: candidateSlot,
      release: () => {
        if (released) return;
        released = true;
        try {
          if (readFileSync(path, 'utf8') === owner) unlinkSync(path);
        } catch {}
      },
    };
  }
  throw new Error(`no free uid in ${UID_BASE}..${UID_BASE + UID_SLOTS - 1} (locks in ${lockDir})`);
}
