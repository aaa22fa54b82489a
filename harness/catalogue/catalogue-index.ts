// `chaoslab list` without parsing the catalogue. The build (scripts/build-catalogue-index.mjs,
// after tsc and the validators) loads every scenario once and writes what list shows of each,
// with the SHA-256 of the file, to dist/harness/catalogue/catalogue-index.json, together with the
// size and mtime of every module loading goes through (load.js and its static imports, the
// generated validators, the yaml package). A file the index vouches for (the same bytes, the same
// loader) loads to exactly what the index says, so list takes that; any other file is loaded as
// before, with the same errors. A plain `tsc` rewrites the modules, and the index vouches for none.

import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CatalogueEntry } from './catalogue-files.js';
import type { ListedScenario } from './catalogue.js';

export interface CatalogueIndex {
  /** Path from the project root -> "<size>:<mtimeMs>", for each module loading depends on. */
  loader: Record<string, string>;
  /** Path from the catalogue's root -> the file's SHA-256 and what list shows of it. */
  scenarios: Record<string, { sha256: string; name: string; description: string; lab: string }>;
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

function sha256Of(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

/** The index of `listed` (what listScenarios just loaded from `root`), for the loader made of `loaderFiles`. */
export function makeIndex(listed: readonly ListedScenario[], root: string, projectRoot: string, loaderFiles: readonly string[]): CatalogueIndex {
  const loader: CatalogueIndex['loader'] = {};
  for (const file of loaderFiles) {
    const stamp = stampOf(file);
    if (stamp === undefined) throw new Error(`catalogue index: cannot stat ${file}`);
    loader[relative(projectRoot, file)] = stamp;
  }
  const scenarios: CatalogueIndex['scenarios'] = {};
  for (const s of listed) scenarios[relative(root, s.file)] = { sha256: sha256Of(s.file)!, name: s.name, description: s.description, lab: s.lab };
  return { loader, scenarios };
}

/**
 * The scenarios among `entries` (of the catalogue at `root`) that the index vouches for, by
 * file; none when the index is missing or unreadable, or any module of its loader changed.
 */
export function vouchedScenarios(entries: readonly CatalogueEntry[], root: string, projectRoot: string, indexFile = INDEX_FILE): Map<string, ListedScenario> {
  const known = new Map<string, ListedScenario>();
  let index: CatalogueIndex;
  try {
    index = JSON.parse(readFileSync(indexFile, 'utf8')) as CatalogueIndex;
  } catch {
    return known;
  }
  for (const [file, stamp] of Object.entries(index.loader ?? {})) if (stampOf(join(projectRoot, file)) !== stamp) return known;
  for (const entry of entries) {
    const item = index.scenarios?.[relative(root, entry.file)];
    if (item && sha256Of(entry.file) === item.sha256)
      known.set(entry.file, { name: item.name, description: item.description, file: entry.file, lab: item.lab });
  }
  return known;
}
