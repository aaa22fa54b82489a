// The labs, by the name a scenario's `protocol` gives, found by folder: every
// `harness/labs/<name>/index.{ts,js}` beside this module, then every `<name>/index.{ts,js}` in the
// folders CHAOSLAB_LAB_DIRS names (colon-separated; how the test fixtures add a lab without
// touching a file outside its folder). No list names the labs: adding one is adding its folder.
// The one module that imports labs: the core reaches them only through these functions and the
// interface in harness/lab-api/lab.ts (test/harness/labs/boundary.test.ts holds every other module to that).

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Lab } from '../lab-api/lab.js';

/** The environment variable naming extra folders of labs. */
export const LAB_DIRS_VARIABLE = 'CHAOSLAB_LAB_DIRS';

/** Built-in labs sit beside this module: sources under tap's TypeScript loader, `.js` in dist/. */
const BUILT_IN = fileURLToPath(new URL('.', import.meta.url));

/** A lab folder's plug-in module: `index.js` where compiled, else `index.ts` (run from source). */
function indexOf(folder: string): string {
  const found = ['index.js', 'index.ts'].map((f) => join(folder, f)).find((f) => existsSync(f));
  if (!found) throw new Error(`lab folder ${folder} has no index.ts or index.js (a lab's plug-in, harness/lab-api/lab.ts)`);
  return found;
}

/** A lab module's one export that is a Lab (`defineLab(...)`): a name, a run and a check. */
function labExportOf(module: Record<string, unknown>, file: string): Lab {
  const labs = Object.values(module).filter(
    (v): v is Lab =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as Lab).name === 'string' &&
      typeof (v as Lab).run === 'function' &&
      typeof (v as Lab).check === 'function',
  );
  const unique = [...new Set(labs)];
  if (unique.length !== 1) throw new Error(`${file} must export exactly one lab (defineLab), found ${unique.length}`);
  return unique[0]!;
}

/** The labs of `dir`'s sub-folders, by folder name; a lab's name is its folder's. */
async function labsIn(dir: string): Promise<Lab[]> {
  const folders = readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort();
  const labs: Lab[] = [];
  for (const name of folders) {
    const file = indexOf(join(dir, name));
    const lab = labExportOf((await import(pathToFileURL(file).href)) as Record<string, unknown>, file);
    if (lab.name !== name) throw new Error(`${file}: the lab is named "${lab.name}", but its folder "${name}"`);
    labs.push(lab);
  }
  return labs;
}

/** The extra lab folders the environment names, in its order. */
function extraDirs(env: NodeJS.ProcessEnv): string[] {
  return (env[LAB_DIRS_VARIABLE] ?? '').split(':').filter((dir) => dir !== '');
}

/**
 * Every lab, in a stable order: the default lab (the one a scenario file without `protocol`
 * speaks) first, then the built-in ones by folder name, then those of CHAOSLAB_LAB_DIRS.
 */
async function discover(): Promise<readonly Lab[]> {
  const builtIn = await labsIn(BUILT_IN);
  const extra: Lab[] = [];
  for (const dir of extraDirs(process.env)) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${LAB_DIRS_VARIABLE}: ${dir} is not a folder`);
    extra.push(...(await labsIn(dir)));
  }
  const all = [...builtIn, ...extra];
  const names = all.map((lab) => lab.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new Error(`two labs are named "${twice}" (each lab's name is its folder's, unique across ${LAB_DIRS_VARIABLE} too)`);
  const defaults = all.filter((lab) => lab.isDefault);
  if (defaults.length > 1) throw new Error(`only one lab may be the default, but ${defaults.map((lab) => lab.name).join(' and ')} say they are`);
  return [...defaults, ...all.filter((lab) => !lab.isDefault)];
}

const LABS: readonly Lab[] = await discover();

/** Lab names, the default (for a scenario without `protocol`, and commands that need one lab) first. */
export const labNames = (): string[] => LABS.map((lab) => lab.name);

export const labNamed = (name: string): Lab | undefined => LABS.find((lab) => lab.name === name);

export const allLabs = (): readonly Lab[] => LABS;

/** Whether a scenario's program under test is its lab's push server (`--server`), not a consumer. */
export const testsServer = (scenario: { protocol: string; lab: unknown }): boolean => labNamed(scenario.protocol)?.server?.testsServer(scenario.lab) ?? false;
