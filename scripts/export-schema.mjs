// `make schema`: writes the scenario JSON Schema files (schemas/) from the one source,
// harness/scenario/schema.ts and the labs' parts (run after `make build`).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCHEMA_DIR, writeSchemas } from '../dist/harness/catalogue/export-schema.js';

const dir = join(fileURLToPath(new URL('..', import.meta.url)), SCHEMA_DIR);
for (const name of writeSchemas(dir)) console.log(`wrote ${SCHEMA_DIR}/${name}`);
