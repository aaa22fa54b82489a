// Where the project lives, found from this module's own location so the harness works the
// same from dist/ (compiled) and from source (tap's TypeScript loader), whatever the cwd.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'chaoslab') return dir;
    if (dirname(dir) === dir) throw new Error('cannot find the chaoslab project root (package.json named "chaoslab")');
  }
}

export const projectRoot = findProjectRoot();
/** The catalogue: one folder per lab, `scenarios/<lab>/<name>.yaml`. */
export const scenariosDir = join(projectRoot, 'scenarios');
/**
 * Where reports go: `--out` (or its older name `--reports`), else `reports/` in the current
 * directory — the user's project, not the chaoslab install, which may be a global one.
 */
export const reportsDirOf = (opts: { out?: string; reports?: string }, cwd = process.cwd()): string => resolve(cwd, opts.out ?? opts.reports ?? 'reports');
/**
 * How paths in the reports folder are printed: as the user gave the folder, absolute when
 * `--out` was absolute, else relative to the cwd (the default `reports/` too).
 */
export const reportsPathShower =
  (opts: { out?: string; reports?: string }, cwd = process.cwd()) =>
  (path: string): string => {
    const given = opts.out ?? opts.reports;
    return given !== undefined && isAbsolute(given) ? resolve(cwd, path) : relative(cwd, path) || '.';
  };
export const toolsBinDir = join(projectRoot, '.tools', 'bin');
export const harnessVersion = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;

/** Quotes a path for /bin/sh. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;
