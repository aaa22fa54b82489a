// What makes a grade line reproducible: which chaoslab judged it, with which scenarios and seeds,
// which files of the submission, and the command that replays it on a staff machine. Computed
// once per submission by the grader; every output (results.json, grades.csv, the staff page)
// renders it, none recomputes it.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { harnessVersion, projectRoot, shellQuote } from '../base/paths.js';
import type { Scenario } from '../scenario/types.js';
import type { Rubric } from './rubric.js';

export interface Provenance {
  /** chaoslab's version and, when known, its commit (e.g. "0.1.0 (e656075)"). */
  chaoslab: string;
  lab: string;
  /** sha256 of the rubric and every scenario file it grades with, in rubric order. */
  scenarioSetHash: string;
  /** sha256 of the submission's files (relative paths and contents); absent for `grade --consumer`. */
  submissionHash?: string;
  /** The seeds each scenario's draws use, by scenario name (empty when a scenario draws nothing). */
  seeds: Record<string, number[]>;
  /** The command that grades this submission again, as staff type it. */
  replay: string;
}

/** chaoslab's version, with the commit when the project is a git checkout (a clean one, or "+changes"). */
export function chaoslabVersion(root = projectRoot): string {
  const git = (...args: string[]) => spawnSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const head = git('rev-parse', '--short=12', 'HEAD');
  if (head.status !== 0 || !head.stdout.trim()) return harnessVersion;
  const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'harness', 'scenarios', 'rubrics', 'package.json').stdout.trim() !== '';
  return `${harnessVersion} (${head.stdout.trim()}${dirty ? '+changes' : ''})`;
}

/** sha256 of the rubric file and every scenario file it grades with, in rubric order. */
export function scenarioSetHash(rubric: Rubric, scenarios: ReadonlyMap<string, Scenario>): string {
  const hash = createHash('sha256');
  // A rubric built in memory (tests) has no file: its checked tests stand for it.
  const files = rubric.files ?? [rubric.file];
  for (const file of files) hash.update(existsSync(file) ? readFileSync(file) : JSON.stringify(rubric.tests));
  for (const test of rubric.tests) {
    const scenario = scenarios.get(test.name);
    hash.update(`\0${test.name}\0`);
    if (scenario) hash.update(readFileSync(scenario.file));
  }
  return `sha256:${hash.digest('hex')}`;
}

/**
 * sha256 of a submission's files: every entry's relative path (sorted, '/'-separated), its kind
 * and its content (a link's target as text: no link is followed). Taken from the grader's own copy
 * (no-follow.ts) before the build writes into it.
 */
export const submissionHash = (dir: string): string => treeHash(dir, false);

/**
 * sha256 of a tree's content: each entry's relative path, its kind, a file's bytes (and, with
 * `executable`, whether it is executable: the build key's, ./build/build-key.ts), a link's target
 * as text. Owners, other mode bits and times are left out: a copy made later hashes the same.
 */
export function treeHash(dir: string, executable: boolean): string {
  const hash = createHash('sha256');
  const walk = (rel: string): void => {
    const names = readdirSync(join(dir, rel)).sort();
    for (const name of names) {
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, path));
      if (st.isDirectory()) {
        hash.update(`d\0${path}\0`);
        walk(path);
      } else if (st.isSymbolicLink()) hash.update(`l\0${path}\0${readlinkSync(join(dir, path))}\0`);
      else if (st.isFile()) {
        const content = readFileSync(join(dir, path));
        hash.update(`${executable && st.mode & 0o111 ? 'x' : 'f'}\0${path}\0${content.length}\0`);
        hash.update(content);
      } else hash.update(`o\0${path}\0`);
    }
  };
  walk('');
  return `sha256:${hash.digest('hex')}`;
}

/** Every `seed:` a scenario file sets (fault draws, generated events, a chaos repro), in file order. */
export function scenarioSeeds(scenario: Pick<Scenario, 'source'>): number[] {
  const seeds: number[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object')
      for (const [key, value] of Object.entries(node)) {
        if (key === 'seed' && typeof value === 'number') seeds.push(value);
        else visit(value);
      }
  };
  try {
    visit(parse(scenario.source));
  } catch {
    // The scenario was loaded from this text already; a parse error here cannot happen.
  }
  return seeds;
}

/** What is graded: a submission folder of a class, or one command run from a folder (`grade --consumer`). */
export type ReplayTarget = { classDir: string; name: string } | { command: string; cwd: string; name: string };

/**
 * The command that grades a submission again (`only`: just that scenario), as staff type it:
 * the class folder and the submission, the rubric, and every option that changes a verdict
 * (`replayOptions`, from the grading's own options).
 */
export function replayCommand(target: ReplayTarget, rubricFile: string | readonly string[], replayOptions: readonly string[], only?: string): string {
  const what =
    'classDir' in target
      ? ['chaoslab grade', shellQuote(target.classDir), '--submission', shellQuote(target.name)]
      : [`cd ${shellQuote(target.cwd)} && chaoslab grade --consumer`, shellQuote(target.command), '--name', shellQuote(target.name)];
  const rubrics = (typeof rubricFile === 'string' ? [rubricFile] : rubricFile).flatMap((file) => ['--rubric', shellQuote(file)]);
  return [...what, ...rubrics, ...(only ? ['--only', shellQuote(only)] : []), ...replayOptions].join(' ');
}
