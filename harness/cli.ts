#!/usr/bin/env node
// chaoslab command line entry point: Node's compile cache first (base/compile-cache.ts), so that
// the command line's modules (harness/cli-main.ts), loaded after it, are compiled from the cache.
// For `chaoslab run`, the first sealed run's place opens beside them (run/early-place.ts).

import { enableCompileCache } from './base/compile-cache.js';
import { STAFF_UMASK } from './report/staff-only.js';

enableCompileCache();
// Whatever chaoslab writes (reports, batch and class outputs, grades, a sealed place's lease) is
// its user's alone: a sealed consumer runs as another uid and must read no report of another run
// (docs/sandbox.md). Set first, before the early place below opens.
process.umask(STAFF_UMASK);
// A place that cannot open early is no error: the command opens its own as before.
const early =
  process.argv[2] === 'run'
    ? import('./run/early-place.js').then(({ openEarlyPlace }) => openEarlyPlace(process.argv.slice(2), process.cwd())).catch(() => {})
    : undefined;
await import('./cli-main.js');
// The command closes a place it did not take; a command line that never reached it leaves it here.
if (early) await early.then(async () => (await import('./run/sealed.js')).discardPrewarmedPlace());
