// Labs found by folder: every `harness/labs/<name>/index.{ts,js}` beside this module, then every
// `<name>/index.{ts,js}` in the folders CHAOSLAB_LAB_DIRS names (colon-separated; how the test
// fixtures add a lab without touching a file outside its folder). No list names the labs: adding
// one is adding its folder. A lab's name is its folder's, so one lab can be loaded alone: a run
// loads its own lab only (the feed lab's modules were some 25 ms of a sealed ledger run's start),
// and the others only if its watch for another lab's consumer needs them (harness/run/execute.ts).
// With registry.ts, the only module that imports labs (test/harness/labs/boundary.test.ts).

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Lab } from '../lab-api/lab.js';

/** The environment variable naming extra folders of labs. */
export const LAB_DIRS_VARIABLE = 'CHAOSLAB_LAB_DIRS';

/** Built-in labs sit beside this module: sources under tap's TypeScript loader, `.js` in dist/. */
const BUILT_IN = fileURLToPath(new URL('.', import.meta.url));

interface LabFolder {
  name: string;
  folder: string;
}

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

/** `dir`'s sub-folders, by name. */
function foldersIn(dir: string): LabFolder[] {
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort()
    .map((name) => ({ name, folder: join(dir, name) }));
}

/** Every lab folder: the built-in ones, then those of each folder CHAOSLAB_LAB_DIRS names, in its order. */
function labFolders(env: NodeJS.ProcessEnv = process.env): LabFolder[] {
  const extra = (env[LAB_DIRS_VARIABLE] ?? '').split(':').filter((dir) => dir !== '');
  for (const dir of extra) if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${LAB_DIRS_VARIABLE}: ${dir} is not a folder`);
  return [BUILT_IN, ...extra].flatMap(foldersIn);
}

const imported = new Map<string, Promise<Lab>>();

/** The lab of one folder, imported once. */
function importLab({ name, folder }: LabFolder): Promise<Lab> {
  let lab = imported.get(folder);
  if (!lab) {
    const file = indexOf(folder);
    lab = import(pathToFileURL(file).href).then((module: Record<string, unknown>) => {
      const found = labExportOf(module, file);
      if (found.name !== name) throw new Error(`${file}: the lab is named "${found.name}", but its folder "${name}"`);
      return found;
    });
    imported.set(folder, lab);
  }
  return lab;
}

/** The lab named `name` alone, without the others' modules (the first folder of that name, as loadAllLabs checks none repeats). */
export async function loadLab(name: string): Promise<Lab | undefined> {
  const folder = labFolders().find((f) => f.name === name);
  return folder && importLab(folder);
}

/**
 * Every lab, in a stable order: the default lab (the one a scenario file without `protocol`
 * speaks) first, then the built-in ones by folder name, then those of CHAOSLAB_LAB_DIRS.
 */
export async function loadAllLabs(): Promise<readonly Lab[]> {
  const all: Lab[] = [];
  for (const folder of labFolders()) all.push(await importLab(folder));
  const names = all.map((lab) => lab.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new Error(`two labs are named "${twice}" (each lab's name is its folder's, unique across ${LAB_DIRS_VARIABLE} too)`);
  const defaults = all.filter((lab) => lab.isDefault);
  if (defaults.length > 1) throw new Error(`only one lab may be the default, but ${defaults.map((lab) => lab.name).join(' and ')} say they are`);
  return [...defaults, ...all.filter((lab) => !lab.isDefault)];
}
