// Grades one submission: its manifest, a private copy, the build (once, then read-only), the
// rubric's runs (k per scenario) as one batch with the copy as working directory, the scores
// from the runs' verdicts, and the files a student may see in <out>/<submission>/ (results.json,
// junit.xml, build.log, the reports of failing non-hidden scenarios). Runs, copies and hidden
// scenarios' reports stay in <out>/.staff/<submission>/, which is root's and closed (0700) once
// the submission is done, so a later submission cannot reach it.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BatchItem, runBatch } from '../batch.js';
import { jsonText } from '../report/inert.js';
import { resolveProgram, SEALED_PATH } from '../sandbox/room.js';
import { leaseUid } from '../sandbox/uids.js';
import type { Scenario } from '../scenario/types.js';
import { makeReadOnly, runBuild } from './build.js';
import type { Sealing } from './class-data.js';
import { gradescopeResults } from './gradescope.js';
import { submissionJunit } from './junit.js';
import { ManifestError, readManifest } from './manifest.js';
import type { Rubric } from './rubric.js';
import { type RunOutcome, type SubmissionScore, scoreSubmission, ungradable } from './score.js';

export const STAFF_DIR = '.staff';

export interface GradeSetup {
  rubric: Rubric;
  /** The rubric's scenarios, loaded, by name. */
  scenarios: ReadonlyMap<string, Scenario>;
  sealing: Sealing;
  jobs: number;
  outDir: string;
  /** Whole-submission deadline (build excluded): runs still going are stopped and fail. */
  deadlineMs: number;
  buildDeadlineMs: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

/** A folder to grade (with its manifest), or one command run from `cwd` (`grade --consumer`). */
export type SubmissionSource = { name: string; folder: string } | { name: string; command: string; cwd: string };

export interface Graded {
  score: SubmissionScore;
  /** Some run ended in a harness error: the grader could not do its job there. */
  harnessError: boolean;
}

export async function gradeSubmission(setup: GradeSetup, source: SubmissionSource): Promise<Graded> {
  const started = Date.now();
  const studentDir = join(setup.outDir, source.name);
  const staffDir = join(setup.outDir, STAFF_DIR, source.name);
  mkdirSync(studentDir, { recursive: true });
  mkdirSync(staffDir, { recursive: true });
  // Passable (the sealed uid reaches its working directory through it), never listable.
  chmodSync(join(setup.outDir, STAFF_DIR), 0o711);
  chmodSync(staffDir, 0o711);
  let graded: Graded;
  try {
    graded = await gradeIn(setup, source, studentDir, staffDir);
  } finally {
    chmodSync(staffDir, 0o700);
  }
  const results = gradescopeResults(graded.score, setup.rubric, setup.sealing, (Date.now() - started) / 1000);
  writeFileSync(join(studentDir, 'results.json'), jsonText(results));
  writeFileSync(join(studentDir, 'junit.xml'), submissionJunit(graded.score, setup.rubric, setup.sealing));
  // The report of each failing scenario a student may see (hidden ones stay with the staff).
  for (const s of graded.score.scenarios) {
    if (s.status === 'failed' && s.visibility !== 'hidden' && s.failedRunDir && existsSync(join(s.failedRunDir, 'report.html'))) {
      mkdirSync(join(studentDir, 'reports'), { recursive: true });
      copyFileSync(join(s.failedRunDir, 'report.html'), join(studentDir, 'reports', `${s.name}.html`));
    }
  }
  return graded;
}

async function gradeIn(setup: GradeSetup, source: SubmissionSource, studentDir: string, staffDir: string): Promise<Graded> {
  const { rubric } = setup;
  const zero = (how: string, problem: string): Graded => ({ score: ungradable(source.name, rubric, how, problem), harnessError: false });
  let command: string;
  let cwd: string;
  let how: string;
  if ('command' in source) {
    command = source.command;
    cwd = source.cwd;
    how = `the command \`${command}\``;
  } else {
    let manifest: ReturnType<typeof readManifest>;
    try {
      manifest = readManifest(source.folder);
    } catch (error) {
      if (error instanceof ManifestError) return zero('no command', error.message.replace(source.folder, source.name));
      throw error;
    }
    how = `${manifest.source}: \`${manifest.command}\``;
    if (manifest.lab !== undefined && manifest.lab !== rubric.lab)
      return zero(how, `the manifest names lab "${manifest.lab}", but this class is graded for the ${rubric.lab} lab`);
    // A private copy: the build writes only there, and nothing a run does reaches the original.
    cwd = join(staffDir, 'build');
    cpSync(realpathSync(source.folder), cwd, { recursive: true, verbatimSymlinks: true });
    if (manifest.build) {
      setup.log?.(`  ${source.name}: building: ${manifest.build}`);
      const lease = setup.sealing.sealed ? leaseUid(0) : undefined;
      try {
        const built = await runBuild({
          command: manifest.build,
          dir: cwd,
          deadlineMs: setup.buildDeadlineMs,
          logFile: join(studentDir, 'build.log'),
          ...(setup.signal ? { signal: setup.signal } : {}),
          ...(lease ? { uid: lease.uid } : {}),
        });
        if (!built.ok) return zero(how, built.reason!);
      } finally {
        lease?.release();
      }
    }
    // Sealed, the consumer's uid cannot write a root-owned read-only tree. Unsealed, it runs as
    // the grader's user, who may change modes back: read-only bits would only keep the grader
    // itself from removing its output, so the copy stays as it is (every output says unsealed).
    if (setup.sealing.sealed) makeReadOnly(cwd);
    command = manifest.command;
  }
  const missing = missingProgram(command, cwd, setup.sealing.sealed ? SEALED_PATH : (process.env.PATH ?? ''));
  if (missing) return zero(how, `the command \`${command}\` cannot start: ${missing}`);

  const items: (BatchItem & { test: string })[] = rubric.tests.flatMap((test) =>
    Array.from({ length: test.repeat }, (_, i) => ({
      scenario: setup.scenarios.get(test.name)!,
      consumerCommand: command,
      label: test.repeat > 1 ? `${test.name} #${i + 1}` : test.name,
      test: test.name,
    })),
  );
  // The whole submission's deadline: runs still going stop (interrupted), and fail.
  const deadline = AbortSignal.timeout(setup.deadlineMs);
  const signal = setup.signal ? AbortSignal.any([setup.signal, deadline]) : deadline;
  const { results } = await runBatch(`grade-${source.name}`, items, {
    jobs: setup.jobs,
    cwd,
    reportsDir: join(staffDir, 'runs'),
    seal: setup.sealing.sealed ? 'on' : 'off',
    // Sealed, a run's consumer reaches its own room through the batch folder but cannot list it.
    ...(setup.sealing.sealed ? { folderMode: 0o711 } : {}),
    signal,
    commandLine: `chaoslab grade (${source.name})`,
    onFinish: (item, result) => setup.log?.(`  ${source.name} × ${item.label}: ${result.status}`),
  });
  const outcomes = new Map<string, RunOutcome[]>();
  results.forEach((result, i) => {
    const test = items[i]!.test;
    const reasons = result.error ? [result.error] : result.view ? [...result.view.harnessErrors, ...result.view.findings].map((f) => f.text) : [];
    outcomes.set(test, [...(outcomes.get(test) ?? []), { status: result.status, reasons, runDir: result.runDir }]);
  });
  return { score: scoreSubmission(source.name, rubric, outcomes, how), harnessError: results.some((r) => r.status === 'error') };
}

/** Why the command's program cannot start (a path that is not there, a name bash does not know), or undefined. */
function missingProgram(command: string, cwd: string, path: string): string | undefined {
  const program = resolveProgram(command, cwd, path);
  if (!program) return 'it is empty';
  if (program.file !== undefined) return existsSync(program.file) ? undefined : `${program.word} not found`;
  // Not in PATH: a shell builtin or keyword (`exec`, `exit`, `cd`) still starts.
  const type = spawnSync('bash', ['-c', 'type -t -- "$1"', 'chaoslab-type', program.word], { cwd, env: { PATH: path }, encoding: 'utf8' });
  return type.stdout.trim() === '' ? `${program.word} not found` : undefined;
}
