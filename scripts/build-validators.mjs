// Part of `make build` (after tsc): writes each lab's scenario validator as ajv standalone code to
// dist/harness/catalogue/validators/<lab>.cjs, so the CLI loads scenarios without compiling the
// schema (harness/catalogue/validator.ts; a stale or missing file falls back to compiling).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allLabs } from '../dist/harness/labs/registry.js';
import { schemaOfLab, standaloneSource } from '../dist/harness/catalogue/validator.js';

const dir = fileURLToPath(new URL('../dist/harness/catalogue/validators/', import.meta.url));
mkdirSync(dir, { recursive: true });
for (const lab of allLabs()) writeFileSync(join(dir, `${lab.name}.cjs`), standaloneSource(schemaOfLab(lab)));
