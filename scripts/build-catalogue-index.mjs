// Part of `make build` (after tsc and build-validators.mjs): the index `chaoslab list` and
// `loadScenario` read instead of parsing a scenario (harness/catalogue/catalogue-index.ts). Made
// only from a catalogue that loads; otherwise none is written, and every file is loaded and
// reports why. The old index goes first: what is written is what loading gives without it.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { listScenarios } from '../dist/harness/catalogue/catalogue.js';
import { loadScenario } from '../dist/harness/catalogue/load.js';
import { INDEX_FILE, makeIndex } from '../dist/harness/catalogue/catalogue-index.js';
import { projectRoot, scenariosDir } from '../dist/harness/base/paths.js';

/** `entry` and every module it imports statically (dynamic imports are not loading's: a lab's run). */
function staticImports(entry) {
  const seen = new Set();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    // `… from './x.js'` and `import './x.js'`, as tsc writes them.
    for (const [, a, b] of readFileSync(file, 'utf8').matchAll(/\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^import\s*['"](\.{1,2}\/[^'"]+)['"]/gm))
      queue.push(resolve(dirname(file), a ?? b));
  }
  return [...seen];
}

rmSync(INDEX_FILE, { force: true });
const validators = join(projectRoot, 'dist', 'harness', 'catalogue', 'validators');
const labs = join(projectRoot, 'dist', 'harness', 'labs');
const loader = [
  ...staticImports(join(projectRoot, 'dist', 'harness', 'catalogue', 'load.js')),
  // The registry imports each lab by its folder, not by a static import: their scenario loaders.
  ...readdirSync(labs, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => staticImports(join(labs, entry.name, 'index.js'))),
  ...readdirSync(validators).map((f) => join(validators, f)),
  createRequire(import.meta.url).resolve('yaml/package.json'),
];
let listed;
try {
  listed = listScenarios(scenariosDir);
} catch (error) {
  console.error(`note: no catalogue index (chaoslab list loads every file): ${error.message.split('\n')[0]}`);
  process.exit(0);
}
writeFileSync(INDEX_FILE, `${JSON.stringify(makeIndex(listed, scenariosDir, projectRoot, [...new Set(loader)], loadScenario))}\n`);
