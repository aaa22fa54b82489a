// Who holds a lock on a file, from /proc/locks: a line per lock, "1: POSIX ADVISORY READ 123
// fe:00:9979356 120 127" (id, class, mode, kind, pid, device major:minor in hex and inode, byte
// range). The kernel names the holder's pid as this process's /proc sees it; an open-file-
// description lock (OFDLCK) has no pid (-1). Used to name who stalled a writer (SQLITE_BUSY).

import { readFileSync, statSync } from 'node:fs';
import { readStat, uidOf } from './proc.js';

export interface LockHolder {
  /** The holder's pid, or null for a lock the kernel ties to no process (OFDLCK). */
  pid: number | null;
  uid?: number;
  comm?: string;
  /** Which of the asked paths the lock is on. */
  file: string;
  /** POSIX, OFDLCK or FLOCK, then READ or WRITE. */
  kind: string;
  /** Locked bytes, e.g. "120-127" ("EOF" for to the end). */
  range: string;
}

/** A stat's device as /proc/locks writes it: major and minor in hex, then the inode. */
function fileKey(path: string): string | undefined {
  try {
    const st = statSync(path, { bigint: true });
    const major = Number(((st.dev >> 8n) & 0xfffn) | ((st.dev >> 32n) & ~0xfffn));
    const minor = Number((st.dev & 0xffn) | ((st.dev >> 12n) & ~0xffn));
    return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino}`;
  } catch {
    return undefined; // gone, or never made (a sidecar)
  }
}

/** Parses /proc/locks text into locks on the files whose keys are given. */
export function parseLocks(text: string, files: ReadonlyMap<string, string>): LockHolder[] {
  const out: LockHolder[] = [];
  for (const line of text.split('\n')) {
    // "-> " marks a waiter blocked behind the lock above it: not a holder.
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8 || fields[1] === '->') continue;
    const [, cls, , mode, pid, key, start, end] = fields as [string, string, string, string, string, string, string, string];
    const file = files.get(key);
    if (file === undefined) continue;
    out.push({ pid: Number(pid) > 0 ? Number(pid) : null, file, kind: `${cls} ${mode}`, range: `${start}-${end}` });
  }
  return out;
}

/** The locks held on `paths` now, each holder named (uid, command) while it still runs. */
export function lockHolders(paths: readonly string[], locksText = readProcLocks()): LockHolder[] {
  const files = new Map<string, string>();
  for (const path of paths) {
    const key = fileKey(path);
    if (key !== undefined) files.set(key, path);
  }
  return parseLocks(locksText, files).map((h) => {
    if (h.pid === null) return h;
    const uid = uidOf(h.pid);
    const comm = readStat(h.pid)?.comm;
    return { ...h, ...(uid === undefined ? {} : { uid }), ...(comm === undefined ? {} : { comm }) };
  });
}

function readProcLocks(): string {
  try {
    return readFileSync('/proc/locks', 'utf8');
  } catch {
    return '';
  }
}
