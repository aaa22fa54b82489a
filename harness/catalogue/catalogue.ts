// The scenario catalogue: `scenarios/<lab>/<name>.yaml`, one folder per lab. Names are unique
// across labs, so `chaoslab run ack-crash` needs no lab.

import { statSync } from 'node:fs';
import path from 'node:path';
import { catalogue, type ListedScenario, scenarioFileNames } from './catalogue-files.js';
import { loadScenario, type Scenario } from './load.js';
import { closest, displayPath, ScenarioError, type ScenarioProblem } from '../scenario/problems.js';
import { NAME_PATTERN } from '../scenario/schema-problems.js';

export { type CatalogueEntry, catalogue, type ListedScenario } from './catalogue-files.js';

/** Scenario names of the catalogue (of one lab, when given). */
export function scenarioNames(root: string, lab?: string): string[] {
  return catalogue(root)
    .filter((e) => !lab || e.lab === lab)
    .map((e) => e.name);
}

/** `resolveScenario` found neither a file nor a scenario of that name. */
export class UnknownScenarioError extends ScenarioError {
  constructor(
    readonly requested: string,
    readonly available: string[],
    root: string,
  ) {
    const hint = closest(requested, available);
    super(
      [],
      `unknown scenario "${requested}": no such file, and no ${path.join(displayPath(root), '<lab>', `${requested}.yaml`)}` +
        // The suggestion alone: the whole list is one `chaoslab list` away.
        (hint ? ` (did you mean "${hint}"?)` : available.length > 0 ? ' (see `chaoslab list`)' : ' (the catalogue is empty)'),
    );
    this.name = 'UnknownScenarioError';
  }
}

/**
 * A scenario argument as typed by a user: an existing file path wins; otherwise a name is
 * looked up in the catalogue. Returns an absolute path; throws UnknownScenarioError (with a
 * "did you mean" when a name is close) when neither exists.
 */
export function resolveScenario(nameOrPath: string, root: string): string {
  if (isFile(nameOrPath)) return path.resolve(nameOrPath);
  if (new RegExp(NAME_PATTERN).test(nameOrPath)) {
    const found = catalogue(root).find((e) => e.name === nameOrPath);
    if (found) return found.file;
  }
  throw new UnknownScenarioError(nameOrPath, scenarioNames(root), root);
}

/**
 * Loads every scenario of the catalogue (of one lab, when given). If any file is bad, throws
 * one ScenarioError with the problems of all bad files; so does a name used in two labs.
 * `known`: scenarios already known to load, by file (the build's index, catalogue-index.ts),
 * taken as they are instead of being loaded again.
 */
export function listScenarios(root: string, lab?: string, known?: ReadonlyMap<string, ListedScenario>): ListedScenario[] {
  const out: ListedScenario[] = [];
  const problems: ScenarioProblem[] = [];
  const seen = new Map<string, string>();
  for (const entry of catalogue(root)) {
    const other = seen.get(entry.name);
    if (other)
      problems.push({
        file: displayPath(entry.file),
        line: 1,
        column: 1,
        field: 'name',
        message: `"${entry.name}" is also a scenario of ${displayPath(other)}: names are unique across labs`,
      });
    seen.set(entry.name, entry.file);
    if (lab && entry.lab !== lab) continue;
    const listed = known?.get(entry.file);
    if (listed) {
      out.push(listed);
      continue;
    }
    try {
      const s = loadScenario(entry.file);
      out.push({ name: s.name, description: s.description, file: s.file, lab: s.protocol });
    } catch (error) {
      if (!(error instanceof ScenarioError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ScenarioError(problems);
  return out;
}

/**
 * Loads every scenario file of one lab's own folder (`Lab.scenariosDir`: the catalogue's
 * `scenarios/<lab>/`, or a folder of the lab's elsewhere), sorted by name. If any file is bad,
 * throws one ScenarioError with the problems of all bad files.
 */
export function loadLabScenarios(dir: string): Scenario[] {
  const out: Scenario[] = [];
  const problems: ScenarioProblem[] = [];
  // Code-unit order, as catalogue() sorts (why there).
  for (const name of scenarioFileNames(dir).sort()) {
    try {
      out.push(loadScenario(path.join(dir, `${name}.yaml`)));
    } catch (error) {
      if (!(error instanceof ScenarioError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ScenarioError(problems);
  return out;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
