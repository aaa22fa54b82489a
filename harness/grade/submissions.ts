// Which submissions a grading run takes: the immediate sub-folders of the class folder (not
// hidden ones, not the output folder), in name order; with `--shard i/n`, only those whose
// name's SHA-256 falls in shard i — stable across machines, so a CI matrix can split a class.

import { createHash } from 'node:crypto';
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface Shard {
  index: number;
  count: number;
}

/** "i/n", 1-based; throws with the words a usage error needs. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`--shard must be i/n (e.g. 2/3), not ${JSON.stringify(text)}`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index < 1 || index > count) throw new Error(`--shard ${text}: i must be 1..n and n at least 1`);
  return { index, count };
}

/** The 1-based shard a submission name belongs to out of `count`. */
export function shardOf(name: string, count: number): number {
  const hash = createHash('sha256').update(name, 'utf8').digest();
  return (hash.readUInt32BE(0) % count) + 1;
}

/** A submission name is a folder name any output can carry: no separators, no control characters. */
const SAFE = /^[^/\\\0-\x1f]+$/;

/** The class folder's submissions (sub-folder names, sorted), in this shard when one is given. */
export function listSubmissions(classDir: string, options: { shard?: Shard; exclude?: string } = {}): string[] {
  const excluded = options.exclude ? safeRealpath(resolve(options.exclude)) : undefined;
  return readdirSync(classDir)
    .filter((name) => !name.startsWith('.') && SAFE.test(name))
    .filter((name) => isFolder(join(classDir, name)))
    .filter((name) => excluded === undefined || safeRealpath(join(classDir, name)) !== excluded)
    .filter((name) => !options.shard || shardOf(name, options.shard.count) === options.shard.index)
    .sort();
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
