// Loads the TypeScript of tests and the modules they import with esbuild, in place of tap's
// ts-node, which ran the TypeScript compiler over every module a test file imports, in every
// test file's process (4.5 s of CPU for test/harness/report/color.test.ts; 1.1 s so). Nothing is
// type-checked here: `make lint` does that (tsconfig.test.json). The source maps carry the
// sources, so that coverage maps back to the .ts lines. Loaded by .taprc's node-arg.
import { register } from 'node:module';

register('./ts-loader-hooks.mjs', import.meta.url);
