// Node's module compile cache (Node 22.1 and later): V8's code for the modules chaoslab loads,
// kept between processes in node_modules/.cache/chaoslab-compile (NODE_COMPILE_CACHE overrides
// it), so a command compiles its modules once per build rather than once per process. On Node 24
// here an unsealed `run ack-crash` took some 40 ms less. Node 20 has no such cache: nothing
// happens there. Node skips a cache it cannot write (a read-only checkout) and entries of files
// that changed; NODE_DISABLE_COMPILE_CACHE turns it off.

import module from 'node:module';
import { join } from 'node:path';
import { projectRoot } from './paths.js';

type WithCompileCache = { enableCompileCache?: (directory?: string) => unknown };

/** Called by each entry point (the CLI, the sealed worker) before its other modules load. */
export function enableCompileCache(): void {
  // Coverage is collected from V8 as it compiles: a cached compile would count less.
  if (process.env.NODE_V8_COVERAGE) return;
  const directory = process.env.NODE_COMPILE_CACHE ? undefined : join(projectRoot, 'node_modules', '.cache', 'chaoslab-compile');
  (module as WithCompileCache).enableCompileCache?.(directory);
}
