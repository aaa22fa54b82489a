// The build cache: a submission's built copy kept under its build key (build-key.ts), so that a
// class graded again (a rubric fix, a rerun after a harness upgrade) builds only what changed.
//
// <cache>/<key's hex>/ holds tree/ (the built copy, as the build left it), build.log and, written
// last, entry.json. An entry is made in <cache>/.partial-<pid>-<start>-<random>/ and renamed
// into place only when complete, so an entry is whole or absent: a build killed mid-way, or a
// grader killed while storing, leaves a partial folder that no lookup reads (swept by the next
// grading once its owner is dead). A folder without a matching entry.json is ignored too.
//
// The cache is root's (the grader's) alone: 0700, reached by no sandbox uid, so no build or
// consumer can read another submission's output through it or plant an entry. Only successful
// builds are kept. A built copy that names its own folder (a venv's absolute paths, a
// Makefile node-gyp wrote) would not work copied elsewhere: it is not kept, and the build.log
// says why. Nothing is evicted: staff remove the folder when they wish.

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  chmodSync,
} from 'node:fs';
import { join } from 'node:path';
import { isAlive, readStat } from '../../sandbox/proc.js';
import { onCleanup } from '../../base/cleanup.js';

export interface CachedBuild {
  key: string;
  /** The built copy. */
  tree: string;
  /** What the build printed when it ran. */
  log: string;
  /** How long that build took. */
  buildMs: number;
}

export interface BuildCache {
  readonly dir: string;
  /** The complete entry for `key`, or undefined (none, or not whole). */
  lookup(key: string): CachedBuild | undefined;
  /** Keeps a built copy under `key`; undefined when kept (or already there), else why not, in words. */
  store(key: string, built: string, record: { log: string; buildMs: number }): string | undefined;
}

interface EntryFile {
  format: 1;
  key: string;
  buildMs: number;
}

const PARTIAL = /^\.partial-(\d+)-(\d+)-[0-9a-f]+$/;

/**
 * Opens the cache folder, made when the first entry is kept: the grader's own, 0700; a folder of
 * another owner, or a file, is refused (an error naming it).
 */
export function openBuildCache(dir: string): BuildCache {
  if (existsSync(dir)) {
    checkOwn(dir);
    for (const name of readdirSync(dir)) {
      const m = PARTIAL.exec(name);
      if (m && !isAlive(Number(m[1]), m[2])) rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
  return {
    dir,
    lookup: (key) => lookup(dir, key),
    store: (key, built, record) => {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        checkOwn(dir);
      } catch (error) {
        return (error as Error).message;
      }
      return store(dir, key, built, record);
    },
  };
}

function checkOwn(dir: string): void {
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`the build cache ${dir}: is not a folder`);
  const uid = process.geteuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`the build cache ${dir}: belongs to uid ${st.uid}, not to the grader (uid ${uid}): give a folder of your own`);
  chmodSync(dir, 0o700);
}

const entryName = (key: string): string => {
  const m = /^sha256:([0-9a-f]{64})$/.exec(key);
  if (!m) throw new Error(`not a build key: ${key}`);
  return m[1]!;
};

function lookup(dir: string, key: string): CachedBuild | undefined {
  const entry = join(dir, entryName(key));
  try {
    const meta = JSON.parse(readFileSync(join(entry, 'entry.json'), 'utf8')) as Partial<EntryFile>;
    if (meta.format !== 1 || meta.key !== key || typeof meta.buildMs !== 'number') return undefined;
    if (!lstatSync(join(entry, 'tree')).isDirectory()) return undefined;
    return { key, tree: join(entry, 'tree'), log: readFileSync(join(entry, 'build.log'), 'utf8'), buildMs: meta.buildMs };
  } catch {
    return undefined;
  }
}

function store(dir: string, key: string, built: string, record: { log: string; buildMs: number }): string | undefined {
  const final = join(dir, entryName(key));
  if (lookup(dir, key)) return undefined;
  const partial = join(dir, `.partial-${process.pid}-${readStat(process.pid)?.start ?? '0'}-${randomBytes(4).toString('hex')}`);
  const forget = onCleanup(`build cache entry ${partial}`, () => rmSync(partial, { recursive: true, force: true }));
  try {
    mkdirSync(partial, { mode: 0o700 });
    const named = copyTree(built, join(partial, 'tree'), Buffer.from(built));
    if (named) return `the built copy names its own folder (in ${named}): a copy elsewhere would not work`;
    writeFileSync(join(partial, 'build.log'), record.log);
    writeFileSync(join(partial, 'entry.json'), `${JSON.stringify({ format: 1, key, buildMs: record.buildMs } satisfies EntryFile)}\n`);
    // A whole entry another grader stored meanwhile stands (ours goes); a broken one is replaced.
    if (lookup(dir, key)) return undefined;
    rmSync(final, { recursive: true, force: true });
    renameSync(partial, final);
    return undefined;
  } catch (error) {
    return `it could not be stored: ${(error as Error).message}`;
  } finally {
    rmSync(partial, { recursive: true, force: true });
    forget();
  }
}

/** Copies a built tree into the cache (folders and files 0700 and their own modes, links as links). */
export function copyTree(from: string, to: string, forbidden?: Buffer): string | undefined {
  const visit = (src: string, dst: string, rel: string): string | undefined => {
    const st = lstatSync(src);
    if (st.isSymbolicLink()) {
      const target = readlinkSync(src);
      if (forbidden && target.includes(forbidden.toString())) return rel;
      symlinkSync(target, dst);
    } else if (st.isDirectory()) {
      mkdirSync(dst, { mode: 0o700 });
      for (const name of readdirSync(src).sort()) {
        const named = visit(join(src, name), join(dst, name), rel ? `${rel}/${name}` : name);
        if (named) return named;
      }
    } else if (st.isFile()) {
      if (copyFile(src, dst, forbidden)) return rel;
    } else throw new Error(`${rel}: is not a file, folder or link`);
    return undefined;
  };
  return visit(from, to, '');
}

/** Copies one file without following a link; true when its bytes hold `forbidden`. */
function copyFile(src: string, dst: string, forbidden: Buffer | undefined): boolean {
  const fd = openSync(src, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let out: number | undefined;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${src}: changed while it was copied`);
    out = openSync(dst, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, st.mode & 0o777);
    const buf = Buffer.alloc(1024 * 1024);
    // The end of the last chunk is kept, so that a path split between two chunks is still seen.
    const keep = forbidden ? forbidden.length - 1 : 0;
    let tail = Buffer.alloc(0);
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
      if (forbidden) {
        const chunk = buf.subarray(0, n);
        if (chunk.includes(forbidden) || Buffer.concat([tail, chunk.subarray(0, keep)]).includes(forbidden)) return true;
        tail = Buffer.from(Buffer.concat([tail, chunk.subarray(Math.max(0, n - keep))]).subarray(-keep));
      }
      for (let written = 0; written < n; ) written += writeSync(out, buf, written, n - written);
    }
    return false;
  } finally {
    closeSync(fd);
    if (out !== undefined) closeSync(out);
  }
}
