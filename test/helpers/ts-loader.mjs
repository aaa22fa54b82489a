// Loads the TypeScript of tests and the modules they import with esbuild, in place of tap's
// ts-node, which ran the TypeScript compiler over every module a test file imports, in every
// test file's process (4.5 s of CPU for test/harness/report/color.test.ts; 1.1 s so). Nothing is
// type-checked here: `make lint` does that (tsconfig.test.json). The source maps carry the
// sources, so that coverage maps back to the .ts lines. Loaded by .taprc's node-arg.
import module from 'node:module';

// In this thread with module.registerHooks where it is sound (as tap's processinfo decides:
// Node 24.13+, 25.1+); module.register, on Node's loader thread, before that (Node 26 deprecates it).
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (typeof module.registerHooks === 'function' && (major > 25 || (major === 25 && minor >= 1) || (major === 24 && minor >= 13)))
  module.registerHooks(await import('./ts-loader-hooks.mjs'));
else module.register('./ts-loader-hooks.mjs', import.meta.url);
