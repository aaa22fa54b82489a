// What a submission's build output depends on, hashed into the key of the build cache
// (build-cache.ts): the submission's files as the grader copied them (paths, kinds, bytes, the
// executable bit, a link's target as text; never a time stamp), and whatever else changes what
// the build makes: its command, the lab, the platform, how it was confined (sealed builds run as
// a slot's uid without network), the Node it gets headers from, the package caches staff named,
// and the program the command starts (path, size and change time: an upgraded `go`, `npm` or
// `make` is a new file). Toolchains the command reaches only indirectly (the compiler `make`
// runs) are not known here: after such an upgrade staff grade with --no-build-cache once, or
// empty the cache folder.

import { createHash, type Hash } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { sep } from 'node:path';
import { resolveProgram } from '../../sandbox/room.js';
import { nodePrefix } from './build-env.js';
import { treeHash } from '../provenance.js';

/** Bumped when what a cache entry holds, or what the key covers, changes. */
export const BUILD_KEY_FORMAT = 'chaoslab build cache 1';

/** The package caches build-env.ts hands every build. */
const CACHE_VARIABLES = ['CHAOSLAB_NPM_CACHE', 'CHAOSLAB_GOMODCACHE', 'CHAOSLAB_PIP_WHEELS'] as const;

export interface BuildConditions {
  /** The manifest's `build`. */
  command: string;
  lab: string;
  /** Run as a slot's uid in namespaces of its own (sealed) or as the grader's user. */
  sealed: boolean;
  /** The host's network (unsealed builds always have it). */
  network: boolean;
  /** The PATH the build's program is looked up in. */
  path: string;
  /** The grader's environment (the package caches it names). */
  env?: NodeJS.ProcessEnv;
}

/** sha256 of a tree's content, executable bits included (../provenance.ts treeHash). */
export const contentHash = (dir: string): string => treeHash(dir, true);

/** The key of a build of the submission copied to `dir` (before its build wrote into it), under `conditions`. */
export function buildKey(dir: string, conditions: BuildConditions): string {
  const hash = createHash('sha256');
  const line = (name: string, value: string) => hash.update(`${name}\0${value}\0`);
  line('format', BUILD_KEY_FORMAT);
  line('content', contentHash(dir));
  line('command', conditions.command);
  line('lab', conditions.lab);
  line('platform', `${platform()} ${arch()}`);
  line('confinement', `${conditions.sealed ? 'sealed' : 'unsealed'} ${conditions.network ? 'network' : 'no network'}`);
  line('node', `${process.version} ${nodePrefix()}`);
  const env = conditions.env ?? process.env;
  for (const name of CACHE_VARIABLES) line(name, env[name] ?? '');
  programOf(hash, conditions.command, dir, conditions.path);
  return `sha256:${hash.digest('hex')}`;
}

/** The program the build command starts, when it is a file outside the submission: where it is, its size and change time. */
function programOf(hash: Hash, command: string, dir: string, path: string): void {
  const program = resolveProgram(command, dir, path);
  if (program?.file === undefined) {
    hash.update(`program\0${program?.word ?? ''}\0`);
    return;
  }
  // The submission's own script is in its content already (its path here differs per copy).
  if (program.file.startsWith(dir + sep)) return;
  try {
    const real = realpathSync(program.file);
    const st = statSync(real);
    hash.update(`program\0${real}\0${st.size}\0${st.mtimeMs}\0${st.ctimeMs}\0`);
  } catch {
    hash.update(`program\0${program.file}\0missing\0`);
  }
}
