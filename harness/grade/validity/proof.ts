// The validity proof of `chaoslab grade` (issue "Grading a class", Done when): a class of the
// lab's references and mutants (./class-folder.ts) graded twice with the lab's rubric through the
// real CLI, each grading's outputs read back (./outputs.ts), and every cell held against the full
// mutant matrix (`chaoslab mutants`, run here or given as its matrix.json) by ./compare.ts. One
// program at a time: the lab's consumers (rubrics/<lab>.yaml), or its push servers
// (rubrics/<lab>-server.yaml, the server matrix's rows); ./lab-proof.ts proves each the lab has.
// `make grade-validity` runs it (scripts/grade-validity.mjs); the e2e test uses the pieces.

import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { labNamed, labNames } from '../../labs/registry.js';
import { consumersNamed, loadMatrixConsumers, loadMatrixServers, type MatrixProgram } from '../../run/mutants.js';
import { projectRoot } from '../../base/paths.js';
import { probeSealing } from '../../sandbox/probe.js';
import { type ClassReport, readClassReport } from '../class/class-data.js';
import { loadRubric, type Rubric } from '../rubric.js';
import { type ValiditySubmission, validitySubmissions, writeValidityClass } from './class-folder.js';
import { cellKey, compareGradings, differingCells, type MatrixFile, matrixRow, type Rerun, type Validity, withReruns } from './compare.js';
import { outputProblems } from './outputs.js';
import { renderMarkdown, renderTable } from './render.js';
import { compareAttempts, renderStabilityTable, type Stability, startHogs, writeStability } from './stability.js';

export interface ProofOptions {
  lab: string;
  /** The class: the lab's consumers (default) or its push servers. */
  program?: MatrixProgram;
  jobs: number;
  /** A full matrix's matrix.json, instead of running `chaoslab mutants` here. */
  matrix?: string;
  /** Only these mutants (every language of each), with both references. */
  only?: string[];
  /** Another rubric than rubrics/<lab>.yaml (rubrics/<lab>-server.yaml for the servers). */
  rubric?: string;
  /** An empty (or new) folder: class/, matrix/, grade-1/, grade-2/, validity.md, validity.json. */
  out: string;
  gradings?: number;
  /** Runs of each cell where a grading differs from the matrix, outside the grader, to tell a wrong grade from a mutant caught only sometimes (default 10; 0: none). */
  reruns?: number;
  /** Progress lines; the CLI's own output goes to <out>/<step>.log, and here too when `echo`. */
  log: (line: string) => void;
  echo?: boolean;
  /** The chaoslab CLI to run (default: this project's dist/harness/cli.js; tests give a stand-in). */
  cli?: string;
}

/** The proof could not be run (exit 2): a bad option, a matrix that does not cover the class, a grading that failed. */
export class ProofError extends Error {
  override name = 'ProofError';
}

export const CLI = join(projectRoot, 'dist', 'harness', 'cli.js');

/** The lab, a new output folder, the rubric and the class of references and mutants (ONLY= chosen). */
function prepareClass(opts: Pick<ProofOptions, 'lab' | 'program' | 'out' | 'only' | 'rubric'>, what: string) {
  const lab = labNamed(opts.lab);
  if (!lab) throw new ProofError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
  const servers = opts.program === 'server';
  if (servers && !lab.server) throw new ProofError(`the ${lab.name} lab has no push server under test: no server class to grade`);
  const out = resolve(opts.out);
  if (existsSync(out) && readdirSync(out).length > 0) throw new ProofError(`${out} is not empty: give the ${what} a new folder`);
  mkdirSync(out, { recursive: true });
  let consumers: ReturnType<typeof loadMatrixConsumers>;
  try {
    consumers = consumersNamed(servers ? loadMatrixServers(lab) : loadMatrixConsumers(lab), opts.only);
  } catch (error) {
    throw new ProofError(`ONLY: ${(error as Error).message}`);
  }
  return { lab, out, rubric: rubricOf(opts), submissions: validitySubmissions(consumers, projectRoot) };
}

export async function proveValidity(opts: ProofOptions): Promise<Validity> {
  const { lab, out, rubric, submissions } = prepareClass(opts, 'proof');
  const notes: string[] = [`rubric ${rubric.file}`, `${submissions.length} submissions: ${submissions.map((s) => s.name).join(', ')}`];
  const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const value = await work();
    notes.push(`${what}: ${Math.round((Date.now() - started) / 1000)} s`);
    opts.log(`${what}: done in ${Math.round((Date.now() - started) / 1000)} s`);
    return value;
  };

  const matrixFile = opts.matrix ? resolve(opts.matrix) : await timed('the mutant matrix', () => runMatrix(opts, out, opts.program ?? 'consumer'));
  notes.push(`matrix ${matrixFile}`);
  const matrix = readMatrix(matrixFile, lab.name, submissions, rubric);

  const classDir = join(out, 'class');
  writeValidityClass(classDir, lab.name, submissions);
  const probe = await probeSealing();
  const sealFlags = probe.available ? [] : ['--unsealed'];
  notes.push(probe.available ? 'graded sealed' : `graded NOT SEALED (${probe.reason}); the matrix's runs decide for themselves`);
  const dirs: string[] = [];
  for (let i = 1; i <= (opts.gradings ?? 2); i++) {
    const dir = join(out, `grade-${i}`);
    const args = ['grade', classDir, '--rubric', rubric.file, '--jobs', String(opts.jobs), '--out', dir, ...sealFlags];
    await timed(`grading ${i}`, async () => {
      const status = await runCli(args, join(out, `grade-${i}.log`), opts);
      if (status !== 0) throw new ProofError(`grading ${i} (chaoslab ${args.join(' ')}) exited ${status}: see ${join(out, `grade-${i}.log`)}`);
    });
    dirs.push(dir);
  }
  const first = compareAll({ matrix, rubric, submissions, dirs });
  const differing = differingCells(first);
  const reruns = new Map<string, Rerun>();
  const times = opts.reruns ?? 10;
  if (times > 0 && differing.length > 0)
    await timed(`${differing.length} differing cells run again ${times} times each`, async () => {
      for (const cell of differing) {
        const submission = submissions.find((s) => s.name === cell.submission)!;
        const test = rubric.tests.find((t) => t.name === cell.scenario)!;
        reruns.set(cellKey(cell.submission, cell.scenario), await rerun(opts, out, submission, test.file ?? test.name, times));
      }
    });
  return judge({ matrix, rubric, submissions, dirs, out, notes, log: opts.log, reruns });
}

/**
 * The stability check (./stability.ts): the class graded `attempts` times with the lab's rubric,
 * beside `hogs` busy processes (started and stopped here); each submission's scores compared.
 * A grading that exits 2 (some scenario not graded) still counts: its not-graded cells are shown.
 */
export async function proveStability(opts: Omit<ProofOptions, 'matrix' | 'gradings' | 'reruns'> & { attempts: number; hogs?: number }): Promise<Stability> {
  const { lab, out, rubric, submissions } = prepareClass(opts, 'check');
  const classDir = join(out, 'class');
  writeValidityClass(classDir, lab.name, submissions);
  const probe = await probeSealing();
  const notes = [`rubric ${rubric.file}`, probe.available ? 'graded sealed' : `graded NOT SEALED (${probe.reason})`];
  const hogs = opts.hogs ? startHogs(opts.hogs) : undefined;
  const attempts: (ClassReport | undefined)[] = [];
  try {
    for (let i = 1; i <= opts.attempts; i++) {
      const dir = join(out, `attempt-${i}`);
      const args = ['grade', classDir, '--rubric', rubric.file, '--jobs', String(opts.jobs), '--out', dir, ...(probe.available ? [] : ['--unsealed'])];
      const started = Date.now();
      const status = await runCli(args, join(out, `attempt-${i}.log`), opts);
      if (status !== 0 && status !== 2)
        throw new ProofError(`attempt ${i} (chaoslab ${args.join(' ')}) exited ${status}: see ${join(out, `attempt-${i}.log`)}`);
      notes.push(`attempt ${i}: exit ${status}, ${Math.round((Date.now() - started) / 1000)} s`);
      attempts.push(existsSync(join(dir, 'class.json')) ? readClassReport(dir) : undefined);
    }
  } finally {
    hogs?.stop();
  }
  const stability = compareAttempts({ lab: lab.name, submissions, attempts, hogs: opts.hogs ?? 0 });
  writeStability(out, stability, notes);
  opts.log(renderStabilityTable(stability));
  return stability;
}

/** `chaoslab run <scenario> --repeat n` against one consumer (or server), outside the grader: how many runs failed. */
async function rerun(opts: ProofOptions, out: string, submission: ValiditySubmission, scenario: string, times: number): Promise<Rerun> {
  mkdirSync(join(out, 'reruns'), { recursive: true });
  const dir = join(out, 'reruns', `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`);
  const program = submission.program === 'server' ? '--server' : '--consumer';
  const args = ['run', scenario, '--repeat', String(times), '--jobs', String(opts.jobs), program, submission.command, '--out', dir, '-q'];
  await runCli(args, `${dir}.log`, opts);
  const results = JSON.parse(readFileSync(join(dir, 'latest', 'results.json'), 'utf8')) as { runs: { status: string }[] };
  return { runs: results.runs.length, failed: results.runs.filter((r) => r.status === 'fail').length };
}

function compareAll(input: { matrix: MatrixFile; rubric: Rubric; submissions: readonly ValiditySubmission[]; dirs: readonly string[] }): Validity {
  const gradings = input.dirs.map((d) => readClassReport(d));
  const problems = input.dirs.flatMap((d, i) => outputProblems(d, gradings[i]!, `grading ${i + 1}`));
  const csvs = input.dirs.map((d) => readFileSync(join(d, 'grades.csv'), 'utf8'));
  if (csvs.some((c) => c !== csvs[0])) problems.push('grades.csv differs between the gradings');
  return compareGradings({ matrix: input.matrix, rubric: input.rubric.tests, submissions: input.submissions, gradings, outputProblems: problems });
}

/** Compares the gradings in `dirs` with the matrix, writes validity.md and validity.json, prints the table. */
export function judge(input: {
  matrix: MatrixFile;
  rubric: Rubric;
  submissions: readonly ValiditySubmission[];
  dirs: readonly string[];
  out: string;
  notes?: readonly string[];
  log?: (line: string) => void;
  /** Differing cells run again outside the grader, by cellKey. */
  reruns?: ReadonlyMap<string, Rerun>;
}): Validity {
  const compared = compareAll(input);
  const validity = input.reruns?.size ? withReruns(compared, input.reruns) : compared;
  writeFileSync(join(input.out, 'validity.json'), `${JSON.stringify(validity, null, 2)}\n`);
  writeFileSync(join(input.out, 'validity.md'), renderMarkdown(validity, input.notes ?? []));
  input.log?.(renderTable(validity));
  return validity;
}

function rubricOf(opts: Pick<ProofOptions, 'lab' | 'program' | 'rubric'>): Rubric {
  const file = resolve(opts.rubric ?? join(projectRoot, 'rubrics', `${opts.lab}${opts.program === 'server' ? '-server' : ''}.yaml`));
  let rubric: Rubric;
  try {
    rubric = loadRubric(file, labNames());
  } catch (error) {
    throw new ProofError((error as Error).message);
  }
  if (rubric.lab !== opts.lab) throw new ProofError(`${file} is a rubric for the ${rubric.lab} lab, not ${opts.lab}`);
  return rubric;
}

/** matrix.json, checked to hold a cell for every submission × rubric scenario. */
export function readMatrix(file: string, lab: string, submissions: readonly ValiditySubmission[], rubric: Rubric): MatrixFile {
  let matrix: MatrixFile;
  try {
    matrix = JSON.parse(readFileSync(file, 'utf8')) as MatrixFile;
  } catch (error) {
    throw new ProofError(`${file}: not a matrix.json (${(error as Error).message})`);
  }
  if (matrix.lab !== lab) throw new ProofError(`${file} is the ${matrix.lab} lab's matrix, not ${lab}'s`);
  const missing = submissions.flatMap((s) => {
    const row = matrixRow(matrix, s.consumer, s.program);
    if (!row) return [shown(s)];
    return rubric.tests.filter((t) => !row.cells.some((c) => c.scenario === t.name)).map((t) => `${shown(s)} × ${t.name}`);
  });
  if (missing.length)
    throw new ProofError(`${file} does not cover the class (a full matrix does): no ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
  return matrix;
}

/** A matrix row's name for people: "server typescript" for the server matrix's. */
const shown = (s: Pick<ValiditySubmission, 'consumer' | 'program'>): string => (s.program === 'server' ? `server ${s.consumer}` : s.consumer);

/** `chaoslab mutants --lab L [--program P] --jobs N [--mutant …]` into <out>/matrix/ (without `program`: both matrices); its matrix.json. */
export async function runMatrix(opts: Omit<ProofOptions, 'program'>, out: string, program: MatrixProgram | undefined): Promise<string> {
  const reports = join(out, 'matrix');
  // Only the matrix of the class being proved, unless both are.
  const args = [
    'mutants',
    '--lab',
    opts.lab,
    ...(program ? ['--program', program] : []),
    '--jobs',
    String(opts.jobs),
    '--reports',
    reports,
    ...(opts.only ? ['--mutant', opts.only.join(',')] : []),
  ];
  const status = await runCli(args, join(out, 'matrix.log'), opts);
  // 1: some row of the matrix is a PROBLEM (a mutant survived, a reference failed): its cells still count.
  if (status !== 0 && status !== 1) throw new ProofError(`the mutant matrix (chaoslab ${args.join(' ')}) exited ${status}: see ${join(out, 'matrix.log')}`);
  const batch = existsSync(reports) ? readdirSync(reports).find((d) => existsSync(join(reports, d, 'matrix.json'))) : undefined;
  if (!batch) throw new ProofError(`the mutant matrix wrote no matrix.json under ${reports}`);
  return join(reports, batch, 'matrix.json');
}

/** Runs the CLI from the project root; its output into `logFile` (and echoed when asked). */
export function runCli(args: string[], logFile: string, opts: Pick<ProofOptions, 'echo' | 'log' | 'cli'>): Promise<number> {
  opts.log(`$ chaoslab ${args.join(' ')}`);
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, [opts.cli ?? CLI, ...args], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (opts.echo) process.stdout.write(chunk);
    });
  }
  return new Promise((resolvePromise) => {
    child.on('error', (error) => {
      log.end(`could not start: ${error.message}\n`);
      resolvePromise(-1);
    });
    child.on('close', (code, signal) => log.end(() => resolvePromise(code ?? (signal ? 128 : -1))));
  });
}
