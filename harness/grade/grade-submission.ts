// Grades one submission: its manifest, a private copy in the grading workspace (outside the
// output folder: workspace.ts), the build (once, sealed as the slot's uid without network, then
// read-only), the rubric's runs (k per scenario, then re-runs of failures and of harness errors:
// score.ts) as batches with the copy as working directory, the scores from the runs' verdicts,
// and the files a student may see in <out>/<submission>/ (the platforms' files — platforms.ts,
// kept current run by run by progressive.ts — build.log, the reports of failing non-hidden
// scenarios; closed to the sandbox uids). Runs, the built copy, hidden scenarios' reports and
// Gradescope's upload copy of results.json stay in <out>/.staff/<submission>/, root's and closed
// (0700) once the submission is done, so a later submission cannot reach it.

import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { runBatch } from '../run/batch.js';
import { closeFolder, makePassable, PASSABLE } from '../report/staff-only.js';
import { resolveProgram, SEALED_PATH } from '../sandbox/room.js';
import type { RunResult } from '../run/runner.js';
import type { Scenario } from '../scenario/types.js';
import { makeReadOnly } from './build/build.js';
import type { BuildCache } from './build/build-cache.js';
import { type BuildRecord, buildSubmission, buildWords } from './build/submission-build.js';
import type { Sealing } from './class/class-data.js';
import { ManifestError, manifestHow, readManifest } from './manifest.js';
import { testsServer } from '../labs/registry.js';
import { copySubmission, SubmissionFileError } from './build/no-follow.js';
import { Progress } from './progressive.js';
import { submissionHash } from './provenance.js';
import type { Rubric } from './rubric.js';
import { type RunOutcome, runsStillWanted, type SubmissionScore, scoreSubmission, ungradable } from './score.js';
import type { NotGradedKind } from './not-graded.js';
import type { Workspace } from './build/workspace.js';

export const STAFF_DIR = '.staff';
/** Batches per submission: the k runs, then re-runs of failures and replacements of harness errors. */
export const GRADE_ROUNDS = 4;

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
  /** Where identical builds are found and kept (build-cache.ts); absent with --no-build-cache. */
  buildCache?: BuildCache;
  /** `--store-limit` for every run. */
  storeLimitBytes?: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
  /** The options that change a verdict, as command-line words, for the replay commands (provenance.ts). */
  replayOptions?: readonly string[];
  /** This submission's platform files, kept current as its runs finish (set by gradeSubmission). */
  progress?: Progress;
}

/** A folder to grade (with its manifest), or one command run from `cwd` (`grade --consumer`). */
export type SubmissionSource = { name: string; folder: string } | { name: string; command: string; cwd: string };

export interface Graded {
  score: SubmissionScore;
  /** Some run ended in a harness error: the grader could not do its job there. */
  harnessError: boolean;
}

export async function gradeSubmission(setup: GradeSetup, source: SubmissionSource): Promise<Graded> {
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
  // results.json and the other platform files from the start, kept current run by run (progressive.ts).
  const progress = new Progress({ ...setup, replayOptions: setup.replayOptions ?? [] }, source, studentDir, staffDir);
  progress.begin();
  let graded: Graded;
  try {
    graded = await gradeIn({ ...setup, progress }, source, studentDir, staffDir);
    graded = { ...graded, score: progress.end(graded.score) };
  } finally {
    closeFolder(staffDir);
  }
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
  if ('command' in source) return gradeRuns(setup, source, staffDir, { consumer: source.command }, source.cwd, `the command \`${source.command}\``);
  const zero = (kind: NotGradedKind, how: string, problem: string): Graded => notGraded(source.name, rubric, kind, how, problem);
  let manifest: ReturnType<typeof readManifest>;
  try {
    manifest = readManifest(source.folder);
  } catch (error) {
    if (error instanceof ManifestError) return zero('manifest', 'no command', error.message.replace(source.folder, source.name));
    throw error;
  }
  const how = manifestHow(manifest);
  // Not the student's zero: the grader exits 2 at the end (a wrong rubric for the class, or a
  // wrong manifest), naming the manifest; the other submissions are graded meanwhile.
  if (manifest.lab !== undefined && manifest.lab !== rubric.lab)
    return zero('wrong-lab', how, `${source.name}/${manifest.source}: lab "${manifest.lab}", but this class is graded with the ${rubric.lab} rubric`);
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
  const zero = (kind: NotGradedKind, problem: string): Graded => notGraded(source.name, setup.rubric, kind, how, problem);
  try {
    copySubmission(realpathSync(source.folder), copy, source.name);
    setup.progress?.setSubmissionHash(submissionHash(copy));
  } catch (error) {
    if (error instanceof SubmissionFileError) return zero('files', error.message);
    throw error;
  }
  let build: BuildRecord | undefined;
  if (manifest.build) {
    const network = !setup.sealing.sealed || setup.buildNetwork === true;
    const built = await buildSubmission({
      onRun: () => setup.log?.(`  ${source.name}: building${network ? '' : ' (no network)'}: ${manifest.build}`),
      command: manifest.build,
      lab: setup.rubric.lab,
      sealed: setup.sealing.sealed,
      network,
      path: setup.sealing.sealed ? SEALED_PATH : (process.env.PATH ?? ''),
      copy,
      deadlineMs: setup.buildDeadlineMs,
      logFile: join(studentDir, 'build.log'),
      staffLogFile: join(staffDir, 'build.log'),
      ...(setup.signal ? { signal: setup.signal } : {}),
      ...(setup.buildCache ? { cache: setup.buildCache } : {}),
    });
    if (!built.ok) return zero('build-failed', built.reason);
    build = built.record;
    setup.log?.(`  ${source.name}: ${buildWords(build)}`);
  } else if (setup.sealing.sealed) makeReadOnly(copy);
  const graded = await gradeRuns(
    setup,
    source,
    staffDir,
    { ...(manifest.command ? { consumer: manifest.command } : {}), ...(manifest.server ? { server: manifest.server } : {}) },
    copy,
    how,
  );
  return build ? { ...graded, score: { ...graded.score, build } } : graded;
}

/** What a submission gives to run: its consumer's command line, its push server's, or both. */
export interface Programs {
  consumer?: string;
  server?: string;
}

/** A rubric test's program: the lab's push server for a server scenario, else the consumer. */
const programOf = (setup: Pick<GradeSetup, 'scenarios'>, test: string): keyof Programs => (testsServer(setup.scenarios.get(test)!) ? 'server' : 'consumer');

/**
 * The tests a submission gives nothing to run for (a server scenario, its manifest names no
 * server; or the other way round), each with the words its 0 comes with.
 */
export function unrunTests(setup: Pick<GradeSetup, 'scenarios' | 'rubric'>, programs: Programs): Map<string, string> {
  const words = {
    server: 'not run: the submission names no push server (`server` in chaoslab.json/.yaml), and this is a server scenario',
    consumer: 'not run: the submission names no consumer (`command` in chaoslab.json/.yaml), and this is a consumer scenario',
  };
  return new Map(
    setup.rubric.tests.flatMap((test) => {
      const program = programOf(setup, test.name);
      return programs[program] === undefined ? [[test.name, words[program]] as const] : [];
    }),
  );
}

async function gradeRuns(setup: GradeSetup, source: SubmissionSource, staffDir: string, programs: Programs, cwd: string, how: string): Promise<Graded> {
  const { rubric } = setup;
  for (const command of [programs.consumer, programs.server]) {
    const missing = command === undefined ? undefined : missingProgram(command, cwd, setup.sealing.sealed ? SEALED_PATH : (process.env.PATH ?? ''));
    if (missing) return notGraded(source.name, rubric, 'cannot-start', how, `the command \`${command}\` cannot start: ${missing}`);
  }
  const unrun = unrunTests(setup, programs);

  // The whole submission's deadline (re-runs included): runs still going stop (interrupted), and fail.
  const deadline = AbortSignal.timeout(setup.deadlineMs);
  const signal = setup.signal ? AbortSignal.any([setup.signal, deadline]) : deadline;
  const outcomes = new Map<string, RunOutcome[]>(rubric.tests.map((t) => [t.name, []]));
  // Round 1 runs each scenario k times; later rounds re-run failures (the rubric's rate) and
  // replace harness errors, until every scenario has its counted runs or the rounds run out.
  for (let round = 1; round <= GRADE_ROUNDS && !signal.aborted; round++) {
    const items = rubric.tests
      .filter((test) => !unrun.has(test.name))
      .flatMap((test) => {
        const done = outcomes.get(test.name)!.length;
        const program = programOf(setup, test.name);
        return Array.from({ length: runsStillWanted(test, outcomes.get(test.name)!) }, (_, i) => ({
          scenario: setup.scenarios.get(test.name)!,
          ...(program === 'server' ? { serverCommand: programs.server! } : { consumerCommand: programs.consumer! }),
          label: round === 1 ? (test.repeat > 1 ? `${test.name} #${i + 1}` : test.name) : `${test.name} #${done + i + 1} (re-run)`,
          test: test.name,
        }));
      });
    if (items.length === 0) break;
    if (round > 1) setup.log?.(`  ${source.name}: re-running ${items.length} run(s): ${[...new Set(items.map((i) => i.test))].join(', ')}`);
    const { runs } = await runBatch(`grade-${source.name}${round > 1 ? `-rerun-${round - 1}` : ''}`, items, {
      jobs: setup.jobs,
      cwd,
      reportsDir: join(staffDir, 'runs'),
      seal: setup.sealing.sealed ? 'on' : 'off',
      ...(setup.storeLimitBytes ? { storeLimitBytes: setup.storeLimitBytes } : {}),
      signal,
      commandLine: `chaoslab grade (${source.name})`,
      onFinish: (item, result, index) => {
        setup.log?.(`  ${source.name} × ${item.label}: ${result.status}${result.status === 'error' ? ' (harness error: re-run, not charged)' : ''}`);
        setup.progress?.finished(items[index]!.test, outcomeOf(result), how);
      },
    });
    for (const { item, result } of runs) outcomes.get(item.test)!.push(outcomeOf(result));
  }
  const score = scoreSubmission(source.name, rubric, outcomes, how, unrun);
  return { score, harnessError: score.scenarios.some((s) => s.status === 'not graded') };
}

/** A run as the grader scores it: its status, the harness errors and findings in words, its folder. */
function outcomeOf(result: RunResult): RunOutcome {
  const reasons = result.error ? [result.error] : result.view ? [...result.view.harnessErrors, ...result.view.findings].map((f) => f.text) : [];
  return { status: result.status, reasons, runDir: result.runDir };
}

/** A submission the grader could not judge: 0 on every scenario (score.ts), and why, as data (status.ts). */
function notGraded(name: string, rubric: Rubric, kind: NotGradedKind, how: string, problem: string): Graded {
  return { score: { ...ungradable(name, rubric, how, problem), notGraded: { kind, reason: problem } }, harnessError: false };
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
