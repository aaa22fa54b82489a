// The yaml package, loaded on first use (synchronously: it is CommonJS). A scenario the build's
// index vouches for loads without it (harness/catalogue/catalogue-index.ts): its import was some
// 30 ms of a run's start.

import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let yaml: Yaml | undefined;

export const yamlModule = (): Yaml => (yaml ??= createRequire(import.meta.url)('yaml') as Yaml);
