// Which rubric grades a class: --rubric (repeatable: rubrics graded together), or the lab's own
// that fit what the class submits — rubrics/<lab>.yaml for consumers, rubrics/<lab>-server.yaml
// for push servers (a manifest's `server`), both together when the class gives both. Without
// --lab, the lab is the one the manifests name or imply (./class-lab.ts).

import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { projectRoot } from '../../base/paths.js';
import { UsageError } from '../../base/exit-status.js';
import { allLabs, labNames } from '../../labs/registry.js';
import { type Manifest, readManifest } from '../manifest.js';
import { loadRubric, mergeRubrics, type Rubric, RubricError } from '../rubric.js';
import { agreedLab, ClassLabError, type LabDecision, manifestLab } from './class-lab.js';
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

/** What a class's manifests say: what it submits, and the lab each names or implies (./class-lab.ts). */
export interface ClassManifests {
  programs: { consumer: boolean; server: boolean };
  /** One per manifest that says something of its lab, in submission order (a string: it cannot decide, why). */
  labs: (LabDecision | string)[];
}

/**
 * What the whole class submits (every submission, whatever the shard, so that every shard
 * grades with the same rubric): consumers, push servers, or both; and what each manifest says of
 * its lab. A manifest that cannot be read counts as a consumer's (its submission is not graded,
 * as before) and says nothing of a lab.
 */
export function classManifests(dir: string, outDir: string): ClassManifests {
  const programs = { consumer: false, server: false };
  const labs: ClassManifests['labs'] = [];
  if (!existsSync(dir)) return { programs: { consumer: true, server: false }, labs };
  const serverLabs = allLabs()
    .filter((lab) => lab.server !== undefined)
    .map((lab) => lab.name);
  for (const name of listSubmissions(dir, { exclude: outDir }).submissions) {
    let manifest: Manifest;
    try {
      manifest = readManifest(join(dir, name));
    } catch {
      programs.consumer = true;
      continue;
    }
    programs.consumer ||= manifest.command !== undefined;
    programs.server ||= manifest.server !== undefined;
    const lab = manifestLab(manifest, join(dir, name, manifest.source), serverLabs);
    if (lab !== undefined) labs.push(lab);
  }
  return { programs: programs.consumer || programs.server ? programs : { consumer: true, server: false }, labs };
}

/**
 * The class's rubric: --rubric, else the rubrics of --lab, else of the lab the manifests name or
 * imply (a class of push servers needs no --lab), else of the registry's first lab. Manifests
 * that disagree, or one that cannot decide, are a UsageError naming them.
 */
export function classRubric(opts: { lab?: string; rubric?: string[] }, dir: string | undefined, outDir: string): Rubric {
  if (dir === undefined) return loadRubricOf(opts, { consumer: true, server: false });
  const { programs, labs } = classManifests(dir, outDir);
  if (opts.lab !== undefined || opts.rubric?.length) return loadRubricOf(opts, programs);
  let lab: LabDecision | undefined;
  try {
    lab = agreedLab(labs);
  } catch (error) {
    if (error instanceof ClassLabError) throw new UsageError(error.message);
    throw error;
  }
  if (lab === undefined) return loadRubricOf(opts, programs);
  if (!labNames().includes(lab.lab)) throw new UsageError(`${lab.file}: ${lab.why}: no such lab; labs: ${labNames().join(', ')}`);
  return loadRubricOf({ ...opts, lab: lab.lab }, programs);
}
