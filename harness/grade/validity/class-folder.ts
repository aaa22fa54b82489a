// The class a validity proof grades (docs/grading.md "Grading a class", `make grade-validity`): every
// consumer of a lab's mutant matrix (consumer/<lab>/mutants/index.yaml: both references, every
// mutant in each of its languages), or every server of its server matrix (the lab's server
// index: a manifest's `server` instead of `command`), as a submission folder with a manifest,
// JSON and YAML in turn, whose command names the project's file by its absolute path (the grader
// runs it from the submission's built copy, not from the project root as the matrix does).

import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { stringify } from 'yaml';
import { type MatrixConsumer, type MatrixProgram, mutantName, programOf } from '../../run/mutants.js';

export interface ValiditySubmission {
  /** The folder's name: ref-typescript, gap-skip-py. */
  name: string;
  /** The matrix row that judges it (matrix.json's `consumer`). */
  consumer: string;
  kind: MatrixConsumer['kind'];
  /** A push server of the server matrix (its manifest says `server`); undefined: a consumer. */
  program?: MatrixProgram;
  language: string;
  /** Run from anywhere: every project path in it is absolute. */
  command: string;
  manifest: 'chaoslab.json' | 'chaoslab.yaml';
}

const SHORT: Record<string, string> = { typescript: 'ts', python: 'py' };

/** The submissions of `consumers`, in matrix order; manifests alternate JSON, YAML. */
export function validitySubmissions(consumers: readonly MatrixConsumer[], root: string): ValiditySubmission[] {
  return consumers.map((c, i) => ({
    name: c.kind === 'reference' ? `ref-${c.language}` : `${mutantName(c)}-${SHORT[c.language] ?? c.language}`,
    consumer: c.label,
    kind: c.kind,
    ...(programOf(c) === 'server' ? { program: 'server' as const } : {}),
    language: c.language,
    command: absoluteCommand(c.command, root),
    manifest: i % 2 === 0 ? 'chaoslab.json' : 'chaoslab.yaml',
  }));
}

/** `node dist/x.js` → `node <root>/dist/x.js`: each word naming a file of the project. */
export function absoluteCommand(command: string, root: string): string {
  return command
    .split(' ')
    .map((word, i) => (i > 0 && word !== '' && !isAbsolute(word) && existsSync(join(root, word)) ? quoted(join(root, word)) : word))
    .join(' ');
}

const quoted = (path: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`);

/** Writes `<dir>/<submission>/<manifest>` for each; `dir` must not hold a class already. */
export function writeValidityClass(dir: string, lab: string, submissions: readonly ValiditySubmission[]): void {
  mkdirSync(dir, { recursive: true });
  // Root's alone: a sealed grading refuses a class folder the sandbox uids can pass through.
  chmodSync(dir, 0o700);
  for (const s of submissions) {
    const folder = join(dir, s.name);
    if (existsSync(folder)) throw new Error(`${folder} exists already: give the proof an empty folder`);
    mkdirSync(folder);
    const manifest = s.program === 'server' ? { lab, server: s.command } : { lab, command: s.command };
    writeFileSync(join(folder, s.manifest), s.manifest === 'chaoslab.json' ? `${JSON.stringify(manifest, null, 2)}\n` : stringify(manifest, { lineWidth: 0 }));
  }
}
