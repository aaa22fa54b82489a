// Grades one submission: its manifest, a private copy in the grading workspace (outside the
// output folder: workspace.ts), the build (once, sealed as the slot's uid without network, then
// read-only), the rubric's runs (k per scenario) as one batch with the copy as working
// directory, the scores from the runs' verdicts, and the files a student may see in
// <out>/<submission>/ (results.json, junit.xml, build.log, the reports of failing non-hidden
// scenarios; closed to the sandbox uids). Runs, the built copy and hidden scenarios' reports stay
// in <out>/.staff/<submission>/, root's and closed (0700) once the submission is done, so a later
// submission cannot reach it.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BatchItem, runBatch } from '../batch.js';
import { closeFolder, makePassable, PASSABLE } from '../report/staff-only.js';
import { jsonText } from '../report/inert.js';
import { resolveProgram, SEALED_PATH } from '../sandbox/room.js';
import { leaseUid } from '../sandbox/uids.js';
import type { Scenario } from '../scenario/types.js';
import { makeReadOnly, runBuild } from './build.js';
import type { Sealing } from './class-data.js';
import { gradescopeResults } from './gradescope.js';
import { submissionJunit } from './junit.js';
import { ManifestError, readManifest } from './manifest.js';
import { copySubmission, SubmissionFileError } from './no-follow.js';
import type { Rubric } from './rubric.js';
import { type RunOutcome, type SubmissionScore, scoreSubmission, ungradable } from './score.js';
import type { Workspace } from './workspace.js';

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
  /** Where submissions are copied and built (outside outDir). */
  workspace: Workspace;
  /** Sealed builds get the host's network (--build-network); else a network namespace of their own. */
  buildNetwork?: boolean;
  /** `--store-limit` for every run. */
  storeLimitBytes?: number;
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
  mkdirSync(studentDir, { recursive: true, mode: 0o700 });
  chmodSync(studentDir, 0o700);
  mkdirSync(staffDir, { recursive: true });
  // Passable (a sealed consumer reaches its room through them), never listable; the output
  // folder itself too.
  makePassable(setup.outDir);
  chmodSync(join(setup.outDir, STAFF_DIR), PASSABLE);
  chmodSync(staffDir, PASSABLE);
  let graded: Graded;
  try {
    graded = await gradeIn(setup, source, studentDir, staffDir);
  } finally {
    closeFolder(staffDir);
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
  // The student's files are staff's to hand out: no sandbox uid reads another student's.
  closeFolder(studentDir);
  return graded;
}

async function gradeIn(setup: GradeSetup, source: SubmissionSource, studentDir: string, staffDir: string): Promise<Graded> {
  const { rubric } = setup;
  if ('command' in source) return gradeRuns(setup, source, staffDir, source.command, source.cwd, `the command \`${source.command}\``);
  const zero = (how: string, problem: string): Graded => ({ score: ungradable(source.name, rubric, how, problem), harnessError: false });
  let manifest: ReturnType<typeof readManifest>;
  try {
    manifest = readManifest(source.folder);
  } catch (error) {
    if (error instanceof ManifestError) return zero('no command', error.message.replace(source.folder, source.name));
    throw error;
  }
  const how = `${manifest.source}: \`${manifest.command}\``;
  if (manifest.lab !== undefined && manifest.lab !== rubric.lab)
    return zero(how, `the manifest names lab "${manifest.lab}", but this class is graded for the ${rubric.lab} lab`);
  // A private copy in the workspace, outside the output folder: the build writes only there,
  // nothing a run does reaches the original, and `..` from it leads to nothing listable.
  // Kept for staff in <out>/.staff/<name>/build once the submission's runs are over.
  const copy = setup.workspace.copyPath();
  try {
    return await gradeCopy(setup, source, studentDir, staffDir, manifest, how, copy);
  } finally {
    setup.workspace.keep(copy, join(staffDir, 'build'));
  }
}

/** Copies, builds (sealed: as the slot's uid, in a network namespace of its own) and grades a submission folder's copy. */
async function gradeCopy(
  setup: GradeSetup,
  source: { name: string; folder: string },
  studentDir: string,
  staffDir: string,
  manifest: ReturnType<typeof readManifest>,
  how: string,
  copy: string,
): Promise<Graded> {
  const zero = (problem: string): Graded => ({ score: ungradable(source.name, setup.rubric, how, problem), harnessError: false });
  try {
    copySubmission(realpathSync(source.folder), copy, source.name);
  } catch (error) {
    if (error instanceof SubmissionFileError) return zero(error.message);
    throw error;
  }
  try {
    if (manifest.build) {
      const network = !setup.sealing.sealed || setup.buildNetwork === true;
      setup.log?.(`  ${source.name}: building${network ? '' : ' (no network)'}: ${manifest.build}`);
      const lease = setup.sealing.sealed ? leaseUid(0) : undefined;
      try {
        const built = await runBuild({
          command: manifest.build,
          dir: copy,
          deadlineMs: setup.buildDeadlineMs,
          logFile: join(studentDir, 'build.log'),
          staffLogFile: join(staffDir, 'build.log'),
          network,
          ...(setup.signal ? { signal: setup.signal } : {}),
          ...(lease ? { uid: lease.uid } : {}),
        });
        if (!built.ok) return zero(built.reason!);
      } finally {
        lease?.release();
      }
    }
  } finally {
    // Sealed, the copy is handed back to root and made read-only whatever the build did, so the
    // consumer's uid cannot change it and no later process of that uid owns anything in it.
    // Unsealed, it runs as the grader's user, who may change modes back: read-only bits would
    // only keep the grader itself from removing its output (every output says unsealed).
    if (setup.sealing.sealed) makeReadOnly(copy);
  }
  return gradeRuns(setup, source, staffDir, manifest.command, copy, how);
}

async function gradeRuns(setup: GradeSetup, source: SubmissionSource, staffDir: string, command: string, cwd: string, how: string): Promise<Graded> {
  const { rubric } = setup;
  const zero = (problem: string): Graded => ({ score: ungradable(source.name, rubric, how, problem), harnessError: false });
  const missing = missingProgram(command, cwd, setup.sealing.sealed ? SEALED_PATH : (process.env.PATH ?? ''));
  if (missing) return zero(`the command \`${command}\` cannot start: ${missing}`);

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
    ...(setup.storeLimitBytes ? { storeLimitBytes: setup.storeLimitBytes } : {}),
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
