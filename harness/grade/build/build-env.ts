// What a sealed build (no network) gets besides a clean environment, so that ordinary builds
// work offline:
//  - Node's headers for node-gyp (`npm_config_nodedir`): a native addon (better-sqlite3) that
//    has no prebuilt binary for this machine compiles against the installed Node's headers
//    (<prefix>/include/node) instead of downloading them. Absent headers are said in the log.
//  - Package caches staff filled beforehand, named by the grader's environment (docs/grading.md,
//    "Builds"): CHAOSLAB_NPM_CACHE (an npm cache folder, the one that holds `_cacache`, as ~/.npm: `npm ci`
//    runs --offline from it; npm's logs go to the build's HOME),
//    CHAOSLAB_GOMODCACHE (a Go module cache: GOPROXY=off), CHAOSLAB_PIP_WHEELS (a folder of
//    wheels: pip installs from it and no index). Each must be readable by the slot's uid.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface BuildEnv {
  env: Record<string, string>;
  /** Lines for the build log, before the build's own output. */
  notes: string[];
}

/** The installation prefix of the Node running the harness (/usr for /usr/bin/node). */
export function nodePrefix(execPath = process.execPath): string {
  return dirname(dirname(execPath));
}

/** The build's environment: Node's headers, and the caches staff named in `from` (the grader's environment). */
export function buildEnv(options: { network: boolean; home: string; from?: NodeJS.ProcessEnv; prefix?: string }): BuildEnv {
  const from = options.from ?? process.env;
  const prefix = options.prefix ?? nodePrefix();
  const env: Record<string, string> = {};
  const notes: string[] = [];
  const headers = join(prefix, 'include', 'node');
  if (existsSync(join(headers, 'node.h')) && existsSync(join(headers, 'common.gypi'))) env.npm_config_nodedir = prefix;
  else
    notes.push(
      `chaoslab: Node's headers were not found in ${headers} (node.h, common.gypi): node-gyp cannot build a native addon without a network; install them (e.g. the nodejs package's headers, or the official tarball's include/node)`,
    );
  const npmCache = from.CHAOSLAB_NPM_CACHE;
  if (npmCache) {
    env.npm_config_cache = npmCache;
    env.npm_config_logs_dir = join(options.home, '.npm', '_logs'); // npm writes its logs beside its cache otherwise
    if (!options.network) env.npm_config_offline = 'true';
    notes.push(`chaoslab: npm cache ${npmCache}${options.network ? '' : ' (offline)'}`);
  }
  const goModCache = from.CHAOSLAB_GOMODCACHE;
  if (goModCache) {
    env.GOMODCACHE = goModCache;
    if (!options.network) env.GOPROXY = 'off';
    notes.push(`chaoslab: Go module cache ${goModCache}${options.network ? '' : ' (GOPROXY=off)'}`);
  }
  const wheels = from.CHAOSLAB_PIP_WHEELS;
  if (wheels) {
    env.PIP_FIND_LINKS = wheels;
    if (!options.network) env.PIP_NO_INDEX = '1';
    notes.push(`chaoslab: pip wheels from ${wheels}${options.network ? '' : ' (no index)'}`);
  }
  for (const [name, folder] of [
    ['CHAOSLAB_NPM_CACHE', npmCache],
    ['CHAOSLAB_GOMODCACHE', goModCache],
    ['CHAOSLAB_PIP_WHEELS', wheels],
  ] as const)
    if (folder !== undefined && PRIVATE_TEMP.test(folder))
      notes.push(`chaoslab: ${name}=${folder} is out of a sealed build's reach: its /tmp, /var/tmp and /dev/shm are private and empty`);
  return { env, notes };
}

/** Folders a sealed process sees as fresh, empty tmpfs (confine.ts). */
const PRIVATE_TEMP = /^\/(tmp|var\/tmp|dev\/shm|run\/lock|var\/lock)(\/|$)/;
