// The reports folder: `reports/<run-id>/` per run and `reports/latest`, a symlink to the newest
// finished run. `latest` is switched atomically — a new symlink under a temporary name, then
// rename(2) over the old one — so a reader, or another run switching it at the same moment,
// never sees it missing or broken. `cleanRuns` prunes old run folders.

import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { PASSABLE } from './staff-only.js';

export const LATEST = 'latest';
const TEMP_PREFIX = '.latest-';

/** Points `<reportsDir>/latest` at `runDir`, atomically. Relative when the run is inside reportsDir. */
export function switchLatest(reportsDir: string, runDir: string): string {
  const link = join(reportsDir, LATEST);
  const rel = relative(resolve(reportsDir), resolve(runDir));
  const target = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : resolve(runDir);
  const temp = join(reportsDir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  symlinkSync(target, temp, 'dir');
  try {
    renameSync(temp, link);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      /* already gone */
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST')
      throw new Error(`cannot switch ${link}: it is a real directory, not a symlink; move it away and run again`);
    throw error;
  }
  return link;
}

/** Where `latest` points (absolute), or undefined if there is no such link. */
export function latestTarget(reportsDir: string): string | undefined {
  const link = join(reportsDir, LATEST);
  try {
    if (!lstatSync(link).isSymbolicLink()) return undefined;
    return resolve(reportsDir, readlinkSync(link));
  } catch {
    return undefined;
  }
}

export interface RunFolder {
  name: string;
  dir: string;
  /** A run, or a batch (`run --all`, `--repeat`): a folder of run folders, kept or removed as one. */
  kind: 'run' | 'batch';
  /** Start time from the run id's stamp, else the journal's modification time (ms since epoch). */
  startedMs: number;
  modifiedMs: number;
  finished: boolean;
}

function stampMs(name: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-/.exec(name);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(ms) ? undefined : ms;
}

/** True when the journal's last complete line is a run-end entry (reads only its tail). */
export function journalFinished(journalPath: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(journalPath, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, 4096);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    const lines = buf
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    return /"type":"run-end"/.test(lines[lines.length - 1] ?? '');
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const journalMtime = (dir: string): number | undefined => {
  try {
    return statSync(join(dir, 'journal.jsonl')).mtimeMs;
  } catch {
    return undefined;
  }
};

/** Run folders under reportsDir (directories holding a journal.jsonl, or batches of them), newest first. */
export function listRuns(reportsDir: string): RunFolder[] {
  if (!existsSync(reportsDir)) return [];
  const runs: RunFolder[] = [];
  for (const entry of readdirSync(reportsDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(reportsDir, entry.name);
    const own = journalMtime(dir);
    if (own !== undefined) {
      runs.push({
        name: entry.name,
        dir,
        kind: 'run',
        startedMs: stampMs(entry.name) ?? own,
        modifiedMs: own,
        finished: journalFinished(join(dir, 'journal.jsonl')),
      });
      continue;
    }
    const children = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name))
      .filter((d) => journalMtime(d) !== undefined);
    if (children.length === 0) continue;
    const modifiedMs = Math.max(...children.map((d) => journalMtime(d)!));
    const finished = children.every((d) => journalFinished(join(d, 'journal.jsonl')));
    runs.push({ name: entry.name, dir, kind: 'batch', startedMs: stampMs(entry.name) ?? modifiedMs, modifiedMs, finished });
  }
  return runs.sort((a, b) => b.startedMs - a.startedMs || b.modifiedMs - a.modifiedMs || (a.name < b.name ? 1 : -1));
}

export interface CleanOptions {
  /** List what would go, remove nothing. */
  dryRun?: boolean;
  /** A run without run-end whose journal changed within this many ms is still running: kept (default 10 minutes). */
  activeMs?: number;
  now?: number;
}

export interface CleanResult {
  removed: string[];
  kept: string[];
  latest?: string;
}

/**
 * Keeps the `keep` newest run folders (a batch folder counts as one) and removes the others —
 * never the one `latest` points to, never a run still being written. Leftover temporary links go too; a `latest` left
 * pointing at nothing is pointed at the newest remaining run.
 */
export function cleanRuns(reportsDir: string, keep: number, options: CleanOptions = {}): CleanResult {
  if (!Number.isInteger(keep) || keep < 0) throw new Error(`--keep must be a whole number ≥ 0 (got ${keep})`);
  const now = options.now ?? Date.now();
  const activeMs = options.activeMs ?? 10 * 60_000;
  const runs = listRuns(reportsDir);
  const latest = latestTarget(reportsDir);
  const removed: string[] = [];
  const kept: string[] = [];
  runs.forEach((run, index) => {
    const protectedRun = index < keep || (latest !== undefined && resolve(run.dir) === latest) || (!run.finished && now - run.modifiedMs < activeMs);
    if (protectedRun) {
      kept.push(run.dir);
      return;
    }
    if (!options.dryRun) rmSync(run.dir, { recursive: true, force: true });
    removed.push(run.dir);
  });
  if (!options.dryRun && existsSync(reportsDir)) {
    for (const name of readdirSync(reportsDir)) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      const path = join(reportsDir, name);
      try {
        if (now - lstatSync(path).mtimeMs > 60_000) unlinkSync(path);
      } catch {
        /* raced with its owner: fine */
      }
    }
    const target = latestTarget(reportsDir);
    if (target !== undefined && !existsSync(target)) {
      const newest = kept.map((dir) => runs.find((r) => r.dir === dir)!).find((r) => r.finished) ?? runs.find((r) => kept.includes(r.dir));
      if (newest) switchLatest(reportsDir, newest.dir);
      else unlinkSync(join(reportsDir, LATEST));
    }
  }
  const finalLatest = latestTarget(reportsDir);
  return { removed, kept, ...(finalLatest ? { latest: finalLatest } : {}) };
}

/**
 * What `chaoslab report <path>` means: a run folder (with a journal.jsonl), a journal.jsonl
 * file, a batch folder (its run folders, in name order), or a reports folder (what its `latest`
 * points to). Paths come back real (no `latest` in them).
 */
export function resolveRunFolders(path: string): { runs: string[]; batch?: string } {
  const abs = resolve(path);
  if (basename(abs) === 'journal.jsonl' && existsSync(abs)) return { runs: [realpathSync(dirname(abs))] };
  if (existsSync(join(abs, 'journal.jsonl'))) return { runs: [realpathSync(abs)] };
  if (!existsSync(abs)) throw new Error(`${path}: no such run folder`);
  const children = readdirSync(abs, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(abs, d.name, 'journal.jsonl')))
    .map((d) => d.name)
    .sort();
  const latest = latestTarget(abs);
  const real = realpathSync(abs);
  const batch = { runs: children.map((c) => join(real, c)), batch: real };
  // A batch folder (run --all, --repeat) holds run folders and its own files; a reports
  // folder means its latest run (or batch); run folders with neither: all of them.
  if (children.length && ['results.json', 'index.html', 'junit.xml'].some((f) => existsSync(join(abs, f)))) return batch;
  if (latest && existsSync(latest)) return resolveRunFolders(latest);
  if (children.length) return batch;
  throw new Error(`${path}: not a run folder (no journal.jsonl in it${latest === undefined ? '' : `, nor in what ${LATEST} points to`})`);
}

/**
 * Makes `dir` (and its missing parents) one level at a time, so a bad path fails at once with
 * the component that could not be made, instead of `mkdir -p`'s endless retry on `/proc`. A
 * parent it makes is passable (0711), as the folder itself will be: a sealed program's uid passes
 * through all of them to its room (`--out reports/a/b` made `a` 0700 under the CLI's umask, and
 * every sealed run in it stopped before it started).
 */
export function ensureDir(dir: string): string {
  const absolute = resolve(dir);
  const missing: string[] = [];
  for (let d = absolute; !existsSync(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
      if (d !== absolute) chmodSync(d, PASSABLE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(d).isDirectory()) continue;
      throw new Error(`cannot create the reports folder ${absolute}: ${d}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  if (!statSync(absolute).isDirectory()) throw new Error(`the reports folder ${absolute} is not a folder`);
  return absolute;
}
