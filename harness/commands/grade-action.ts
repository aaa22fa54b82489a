// `chaoslab grade`'s work (the command is defined in ./grade.ts): the rubric and its scenarios,
// the sealing decision (refused where sealing is unavailable, unless --unsealed), then each
// submission in turn, then the class outputs (class.json, grades.csv, index.html). A manifest
// naming another lab does not stop the class: the others are graded, then the grader exits 2
// naming each such manifest (docs/grading.md, "Class outputs").
import { chmodSync, existsSync, mkdirSync, realpathSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { type BuildCache, openBuildCache } from '../grade/build/build-cache.js';
import { CLASS_FILE, type ClassReport, CLASS_SCHEMA, type Sealing, writeClassReport } from '../grade/class/class-data.js';
import { classCsv, csvColumnClash } from '../grade/class/class-csv.js';
import { classHtml } from '../grade/class/class-html.js';
import { type GradeSetup, gradeSubmission, type SubmissionSource } from '../grade/grade-submission.js';
import type { Rubric } from '../grade/rubric.js';
import { classRubric } from '../grade/class/class-rubric.js';
import type { SubmissionScore } from '../grade/score.js';
import { gradingStatus, notStarted } from '../grade/status.js';
import { type ClassFolder, listSubmissions, parseShard, type Shard } from '../grade/class/submissions.js';
import { openWorkspace, placesProblem } from '../grade/build/workspace.js';
import { interruptible } from '../base/interrupt.js';
import { terminalText } from '../text/inert.js';
import { reportsPathShower, scenariosDir } from '../base/paths.js';
import { makePassable } from '../report/staff-only.js';
import { decideSealing, probeSealing, sealModeFromEnv } from '../sandbox/probe.js';
import { resolveScenario } from '../catalogue/catalogue.js';
import { loadScenario } from '../catalogue/load.js';
import type { Scenario } from '../scenario/types.js';
import { EXIT, EXIT_SIGNAL, UsageError } from '../base/exit-status.js';

export interface GradeOptions {
  consumer?: string;
  name: string;
  /** --rubric, repeatable: rubrics graded together (a consumer's and a server's). */
  rubric?: string[];
  /** Without --rubric: whose rubric (default: the lab the manifests name or imply, else the registry's first lab); with it: must be the rubric's lab. */
  lab?: string;
  /** Absent: the machine's processors × the rubric's jobs_per_processor, at most a submission's runs (jobsFor). */
  jobs?: number;
  /** The processors the default `jobs` counts (absent: os.availableParallelism()). */
  processors?: number;
  shard?: string;
  out: string;
  unsealed?: boolean;
  deadline: number;
  buildDeadline: number;
  buildNetwork?: boolean;
  /** --build-cache <dir> (a string), --no-build-cache (false), or neither (the default folder). */
  buildCache?: string | false;
  storeLimit?: number;
  submission?: string;
  only?: string[];
}

export async function gradeAction(dir: string | undefined, given: GradeOptions): Promise<void> {
  const shard = checkedUsage(dir, given);
  const rubric = onlyScenarios(classRubric(given, dir, resolve(given.out)), given.only);
  const opts = { ...given, jobs: given.jobs ?? jobsFor(rubric, given.processors) };
  const clash = csvColumnClash(rubric.tests.map((t) => t.name));
  if (clash) throw new UsageError(`${rubric.file}: ${clash}`);
  const scenarios = rubricScenarios(rubric);
  const sealing = await sealingFor(opts.unsealed === true);
  const outDir = resolve(opts.out);
  const buildCache = openCache(opts, outDir, dir);
  const outExisted = existsSync(outDir);
  mkdirSync(outDir, { recursive: true });
  // Sealed consumers pass through it to their rooms; nobody lists it (docs/sandbox.md, "Modes: who may reach what").
  makePassable(outDir);
  const problem = sealing.sealed ? placesProblem(outDir, dir) : undefined;
  if (problem) {
    if (!outExisted) rmdirSync(outDir);
    throw new UsageError(`refusing to grade here: ${problem}`);
  }
  const listed: ClassFolder = dir === undefined ? { submissions: [], skipped: [] } : listSubmissions(dir, { ...(shard ? { shard } : {}), exclude: outDir });
  const sources: SubmissionSource[] =
    dir === undefined
      ? [{ name: opts.name, command: opts.consumer!, cwd: process.cwd() }]
      : listed.submissions.filter((name) => opts.submission === undefined || name === opts.submission).map((name) => ({ name, folder: join(dir, name) }));
  if (opts.submission !== undefined && sources.length === 0) throw new UsageError(`${dir}: no submission ${JSON.stringify(opts.submission)} to grade`);
  // A replay of one submission (--submission) grades it alone: the class's other folders are not its business.
  const skipped = opts.submission === undefined ? listed.skipped : [];
  const say = (line: string) => process.stdout.write(`${line}\n`);
  for (const s of skipped) say(`chaoslab grade: skipped ${terminalText(JSON.stringify(s.name))}: ${s.reason}`);
  if (sources.length === 0 && !shard) throw new Error(`${dir}: no submissions (sub-folders) to grade`);

  sayHeader(say, { sealing, opts, defaultJobs: given.jobs === undefined, submissions: sources.length, shard, rubric, buildCache, classDir: dir });
  const stop = interruptible({ onInterrupt: (signal) => say(`\nchaoslab grade: ${signal}: stopping — running runs stop, nothing new starts`) });
  const report: ClassReport = {
    schema: CLASS_SCHEMA,
    lab: rubric.lab,
    rubric: rubric.tests.map((t) => ({ name: t.name, points: t.points, visibility: t.visibility, repeat: t.repeat })),
    sealing,
    submissions: [],
    skipped,
  };
  let harnessError = false;
  const workspace = openWorkspace(sealing.sealed);
  const request = submissionRequest(opts, { rubric, scenarios, sealing, outDir, workspace, signal: stop.signal, say });
  if (buildCache) request.buildCache = buildCache;
  try {
    for (const source of sources) {
      if (stop.signal.aborted) {
        report.submissions.push(notStarted(source.name, rubric, stop.by()));
        continue;
      }
      const graded = await gradeSubmission(request, source);
      harnessError ||= graded.harnessError;
      const score = gradingStatus(graded.score, graded.harnessError, stop.signal.aborted ? (stop.by() ?? 'SIGINT') : undefined);
      report.submissions.push(score);
      say(
        `${terminalText(source.name)}: ${score.score} / ${score.max}${score.notGraded ? ` — not graded (${score.notGraded.kind}): ${terminalText(score.notGraded.reason)}` : ''}`,
      );
      for (const line of rerunLines(score)) say(terminalText(`  ${source.name}: ${line}`));
    }
  } finally {
    workspace.remove();
    stop.dispose();
  }
  writeClassOutputs(outDir, report);
  say(outputsLine(opts.out, outDir));
  const by = stop.by();
  if (by) {
    process.exitCode = EXIT_SIGNAL[by];
    setTimeout(() => process.exit(EXIT_SIGNAL[by]), 2000).unref();
    return;
  }
  sayClosing(report, harnessError, say);
}

/** The grader's first lines: sealing and the builds' network, what is graded, how many runs at a time, the build cache. */
function sayHeader(
  say: (line: string) => void,
  h: {
    sealing: Sealing;
    opts: GradeOptions;
    defaultJobs: boolean;
    submissions: number;
    shard: Shard | undefined;
    rubric: Rubric;
    buildCache: BuildCache | undefined;
    classDir: string | undefined;
  },
): void {
  if (!h.sealing.sealed) say(`chaoslab grade: NOT SEALED: ${h.sealing.note}`);
  else
    say(
      h.opts.buildNetwork
        ? "chaoslab grade: builds have the host's network (--build-network)"
        : "chaoslab grade: builds run without network (a network namespace of their own; --build-network gives them the host's)",
    );
  const perProcessor = h.rubric.jobsPerProcessor ?? 1;
  const counted = h.opts.processors === undefined ? "the machine's processors" : `${h.opts.processors} processor(s) (--processors)`;
  const processors = perProcessor === 1 ? counted : `${counted} × ${perProcessor} (the rubric's jobs_per_processor)`;
  const jobs = `${h.opts.jobs} run(s) at a time${h.defaultJobs ? ` (by default: ${processors}, at most the rubric's runs)` : ''}`;
  say(
    `chaoslab grade: ${h.submissions} submission(s)${h.shard ? ` (shard ${h.shard.index}/${h.shard.count})` : ''}, rubric ${relative(process.cwd(), h.rubric.file)} (${h.rubric.tests.length} scenarios), ${jobs}`,
  );
  if (h.classDir !== undefined) say(`chaoslab grade: ${h.buildCache ? `build cache ${h.buildCache.dir}` : 'no build cache (--no-build-cache)'}`);
}

/** What grading one submission needs, the same for every submission of the class. */
function submissionRequest(
  opts: GradeOptions,
  run: Pick<GradeSetup, 'rubric' | 'scenarios' | 'sealing' | 'outDir' | 'workspace' | 'signal'> & { say: (line: string) => void },
): GradeSetup {
  const { rubric, scenarios, sealing, outDir, workspace, signal, say } = run;
  return {
    rubric,
    scenarios,
    sealing,
    jobs: opts.jobs!,
    outDir,
    deadlineMs: opts.deadline * 1000,
    buildDeadlineMs: opts.buildDeadline * 1000,
    workspace,
    ...(opts.buildNetwork ? { buildNetwork: true } : {}),
    ...(opts.storeLimit ? { storeLimitBytes: opts.storeLimit } : {}),
    signal,
    log: (line) => say(terminalText(line)),
    replayOptions: replayOptions(opts, sealing),
  };
}

/** The command line's rules a grade starts only under (one of a class folder and --consumer, a plain --name, ...); its shard, if any. */
function checkedUsage(dir: string | undefined, opts: GradeOptions): Shard | undefined {
  let shard: Shard | undefined;
  if ((dir === undefined) === (opts.consumer === undefined)) throw new UsageError('give a class folder or --consumer "<command>" (one of them)');
  if (opts.shard && opts.consumer) throw new UsageError('--shard splits a class folder; it does not apply to --consumer');
  try {
    shard = opts.shard ? parseShard(opts.shard) : undefined;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (dir !== undefined && !existsSync(dir)) throw new UsageError(`${dir}: no such class folder`);
  // The name becomes a folder of the output: one plain name, as a class folder's sub-folders are.
  if (opts.consumer && !/^[^./\\\0-\x1f][^/\\\0-\x1f]*$/.test(opts.name))
    throw new UsageError(`--name ${JSON.stringify(opts.name)}: must be a plain folder name`);
  if (opts.submission !== undefined && dir === undefined)
    throw new UsageError('--submission picks a sub-folder of a class folder; it does not apply to --consumer');
  return shard;
}

/** What the class's grading leaves to be said: submissions not graded, harness errors, manifests of another lab; and the exit status. */
function sayClosing(report: ClassReport, harnessError: boolean, say: (line: string) => void): void {
  const notGraded = report.submissions.filter((s) => s.notGraded);
  if (notGraded.length) say(`chaoslab grade: ${notGraded.length} of ${report.submissions.length} submission(s) not graded (not failed): see the status column`);
  if (harnessError) say('chaoslab grade: some scenarios are not graded: their runs kept ending in harness errors (exit 2; grade those submissions again)');
  const wrongLab = notGraded.filter((s) => s.notGraded!.kind === 'wrong-lab');
  for (const s of wrongLab) say(`chaoslab grade: ${terminalText(s.notGraded!.reason)}`);
  if (wrongLab.length)
    say(`chaoslab grade: ${wrongLab.length} manifest(s) name another lab than the rubric's: a wrong rubric for this class, or wrong manifests (exit 2)`);
  process.exitCode = harnessError || wrongLab.length ? EXIT.error : EXIT.pass;
}

/** The scenarios a submission's grade re-ran, and why: staff see what was not charged and what is not graded. */
export function rerunLines(score: SubmissionScore): string[] {
  return score.scenarios.flatMap((s) => [
    ...(s.status === 'not graded'
      ? [`${s.name}: NOT GRADED (harness error in ${s.harnessErrors} run(s)): ${s.reasons.slice(1).join('; ') || 'no reason given'}`]
      : []),
    ...(s.status !== 'not graded' && s.harnessErrors ? [`${s.name}: ${s.harnessErrors} run(s) ended in a harness error: re-run, not charged`] : []),
    ...(s.reruns ? [`${s.name}: ${s.passed} of ${s.runs} runs passed (${s.reruns} re-runs after a failure): ${s.status}`] : []),
  ]);
}

/** class.json, grades.csv and index.html of a class report: staff's (0600), whatever the caller's umask. */
export function writeClassOutputs(outDir: string, report: ClassReport): void {
  report.submissions.sort((a, b) => (a.submission < b.submission ? -1 : a.submission > b.submission ? 1 : 0));
  writeClassReport(outDir, report);
  writeFileSync(join(outDir, 'grades.csv'), classCsv(report));
  writeFileSync(join(outDir, 'index.html'), classHtml(report));
  for (const file of [CLASS_FILE, 'grades.csv', 'index.html']) chmodSync(join(outDir, file), 0o600);
}

/** The rubric cut to the --only scenarios (each must be one of the rubric's). */
function onlyScenarios(rubric: Rubric, only: readonly string[] | undefined): Rubric {
  if (!only?.length) return rubric;
  for (const name of only) if (!rubric.tests.some((t) => t.name === name)) throw new UsageError(`--only ${name}: ${rubric.file} has no scenario ${name}`);
  return { ...rubric, tests: rubric.tests.filter((t) => only.includes(t.name)) };
}

/** The options that change a verdict, as a replay command repeats them (deadlines, jobs, sealing, network, store limit). */
function replayOptions(opts: GradeOptions, sealing: Sealing): string[] {
  return [
    '--jobs',
    String(opts.jobs!),
    '--deadline',
    String(opts.deadline),
    '--build-deadline',
    String(opts.buildDeadline),
    ...(sealing.sealed ? [] : ['--unsealed']),
    ...(opts.buildNetwork ? ['--build-network'] : []),
    ...(opts.storeLimit ? ['--store-limit', String(opts.storeLimit)] : []),
    '--out',
    'chaoslab-replay',
  ];
}

/** Each rubric scenario loaded (a catalogue name, or its own file); one of another lab is an error naming it. */
function rubricScenarios(rubric: Rubric): Map<string, Scenario> {
  const scenarios = new Map<string, Scenario>();
  for (const [i, test] of rubric.tests.entries()) {
    let scenario: Scenario;
    try {
      scenario = loadScenario(test.file ?? resolveScenario(test.name, scenariosDir));
    } catch (error) {
      throw new UsageError(`${rubric.file}: scenarios[${i}].name: ${(error as Error).message}`);
    }
    if (scenario.protocol !== rubric.lab)
      throw new UsageError(`${rubric.file}: scenarios[${i}]: ${test.name} is a ${scenario.protocol} scenario, the rubric is for ${rubric.lab}`);
    if (scenario.name !== test.name)
      throw new UsageError(`${rubric.file}: scenarios[${i}]: the file ${test.file} holds scenario ${scenario.name}, not ${test.name}`);
    scenarios.set(test.name, scenario);
  }
  return scenarios;
}

/**
 * A submission's runs at the same time when --jobs is not given: as many as the machine has
 * processors for this process (--processors, else os.availableParallelism(): the affinity mask
 * always, a container's CPU quota not on every Node version), times the rubric's
 * jobs_per_processor, and no more than the rubric has runs (more would only wait).
 */
export function jobsFor(rubric: Pick<Rubric, 'tests' | 'jobsPerProcessor'>, processors = availableParallelism()): number {
  const runs = rubric.tests.reduce((sum, test) => sum + test.repeat, 0);
  return Math.max(1, Math.min(processors * (rubric.jobsPerProcessor ?? 1), runs));
}

/**
 * The build cache (build-cache.ts), unless --no-build-cache. By default beside the output folder,
 * in its parent: staff regrade a class into a new --out (or remove the last one first), so the
 * cache must outlive any one output folder, and it stays on the output's file system, out of
 * reports/ (which `chaoslab clean` empties). Never in the class folder: where --out is in it,
 * the default is in --out (not a submission: listSubmissions leaves --out out); a --build-cache
 * given there is refused.
 */
function openCache(opts: GradeOptions, outDir: string, classDir: string | undefined): BuildCache | undefined {
  if (opts.buildCache === false || classDir === undefined) return undefined;
  const within = (inner: string, outer: string) => inner === outer || inner.startsWith(`${outer}${sep}`);
  const real = (path: string): string => (existsSync(path) ? realpathSync(path) : join(real(dirname(path)), basename(path)));
  const inClass = (path: string) => within(real(path), realpathSync(classDir));
  let dir: string;
  if (typeof opts.buildCache === 'string') {
    dir = resolve(opts.buildCache);
    if (inClass(dir)) throw new UsageError(`--build-cache ${dir}: is in the class folder ${resolve(classDir)}: give one outside it (or --no-build-cache)`);
  } else {
    dir = join(dirname(outDir), '.chaoslab-build-cache');
    if (inClass(dir)) dir = join(outDir, '.build-cache');
  }
  try {
    return openBuildCache(dir);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Sealed where the probe says it works; elsewhere (or with CHAOSLAB_SEAL=off) only with --unsealed. */
async function sealingFor(unsealedAllowed: boolean): Promise<Sealing> {
  const mode = sealModeFromEnv();
  const decision = decideSealing(mode, await probeSealing());
  if (decision.sealed) return { sealed: true, note: decision.note };
  if (!unsealedAllowed)
    throw new Error(`refusing to grade untrusted code unsealed: ${decision.note} — give --unsealed to grade anyway (every output then says so)`);
  return { sealed: false, note: decision.note };
}

/** Where the class's grades and report are, printed as --out was given (absolute stays absolute). */
function outputsLine(out: string, outDir: string): string {
  const show = reportsPathShower({ out });
  return `grades: ${show(join(outDir, 'grades.csv'))}, class report: ${show(join(outDir, 'index.html'))}`;
}
