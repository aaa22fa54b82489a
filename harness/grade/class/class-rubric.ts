// Which rubric grades a class: --rubric (repeatable: rubrics graded together), or the lab's own
// that fit what the class submits — rubrics/<lab>.yaml for consumers, rubrics/<lab>-server.yaml
// for push servers (a manifest's `server`), both together when the class gives both.

import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { projectRoot } from '../../base/paths.js';
import { UsageError } from '../../base/exit-status.js';
import { labNames } from '../../labs/registry.js';
import { readManifest } from '../manifest.js';
import { loadRubric, mergeRubrics, type Rubric, RubricError } from '../rubric.js';
import { listSubmissions } from './submissions.js';

/**
 * The rubric: --rubric (several are graded together), or the lab's own that fit the class —
 * rubrics/<lab>.yaml for consumers, rubrics/<lab>-server.yaml (where the lab has one) when some
 * manifest names a `server`, both when the class gives both. A --lab that the rubric's lab
 * contradicts is an error naming both.
 */
export function loadRubricOf(opts: { lab?: string; rubric?: string[] }, programs: { consumer: boolean; server: boolean }): Rubric {
  // The registry's first lab when neither --lab nor --rubric says which (grade --help says so).
  const lab = opts.lab ?? labNames()[0]!;
  if (!opts.rubric?.length && !labNames().includes(lab)) throw new UsageError(`unknown lab "${lab}"; labs: ${labNames().join(', ')}`);
  const files = opts.rubric?.length ? opts.rubric.map((f) => resolve(f)) : defaultRubricFiles(lab, programs);
  let rubric: Rubric;
  try {
    rubric = mergeRubrics(files.map((file) => loadRubric(file, labNames())));
  } catch (error) {
    if (error instanceof RubricError) throw new UsageError(error.message);
    throw error;
  }
  if (opts.lab !== undefined && rubric.lab !== opts.lab)
    throw new UsageError(
      `--lab ${opts.lab}, but the rubric ${relative(process.cwd(), rubric.file)} is for the ${rubric.lab} lab: give one of them, or both for the same lab`,
    );
  return rubric;
}

/** The lab's rubrics for what the class submits: its consumer rubric, its server rubric, or both. */
export function defaultRubricFiles(lab: string, programs: { consumer: boolean; server: boolean }): string[] {
  const consumer = join(projectRoot, 'rubrics', `${lab}.yaml`);
  const server = join(projectRoot, 'rubrics', `${lab}-server.yaml`);
  if (!programs.server || !existsSync(server)) return [consumer];
  return programs.consumer ? [consumer, server] : [server];
}

/**
 * What the whole class submits (every submission, whatever the shard, so that every shard
 * grades with the same rubric): consumers, push servers, or both. A manifest that cannot be read
 * counts as a consumer's (its submission is not graded, as before).
 */
export function classPrograms(dir: string, outDir: string): { consumer: boolean; server: boolean } {
  const programs = { consumer: false, server: false };
  if (!existsSync(dir)) return { consumer: true, server: false };
  for (const name of listSubmissions(dir, { exclude: outDir }).submissions) {
    try {
      const manifest = readManifest(join(dir, name));
      programs.consumer ||= manifest.command !== undefined;
      programs.server ||= manifest.server !== undefined;
    } catch {
      programs.consumer = true;
    }
  }
  return programs.consumer || programs.server ? programs : { consumer: true, server: false };
}
