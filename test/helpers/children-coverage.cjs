// How the node processes a test starts report coverage. tap puts its processinfo loader
// (--import=…/@tapjs/processinfo/…) in the NODE_OPTIONS of every child, and that loader records
// the child, turns on V8's coverage and writes both out at exit. These rewrite a child's
// environment as it is spawned (a process-on-spawn listener, run after tap's, which added it):
//   - end-to-end files: out (dropProcessinfo). Their coverage counts for nothing
//     (test/coverage-map.mjs), and the loader cost each of the chains' 700-odd children some
//     0.2 s of CPU and a coverage file;
//   - unit files: the same work without the loader's thread (processinfoInThread). Before
//     Node 24.13 processinfo registers its module hooks off-thread, and that thread cost each
//     child 0.1-0.2 s of CPU (`node -e 0`: 0.10 s bare, 0.26 s with it, 0.17 s without its
//     thread). `coverage-preload.cjs` does the rest on the main thread: the hooks only list the
//     files a process loaded, for `tap --changed`, which this project does not use; coverage
//     finds every file without that list (processinfo's own fallback), and source maps come from
//     Node's cache.
'use strict';
const { join } = require('node:path');

const PRELOAD = join(__dirname, 'coverage-preload.cjs');
// processinfo-no-hooks.mjs (the Makefile's NODE_OPTIONS) is for test files' processes only: out with processinfo.
const isProcessinfo = (option) => option.includes('@tapjs/processinfo') || option.includes('processinfo-no-hooks.mjs');

/** `env` with tap's processinfo loader taken out of its NODE_OPTIONS (and NODE_OPTIONS dropped when nothing is left), in place. */
function dropProcessinfo(env) {
  const options = env.NODE_OPTIONS;
  if (!options || !isProcessinfo(options)) return env;
  const kept = options.split(/\s+/).filter((option) => option && !isProcessinfo(option));
  if (kept.length > 0) env.NODE_OPTIONS = kept.join(' ');
  else delete env.NODE_OPTIONS;
  return env;
}

/** `env` with tap's processinfo loader replaced by coverage-preload.cjs in its NODE_OPTIONS, in place. */
function processinfoInThread(env) {
  if (!env.NODE_OPTIONS || !isProcessinfo(env.NODE_OPTIONS)) return env;
  dropProcessinfo(env);
  env.NODE_OPTIONS = [env.NODE_OPTIONS, `"--require=${PRELOAD}"`].filter(Boolean).join(' ');
  return env;
}

/** Rewrites the environment of every child this process spawns from now on. */
function rewriteChildren(rewrite) {
  const spawnHooks = globalThis[Symbol.for('process-on-spawn@*:singletonId')];
  spawnHooks?.listeners.push((child) => rewrite(child.env));
}

module.exports = { dropProcessinfo, processinfoInThread, rewriteChildren };
