// `chaoslab list` and `run` without parsing the catalogue. The build (scripts/build-catalogue-index.mjs,
// after tsc and the validators) loads every scenario once and writes what list shows of each and
// what loading gave, with the SHA-256 of the file, to dist/harness/catalogue/catalogue-index.json,
// together with the size, mtime and SHA-256 of every module loading goes through (load.js and its
// static imports, each lab's, the generated validators, the yaml package). A file the index
// vouches for (the same bytes, the same loader) loads to exactly what the index says, so list
// shows that and loadScenario returns it without loading YAML (some 50 ms of a run's start); any
// other file is loaded as before, with the same errors. A module whose mtime moved (a plain `tsc`
// rewrites them all) counts as unchanged only when its bytes are.

import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CatalogueEntry, ListedScenario } from './catalogue-files.js';
import type { Scenario } from '../scenario/types.js';

/** A scenario as loadScenario returns it, less what depends on where and how it is read: its path and its text. */
export type LoadedScenario = Omit<Scenario, 'file' | 'source'>;

export interface CatalogueIndex {
  /** Path from the project root -> "<size>:<mtimeMs>" and SHA-256, for each module loading depends on. */
  loader: Record<string, { stamp: string; sha256: string }>;
  /** Path from the catalogue's root -> the file's SHA-256 and what list shows of it. */
  scenarios: Record<string, { sha256: string; name: string; description: string; lab: string; loaded?: LoadedScenario }>;
}

/** Beside this module in dist/ (none beside the source: tap's runs load every file). */
export const INDEX_FILE = fileURLToPath(new URL('./catalogue-index.json', import.meta.url));

export function stampOf(file: string): string | undefined {
  try {
    const s = statSync(file);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

function sha256Of(file: string): string | undefined {
  try {
    return sha256(readFileSync(file));
  } catch {
    return undefined;
  }
}

/**
 * The index of `listed` (what listScenarios just loaded from `root`), for the loader made of
 * `loaderFiles`; with `load`, what it gives for each file too (loadScenario, with no index to read).
 */
export function makeIndex(
  listed: readonly ListedScenario[],
  root: string,
  projectRoot: string,
  loaderFiles: readonly string[],
  load?: (file: string) => Scenario,
): CatalogueIndex {
  const loader: CatalogueIndex['loader'] = {};
  for (const file of loaderFiles) {
    const stamp = stampOf(file);
    if (stamp === undefined) throw new Error(`catalogue index: cannot stat ${file}`);
    loader[relative(projectRoot, file)] = { stamp, sha256: sha256Of(file)! };
  }
  const scenarios: CatalogueIndex['scenarios'] = {};
  for (const s of listed) {
    const entry: CatalogueIndex['scenarios'][string] = { sha256: sha256Of(s.file)!, name: s.name, description: s.description, lab: s.lab };
    if (load) {
      const { file: _file, source: _source, ...loaded } = load(s.file);
      entry.loaded = loaded;
    }
    scenarios[relative(root, s.file)] = entry;
  }
  return { loader, scenarios };
}

/**
 * A loader module's SHA-256 by its stamp: a module whose mtime moved is hashed once per process
 * while it stays as it is, not at every lookup of a batch.
 */
const hashedAt = new Map<string, { stamp: string | undefined; sha256: string | undefined }>();
function moduleSha256(path: string, stamp: string | undefined): string | undefined {
  const known = hashedAt.get(path);
  if (known && known.stamp === stamp) return known.sha256;
  const sha = sha256Of(path);
  hashedAt.set(path, { stamp, sha256: sha });
  return sha;
}

/** Parsed once per process (per file): a run or a batch looks up a file or many. */
const parsed = new Map<string, CatalogueIndex | undefined>();

/** The index in `indexFile` while every module of its loader is the one it was made with; else undefined. */
function validIndex(indexFile: string, projectRoot: string): CatalogueIndex | undefined {
  if (!parsed.has(indexFile)) {
    try {
      parsed.set(indexFile, JSON.parse(readFileSync(indexFile, 'utf8')) as CatalogueIndex);
    } catch {
      parsed.set(indexFile, undefined);
    }
  }
  const index = parsed.get(indexFile);
  if (!index) return undefined;
  for (const [file, made] of Object.entries(index.loader ?? {})) {
    const path = join(projectRoot, file);
    if (typeof made !== 'object' || made === null) return undefined; // an index of another format
    const stamp = stampOf(path);
    if (stamp !== made.stamp && moduleSha256(path, stamp) !== made.sha256) return undefined;
  }
  return index;
}

/**
 * What loadScenario gives for the file at `absolute` whose text is `source`, when the index
 * vouches for it (a file of the catalogue at `root`, its bytes and the loader unchanged, no extra
 * lab folders that could change which lab is the default); else undefined.
 */
export function vouchedLoad(absolute: string, source: string, root: string, projectRoot: string, indexFile = INDEX_FILE): Scenario | undefined {
  if (process.env.CHAOSLAB_LAB_DIRS) return undefined;
  const item = validIndex(indexFile, projectRoot)?.scenarios?.[relative(root, absolute)];
  if (!item?.loaded || sha256(source) !== item.sha256) return undefined;
  return { file: absolute, source, ...item.loaded };
}

/**
 * The scenarios among `entries` (of the catalogue at `root`) that the index vouches for, by
 * file; none when the index is missing or unreadable, or any module of its loader changed.
 */
export function vouchedScenarios(entries: readonly CatalogueEntry[], root: string, projectRoot: string, indexFile = INDEX_FILE): Map<string, ListedScenario> {
  const known = new Map<string, ListedScenario>();
  const index = validIndex(indexFile, projectRoot);
  if (!index) return known;
  for (const entry of entries) {
    const item = index.scenarios?.[relative(root, entry.file)];
    if (item && sha256Of(entry.file) === item.sha256)
      known.set(entry.file, { name: item.name, description: item.description, file: entry.file, lab: item.lab });
  }
  return known;
}
