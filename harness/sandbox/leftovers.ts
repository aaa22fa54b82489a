// What a consumer's uid still owns outside its room once its run is over: files in the
// machine's world-writable folders, SysV IPC objects, POSIX message queues. A sealed consumer
// should be unable to leave any (its /tmp, /var/tmp, /dev/shm, /run/lock are private tmpfs, the
// root filesystem read-only, its IPC namespace its own: confine.ts), so anything found means a
// guard failed: it is reported and removed, so it cannot pass to the next student of the slot.
//
// Cheap on purpose (a run pays it once): the world-writable folders are found once per harness
// process by a walk three levels deep into every mounted filesystem (~10 ms here), then each
// run lists only those folders' own entries (~1.5 ms). Anything deeper belongs to an entry of
// theirs (reported with it) or to a world-writable folder the walk found.

import { lstatSync, type Stats, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { requireTool, runTool } from './tools.js';

/** Where a consumer could write if its own mounts failed, whatever the walk finds. */
const KNOWN = ['/tmp', '/var/tmp', '/run/lock', '/var/lock', '/dev/shm', '/dev/mqueue', '/var/crash', '/var/metrics'];
/** Filesystems with no files of a uid in them: kernel interfaces. */
const VIRTUAL = new Set([
  'proc',
  'sysfs',
  'cgroup',
  'cgroup2',
  'devpts',
  'mqueue',
  'securityfs',
  'debugfs',
  'tracefs',
  'bpf',
  'pstore',
  'configfs',
  'fusectl',
  'binfmt_misc',
  'autofs',
  'nsfs',
]);
const DEPTH = 3;

let cached: Promise<string[]> | undefined;

/** Mount points worth walking: every filesystem but kernel interfaces and rooms (0700, the harness's). */
export function walkRoots(mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): string[] {
  const roots = new Set<string>(['/']);
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    const path = left?.split(' ')[4];
    const [fsType, source] = right?.split(' ') ?? [];
    if (path === undefined || fsType === undefined || VIRTUAL.has(fsType) || source?.startsWith('chaoslab-')) continue;
    if (path.includes('\\') || path === '/proc' || path.startsWith('/proc/') || path.startsWith('/sys/')) continue;
    roots.add(path);
  }
  return [...roots];
}

/**
 * Folders anyone may write into (mode o+w): `find <every mount> -xdev -maxdepth 3 -type d
 * -perm -0002` (9 ms here; a walk in Node took 50 ms) plus the usual places, once per process.
 */
export function worldWritableDirs(options: { fresh?: boolean } = {}): Promise<string[]> {
  if (cached && !options.fresh) return cached;
  cached = (async () => {
    const found = new Set<string>();
    for (const path of KNOWN) {
      try {
        const st = lstatSync(path);
        if (st.isDirectory() && (st.mode & 0o002) !== 0) found.add(path);
      } catch {}
    }
    const result = await runTool([requireTool('find'), ...walkRoots(), '-xdev', '-maxdepth', String(DEPTH), '-type', 'd', '-perm', '-0002', '-print0'], {
      timeoutMs: 30_000,
    });
    for (const path of result.stdout.split('\0')) if (path !== '') found.add(path);
    return [...found].sort();
  })();
  return cached;
}

export type Leftover =
  | { kind: 'file'; path: string; what: string }
  | { kind: 'ipc'; ipc: 'msg' | 'shm' | 'sem'; id: number; key: string }
  | { kind: 'mqueue'; path: string };

/** One line for a person: "/var/tmp/x (a file)", "SysV message queue 3 (key 0x1234abcd)". */
export function describeLeftover(leftover: Leftover): string {
  if (leftover.kind === 'file') return `${leftover.path} (${leftover.what})`;
  if (leftover.kind === 'mqueue') return `POSIX message queue ${leftover.path}`;
  const name = { msg: 'message queue', shm: 'shared memory segment', sem: 'semaphore set' }[leftover.ipc];
  return `SysV ${name} ${leftover.id} (key ${leftover.key})`;
}

function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a fifo';
  if (st.isSocket()) return 'a socket';
  return st.isFile() ? 'a file' : 'a special file';
}

/** Entries of `dirs` owned by `uid` (not descended into: each is reported, and removed, whole). */
function ownedFiles(uid: number, dirs: readonly string[]): Leftover[] {
  const found: Leftover[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, name);
      try {
        const st = lstatSync(path);
        if (st.uid === uid) found.push(dir === '/dev/mqueue' ? { kind: 'mqueue', path } : { kind: 'file', path, what: kindOf(st) });
      } catch {}
    }
  }
  return found;
}

/** SysV IPC objects whose owner or creator is `uid`, from /proc/sysvipc/{msg,shm,sem} (this IPC namespace). */
export function ownedIpc(uid: number, procDir = '/proc/sysvipc'): Leftover[] {
  const found: Leftover[] = [];
  for (const ipc of ['msg', 'shm', 'sem'] as const) {
    let text: string;
    try {
      text = readFileSync(join(procDir, ipc), 'utf8');
    } catch {
      continue;
    }
    const [header, ...rows] = text.split('\n');
    const columns = header?.trim().split(/\s+/) ?? [];
    const at = (name: string) => columns.indexOf(name);
    const [keyAt, idAt, uidAt, cuidAt] = [at('key'), at({ msg: 'msqid', shm: 'shmid', sem: 'semid' }[ipc]), at('uid'), at('cuid')];
    if (keyAt < 0 || idAt < 0 || uidAt < 0) continue;
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      if (fields.length <= uidAt) continue;
      if (Number(fields[uidAt]) !== uid && (cuidAt < 0 || Number(fields[cuidAt]) !== uid)) continue;
      const key = `0x${(Number(fields[keyAt]) >>> 0).toString(16).padStart(8, '0')}`;
      found.push({ kind: 'ipc', ipc, id: Number(fields[idAt]), key });
    }
  }
  return found;
}

/** Everything `uid` owns in the world-writable folders and in SysV IPC / POSIX message queues. */
export function findLeftovers(uid: number, dirs: readonly string[]): Leftover[] {
  return [...ownedFiles(uid, dirs), ...ownedIpc(uid)];
}

/** Removes what findLeftovers found (folders whole, links themselves); returns what could not be removed, with why. */
export async function removeLeftovers(leftovers: readonly Leftover[]): Promise<string[]> {
  const failed: string[] = [];
  for (const leftover of leftovers) {
    try {
      if (leftover.kind === 'file') rmSync(leftover.path, { recursive: true, force: true });
      else if (leftover.kind === 'mqueue') unlinkSync(leftover.path);
      else {
        const flag = { msg: '-q', shm: '-m', sem: '-s' }[leftover.ipc];
        const removed = await runTool([requireTool('ipcrm'), flag, String(leftover.id)]);
        if (removed.code !== 0) throw new Error(removed.summary);
      }
    } catch (error) {
      failed.push(`${describeLeftover(leftover)}: ${(error as Error).message}`);
    }
  }
  return failed;
}
