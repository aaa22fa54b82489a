// How the harness reads a SQLite store the consumer under test left: only a file the consumer
// itself could have written, running none of its SQL, within bounds (docs/sandbox.md "How the
// consumer's store is read"). Before any open, the store and its sidecars are lstat'ed (a link,
// FIFO, device, socket, directory, second name, foreign owner or oversized file is refused, and
// nothing it points at is opened); sealed, the open and the read run with the consumer's uid
// and gid as the effective ones, so a link swapped in after the check reaches nothing root
// alone may read; after the read, the file must still be the one checked. On the connection,
// `trusted_schema` is off and every name the lab reads must be a plain table with no generated
// column, with a row count under the lab's bound, before anything is selected.
//
// A refusal is data (a kind, the file, a detail): the lab's checker words it as a finding.

import type BetterSqlite3 from 'better-sqlite3';
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { formatBytes } from '../text/bytes.js';

export type RefusalKind =
  | 'symlink'
  | 'hard-link'
  | 'fifo'
  | 'device'
  | 'socket'
  | 'directory'
  | 'not-owned'
  | 'not-in-room'
  | 'too-large'
  | 'too-many-rows'
  | 'not-a-table'
  | 'generated-column'
  | 'changed-while-read';

export interface StoreRefusal {
  kind: RefusalKind;
  /** The file's name (`consumer.db`, `consumer.db-wal`), never its content. */
  file: string;
  /** A short fact: the link's target, the owner's uid, the size and the limit. */
  detail: string;
}

/** How a consumer's store may be read in this run (RunContext.consumerStore). */
export interface StoreGuard {
  /** Sealed runs: the consumer's uid and gid; the file must be its, and is read with its rights. */
  owner?: { uid: number; gid: number };
  /** The consumer's rooms: the store must be directly in one (empty: not checked). */
  rooms: string[];
  /** The store and its WAL together may hold at most this many bytes. */
  limitBytes: number;
}

/** The lab's default limit for a consumer's store (file + WAL), unless its `Lab.storeLimitBytes` says otherwise. */
export const DEFAULT_STORE_LIMIT_BYTES = 64 * 1024 ** 2;

/** SQLite's files beside a database: every one is opened by SQLite when present. */
export const SIDECARS = ['-wal', '-shm', '-journal'] as const;

/** Thrown inside a guarded read to refuse it (caught by readGuarded). */
export class StoreRefused extends Error {
  constructor(readonly refusal: StoreRefusal) {
    super(`${refusal.file}: ${refusal.kind} (${refusal.detail})`);
  }
}

export type Guarded<T> = { absent: true } | { refused: StoreRefusal } | { value: T };

/** What was checked of the store before the read: compared with what is there after it. */
interface Checked {
  dev: number;
  ino: number;
}

/** A link's target, cut short: it is the consumer's text. */
function linkTarget(path: string): string {
  try {
    const target = readlinkSync(path);
    return target.length > 120 ? `${target.slice(0, 120)}…` : target;
  } catch {
    return '?';
  }
}

/** Why a file of the store may not be read, or undefined when it is a regular file the consumer could have written. */
function refusalOf(path: string, st: Stats, guard: StoreGuard): StoreRefusal | undefined {
  const file = basename(path);
  const refuse = (kind: RefusalKind, detail: string): StoreRefusal => ({ kind, file, detail });
  if (st.isSymbolicLink()) return refuse('symlink', `to ${linkTarget(path)}`);
  if (st.isFIFO()) return refuse('fifo', 'a named pipe');
  if (st.isSocket()) return refuse('socket', 'a Unix socket');
  if (st.isCharacterDevice() || st.isBlockDevice()) return refuse('device', `${st.isBlockDevice() ? 'block' : 'character'} device ${st.rdev}`);
  if (st.isDirectory()) return refuse('directory', 'a folder');
  if (!st.isFile()) return refuse('device', 'not a regular file');
  if (st.nlink !== 1) return refuse('hard-link', `${st.nlink} names for one file`);
  if (guard.owner && st.uid !== guard.owner.uid) return refuse('not-owned', `owned by uid ${st.uid}, not the consumer's ${guard.owner.uid}`);
  return undefined;
}

/** lstat, or undefined when there is nothing by that name. */
function lstatOrNone(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Checks the store and its sidecars without opening any of them: absent, refused, or the
 * identity of the file that may be opened.
 */
export function inspectStore(path: string, guard: StoreGuard): { absent: true } | { refused: StoreRefusal } | { checked: Checked } {
  const file = basename(path);
  if (guard.rooms.length > 0 && !guard.rooms.some((room) => resolve(room) === resolve(dirname(path))))
    return { refused: { kind: 'not-in-room', file, detail: `${dirname(path)} is not the consumer's room` } };
  const st = lstatOrNone(path);
  if (!st) return { absent: true };
  const refused = refusalOf(path, st, guard);
  if (refused) return { refused };
  let bytes = st.size;
  for (const suffix of SIDECARS) {
    const side = lstatOrNone(path + suffix);
    if (!side) continue;
    const sideRefused = refusalOf(path + suffix, side, guard);
    if (sideRefused) return { refused: sideRefused };
    if (suffix === '-wal') bytes += side.size;
  }
  if (bytes > guard.limitBytes)
    return {
      refused: { kind: 'too-large', file, detail: `store is ${formatBytes(bytes)}, the limit is ${formatBytes(guard.limitBytes)}` },
    };
  return { checked: { dev: st.dev, ino: st.ino } };
}

/**
 * Runs `fn` with `owner`'s uid and gid as the effective ones, and no supplementary group, then
 * gives root's back (the uid first: only root may set the gid and groups back). Synchronous on
 * purpose: no other JavaScript of this process runs meanwhile, and the libuv threadpool holds
 * nothing that opens a file in a sealed worker (the journal writes synchronously to an open fd).
 */
export function asOwner<T>(owner: StoreGuard['owner'], fn: () => T): T {
  if (!owner || process.geteuid?.() !== 0) return fn();
  const groups = process.getgroups!();
  const egid = process.getegid!();
  process.setgroups!([owner.gid]);
  process.setegid!(owner.gid);
  try {
    process.seteuid!(owner.uid);
    try {
      return fn();
    } finally {
      process.seteuid!(0);
    }
  } finally {
    process.setegid!(egid);
    process.setgroups!(groups);
  }
}

/**
 * Reads a consumer's store: checked before (nothing is opened when it is refused), read with the
 * consumer's rights (`read` opens and reads it, and may throw StoreRefused), checked after (a
 * file swapped during the read is refused). Errors of `read` other than a refusal are rethrown
 * when the file did not change.
 */
export function readGuarded<T>(path: string, guard: StoreGuard, read: () => T): Guarded<T> {
  const before = inspectStore(path, guard);
  if (!('checked' in before)) return before;
  let value: T | undefined;
  let failure: unknown;
  let failed = false;
  try {
    value = asOwner(guard.owner, read);
  } catch (error) {
    if (error instanceof StoreRefused) return { refused: error.refusal };
    failed = true;
    failure = error;
  }
  const after = inspectStore(path, guard);
  if (!('checked' in after) || after.checked.dev !== before.checked.dev || after.checked.ino !== before.checked.ino)
    return {
      refused: {
        kind: 'changed-while-read',
        file: basename(path),
        detail:
          'absent' in after
            ? 'it was removed while the harness read it'
            : 'refused' in after
              ? `it became a ${after.refused.kind} while the harness read it`
              : 'another file took its name while the harness read it',
      },
    };
  if (failed) throw failure;
  return { value: value as T };
}

/**
 * On an open connection to a consumer's store: runs none of the store's SQL (`trusted_schema`
 * off), and refuses, before anything is selected, a name the lab reads that is not a plain table
 * (a view, a virtual table), a column it reads that is generated, or more than `maxRows` rows in
 * a table. A missing table or column is left to the lab's own query (its SQLite error).
 */
export function checkTables(db: BetterSqlite3.Database, file: string, tables: Record<string, readonly string[]>, maxRows: number): void {
  db.pragma('trusted_schema = OFF');
  const refuse = (kind: RefusalKind, detail: string): never => {
    throw new StoreRefused({ kind, file, detail });
  };
  const schema = db.prepare("SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table', 'view')").all() as {
    type: string;
    name: string;
    sql: string | null;
  }[];
  for (const [table, columns] of Object.entries(tables)) {
    const entry = schema.find((s) => s.name.toLowerCase() === table.toLowerCase());
    if (!entry) continue;
    if (entry.type !== 'table') refuse('not-a-table', `${table} is a ${entry.type}`);
    if (/^\s*create\s+virtual\s+table/i.test(entry.sql ?? '')) refuse('not-a-table', `${table} is a virtual table`);
    const info = db.prepare(`SELECT name, hidden FROM pragma_table_xinfo(?)`).all(table) as { name: string; hidden: number }[];
    for (const column of info)
      if ((column.hidden === 2 || column.hidden === 3) && columns.some((c) => c.toLowerCase() === column.name.toLowerCase()))
        refuse('generated-column', `${table}.${column.name} is a generated column`);
  }
  for (const table of Object.keys(tables)) {
    if (!schema.some((s) => s.name.toLowerCase() === table.toLowerCase())) continue;
    const rows = (db.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number) ?? 0;
    if (rows > maxRows) refuse('too-many-rows', `${table} holds ${rows} rows, the limit for this scenario is ${maxRows}`);
  }
}

/** The refusal in plain words: "consumer.db is a symbolic link (to ../../control.db)". */
export function describeRefusal(r: StoreRefusal): string {
  switch (r.kind) {
    case 'symlink':
      return `${r.file} is a symbolic link (${r.detail})`;
    case 'hard-link':
      return `${r.file} is a hard link (${r.detail})`;
    case 'fifo':
      return `${r.file} is a named pipe (FIFO)`;
    case 'socket':
      return `${r.file} is a socket`;
    case 'device':
      return `${r.file} is a device (${r.detail})`;
    case 'directory':
      return `${r.file} is a folder`;
    case 'not-owned':
      return `${r.file} was not written by the consumer (${r.detail})`;
    case 'not-in-room':
      return `${r.file} is not in the consumer's room`;
    case 'too-large':
      return `${r.file} is too large: ${r.detail}`;
    case 'too-many-rows':
      return `${r.file} has too many rows: ${r.detail}`;
    case 'not-a-table':
      return `${r.file} is not plain tables: ${r.detail}`;
    case 'generated-column':
      return `${r.file} computes what it stores: ${r.detail}`;
    case 'changed-while-read':
      return `${r.file} changed while the harness read it: ${r.detail}`;
  }
}

/** The rule a refused store broke, in the words every lab's finding ends with. */
export function refusalRule(kind: RefusalKind): string {
  switch (kind) {
    case 'too-large':
    case 'too-many-rows':
      return 'the harness reads a store only within its limit (`--store-limit` changes the size limit)';
    case 'not-a-table':
    case 'generated-column':
      return "the harness reads plain tables only and runs none of the store's SQL";
    default:
      return 'the harness reads only a regular file that the consumer itself wrote, in its room';
  }
}
