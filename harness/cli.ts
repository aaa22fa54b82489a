#!/usr/bin/env node
// chaoslab command line entry point: Node's compile cache first (base/compile-cache.ts), so that
// the command line's modules (harness/cli-main.ts), loaded after it, are compiled from the cache.

import { enableCompileCache } from './base/compile-cache.js';

enableCompileCache();
await import('./cli-main.js');
