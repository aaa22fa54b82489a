// Which submissions a grading run takes: the immediate sub-folders of the class folder (not
// hidden ones, not the output folder), in name order, and every entry it skips with the reason; with `--shard i/n`, only those whose
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

/** An entry of the class folder that is not graded, and why (class.json, index.html and the console list it). */
export interface Skipped {
  name: string;
  reason: string;
}

export interface ClassFolder {
  /** Sub-folder names, sorted. */
  submissions: string[];
  /** Every other entry, sorted by name: none is left out without a word. */
  skipped: Skipped[];
}

/**
 * The class folder's submissions and the entries it skips with the reason, in this shard when one
 * is given (a skipped entry too belongs to the shard its name hashes to, so merged shards list it once).
 */
export function listSubmissions(classDir: string, options: { shard?: Shard; exclude?: string } = {}): ClassFolder {
  const excluded = options.exclude ? safeRealpath(resolve(options.exclude)) : undefined;
  const submissions: string[] = [];
  const skipped: Skipped[] = [];
  for (const raw of readdirSync(classDir, { encoding: 'buffer' })) {
    const name = raw.toString('utf8');
    if (options.shard && shardOf(name, options.shard.count) !== options.shard.index) continue;
    const reason = skipReason(classDir, name, raw, excluded);
    if (reason === undefined) submissions.push(name);
    else skipped.push({ name, reason });
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return { submissions: submissions.sort(byName), skipped: skipped.sort((a, b) => byName(a.name, b.name)) };
}

/** Why an entry is not a submission, or undefined when it is one. */
function skipReason(classDir: string, name: string, raw: Buffer, excluded: string | undefined): string | undefined {
  if (!Buffer.from(name, 'utf8').equals(raw)) return 'its name is not valid UTF-8: rename the folder';
  if (name.startsWith('.')) return 'its name starts with a dot (a hidden folder, such as .git): rename it to grade it';
  if (!SAFE.test(name)) {
    const bad = [...name].find((c) => !SAFE.test(c))!;
    const code = `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return `its name holds ${code} (${bad === '\t' ? 'a tab' : bad === '\\' ? 'a backslash' : 'a control character'}), which not every output can carry: rename the folder`;
  }
  const path = join(classDir, name);
  const kind = entryKind(path);
  if (kind !== 'folder') return kind;
  if (excluded !== undefined && safeRealpath(path) === excluded) return 'the output folder (--out) of this grading';
  return undefined;
}

/** "folder", or what the entry is instead, in words. */
function entryKind(path: string): string {
  try {
    if (statSync(path).isDirectory()) return 'folder';
    return 'not a folder (a submission is a folder)';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'a link to nothing';
    return `cannot be read (${code ?? (error as Error).message})`;
  }
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
