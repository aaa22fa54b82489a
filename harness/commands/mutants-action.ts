// `chaoslab mutants`'s work (the command is defined in ./mutants.ts): the matrix of each lab,
// its judgement, and whether every run's reports agree with its verdict.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BatchItem, type BatchResult, runBatch } from '../run/batch.js';
import type { RunResult } from '../run/runner.js';
import { interruptible } from '../base/interrupt.js';
import { allLabs, labNamed, labNames, testsServer } from '../labs/registry.js';
import {
  cellOf,
  consumersIn,
  consumersNamed,
  judgeRow,
  loadMatrixConsumers,
  loadMatrixServers,
  type MatrixConsumer,
  type MatrixProgram,
  type MatrixRow,
  type MatrixScope,
  matrixItems,
  programOf,
  renderMatrixMarkdown,
  shownLabel,
} from '../run/mutants.js';
import type { Lab } from '../lab-api/lab.js';
import { projectRoot, reportsDirOf, reportsPathShower } from '../base/paths.js';
import { typedCommand } from '../record/reproduce.js';
import { agreementProblems } from '../report/agreement.js';
import { loadLabScenarios } from '../catalogue/catalogue.js';
import { EXIT, EXIT_SIGNAL, UsageError } from '../base/exit-status.js';
import { sealModeOf } from './options.js';

export interface MutantsOptions {
  quick?: boolean;
  killers?: boolean;
  catches?: boolean;
  language?: string;
  mutant?: string;
  jobs: number;
  out?: string;
  reports?: string;
  lab?: string;
  seal?: boolean;
  /** --program: only the consumer matrix, or only the server matrix (default: both). */
  program?: string;
}

const PROGRAMS: MatrixProgram[] = ['consumer', 'server'];
const LANGUAGES = ['typescript', 'python'];

/** `--mutant a,b` as names (undefined: every mutant). */
const mutantNames = (text: string | undefined): string[] | undefined =>
  text === undefined
    ? undefined
    : text
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);

export async function mutantsAction(opts: MutantsOptions): Promise<void> {
  if (opts.lab && !labNamed(opts.lab)) throw new UsageError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
  if (opts.mutant !== undefined && !opts.lab) throw new UsageError('--mutant names mutants of one lab: give --lab too');
  if ([opts.quick, opts.killers, opts.catches].filter(Boolean).length > 1)
    throw new UsageError('--quick, --killers and --catches are sizes of the matrix: give one');
  if (opts.program && !PROGRAMS.includes(opts.program as MatrixProgram))
    throw new UsageError(`unknown program "${opts.program}"; programs: ${PROGRAMS.join(', ')}`);
  if (opts.language && !LANGUAGES.includes(opts.language)) throw new UsageError(`unknown language "${opts.language}"; languages: ${LANGUAGES.join(', ')}`);
  // Ctrl-C/SIGTERM: the running runs stop, their reports and the batch's are written, no matrix
  // is judged from a part of it, and the exit is 130/143; a second one stops at once.
  const stop = interruptible({
    onInterrupt: (signal) => process.stdout.write(`\nchaoslab: ${signal}: stopping — nothing new starts, running runs stop and their reports are written\n`),
  });
  try {
    await judgeMatrices(opts, stop.signal);
  } finally {
    stop.dispose();
    const by = stop.by();
    if (by) {
      process.exitCode = EXIT_SIGNAL[by];
      setTimeout(() => process.exit(EXIT_SIGNAL[by]), 2000).unref();
    }
  }
}

async function judgeMatrices(opts: MutantsOptions, signal: AbortSignal): Promise<void> {
  const labs = allLabs().filter((lab) => !opts.lab || lab.name === opts.lab);
  const scope: MatrixScope = opts.catches ? 'catches' : opts.killers ? 'killers' : opts.quick ? 'quick' : 'full';
  const size = `${scope === 'full' ? '' : `, ${scope}`}${opts.language ? `, ${opts.language} only` : ''}${opts.mutant ? `, mutants ${opts.mutant} only` : ''}`;
  let passed = 0;
  let failed = 0;
  for (const lab of labs) {
    const parts = matrixParts(lab, opts, scope);
    const consumers = parts.flatMap((p) => p.consumers);
    const items = parts.flatMap((p) => p.items);
    let done = 0;
    process.stdout.write(
      `${lab.name} mutant matrix: ${items.length} runs (${parts.map((p) => `${p.consumers.length} ${p.program}s × ${p.scenarios.length} scenarios`).join(' + ')}${size}), ${opts.jobs} at a time\n`,
    );
    const disagreements: Disagreement[] = [];
    // The consumers' commands are relative to the project root, so the runs start there.
    const batchName = `${lab.name}-mutants${opts.program === 'server' ? '-server' : ''}${scope === 'full' ? '' : `-${scope}`}${opts.language ? `-${opts.language}` : ''}${opts.mutant ? '-some' : ''}`;
    const batchOptions: Parameters<typeof runBatch>[2] = {
      jobs: opts.jobs,
      cwd: projectRoot,
      reportsDir: reportsDirOf(opts),
      invokedAs: typedCommand(process.argv.slice(2)),
      ...(sealModeOf(opts.seal) ? { seal: sealModeOf(opts.seal)! } : {}),
      signal,
      onFinish: (item, result) => {
        done++;
        const disagree = agreementProblems(result.runDir, result.view);
        if (disagree.length) disagreements.push({ label: item.label, runDir: result.runDir, problems: disagree });
        if (result.status !== 'pass' || done % 10 === 0) process.stdout.write(`  [${done}/${items.length}] ${item.label}: ${result.status}\n`);
      },
    };
    // The consumers' commands are relative to the project root, so the runs start there.
    const { batchDir, runs, notStarted } = await runBatch(batchName, items, batchOptions);
    // One per item, in item order, unless interrupted: then no matrix is judged.
    const results = runs.map((run) => run.result);
    await rerunHarnessErrors(batchName, items, results, batchOptions, signal);
    if (signal.aborted) {
      process.stdout.write(
        `${lab.name}: interrupted after ${results.length} of ${items.length} runs (${notStarted.length} not started): no matrix judged from a part of it — every run: ${reportsPathShower(opts)(join(batchDir, 'index.html'))}\n`,
      );
      return;
    }
    const happyPathOf = (consumer: MatrixConsumer) => parts.find((p) => p.program === programOf(consumer))!.happyPath;
    const rows: MatrixRow[] = consumers.map((consumer) =>
      judgeRow(
        consumer,
        items.flatMap((item, i) => (item.consumer === consumer ? [cellOf(item.scenario.name, results[i]!)] : [])),
        happyPathOf(consumer),
      ),
    );
    const scenarios = parts.flatMap((p) => p.scenarios);
    const names = scenarios.map((s) => s.name).filter((name) => items.some((item) => item.scenario.name === name));
    writeMatrix(lab.name, batchDir, rows, names, results.length, disagreements, reportsPathShower(opts));
    passed += rows.filter((r) => r.ok).length;
    failed += rows.filter((r) => !r.ok).length + disagreements.length;
  }
  // Rows judged ok pass; rows that are not, and runs whose reports disagree with their verdict, fail.
  process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  process.exitCode = failed === 0 ? EXIT.pass : EXIT.fail;
}

type Disagreement = { label: string; runDir: string; problems: string[] };

/** One program's part of a lab's matrix: its rows (references and mutants), its scenarios, its happy path, its runs. */
interface MatrixPart {
  program: MatrixProgram;
  consumers: MatrixConsumer[];
  scenarios: BatchItem['scenario'][];
  happyPath: string;
  items: ReturnType<typeof matrixItems>;
}

/**
 * The lab's consumer matrix and, when it has a push server under test, its server matrix: the
 * server rows (Lab.server.mutantIndex) run the server scenarios, the consumer rows the others.
 * `--mutant` names mutants of either index; `--program` keeps one of the two.
 */
function matrixParts(lab: Lab, opts: MutantsOptions, scope: MatrixScope): MatrixPart[] {
  const wanted = (program: MatrixProgram) => !opts.program || opts.program === program;
  let everyone: MatrixConsumer[];
  try {
    const all = [...(wanted('consumer') ? loadMatrixConsumers(lab) : []), ...(wanted('server') ? loadMatrixServers(lab) : [])];
    everyone = consumersNamed(consumersIn(all, opts.language), mutantNames(opts.mutant));
  } catch (error) {
    throw new UsageError(`--mutant: ${lab.name}: ${(error as Error).message}`);
  }
  // Listed from the build's index where it vouches for a file: each is loaded once, here.
  const every = loadLabScenarios(lab.scenariosDir);
  const parts: MatrixPart[] = [];
  for (const program of PROGRAMS) {
    const consumers = everyone.filter((c) => programOf(c) === program);
    if (consumers.length === 0 || (program === 'server' && !lab.server)) continue;
    // --mutant: a program none of whose mutants was named is not run (its references judge nothing here).
    if (opts.mutant !== undefined && !consumers.some((c) => c.kind === 'mutant')) continue;
    // A scenario that tests the lab's push server (its consumers are probes) is the server matrix's, and only its.
    const scenarios = every.filter((s) => testsServer(s) === (program === 'server'));
    const happyPath = program === 'server' ? lab.server!.happyPath : lab.happyPath;
    parts.push({ program, consumers, scenarios, happyPath, items: matrixItems(consumers, scenarios, scope, happyPath) });
  }
  if (opts.program === 'server' && parts.length === 0) throw new UsageError(`--program server: the ${lab.name} lab has no push server under test`);
  return parts;
}

/** How many times a run that ended in a harness error is run again before it stays one. */
const HARNESS_ERROR_RERUNS = 2;

/**
 * A run that ended in a harness error (a harness stalled by a loaded machine, a Toxiproxy that
 * would not start) judged nothing of its consumer: like grading, the matrix runs it again, in a
 * batch of its own, and takes the new result in its place. One that errs every time stays an
 * error, and its row is not ok.
 */
export async function rerunHarnessErrors(
  batchName: string,
  items: BatchItem[],
  results: RunResult[],
  options: Parameters<typeof runBatch>[2],
  signal: AbortSignal,
  run: (name: string, items: BatchItem[], options: Parameters<typeof runBatch>[2]) => Promise<Pick<BatchResult, 'runs'>> = runBatch,
): Promise<void> {
  for (let round = 1; round <= HARNESS_ERROR_RERUNS && !signal.aborted; round++) {
    const again = results.flatMap((result, i) => (result?.status === 'error' ? [i] : []));
    if (again.length === 0) return;
    process.stdout.write(`  ${again.length} run(s) ended in a harness error (nothing judged): run again, round ${round} of ${HARNESS_ERROR_RERUNS}\n`);
    const rerun = await run(
      `${batchName}-rerun-${round}`,
      again.map((i) => items[i]!),
      options,
    );
    for (const { item, result } of rerun.runs) results[items.indexOf(item)] = result;
  }
}

/** A lab's judged matrix: matrix.md and matrix.json in the batch folder, a line per row and per disagreement on stdout. */
function writeMatrix(
  labName: string,
  batchDir: string,
  rows: MatrixRow[],
  names: string[],
  runs: number,
  disagreements: Disagreement[],
  show: (path: string) => string,
): void {
  writeFileSync(join(batchDir, 'matrix.md'), renderMatrixMarkdown(rows, names, batchDir));
  writeFileSync(
    join(batchDir, 'matrix.json'),
    JSON.stringify(
      {
        lab: labName,
        // `program` is additive: readers of old take rows without it (and skip `server` rows) as consumers.
        rows: rows.map((r) => ({ consumer: r.consumer.label, kind: r.consumer.kind, program: programOf(r.consumer), ok: r.ok, note: r.note, cells: r.cells })),
        agreement: { runs, disagreements },
      },
      null,
      2,
    ),
  );
  process.stdout.write('\n');
  for (const row of rows) process.stdout.write(`${row.ok ? 'ok     ' : 'PROBLEM'}  ${shownLabel(row.consumer).padEnd(44)} ${row.note}\n`);
  for (const d of disagreements) process.stdout.write(`DISAGREE ${d.label}: ${d.problems.join('; ')} (${show(d.runDir)})\n`);
  process.stdout.write(
    `${labName}: reports agree with the verdict in ${runs - disagreements.length} of ${runs} runs — matrix: ${show(join(batchDir, 'matrix.md'))}, every run: ${show(join(batchDir, 'index.html'))}\n`,
  );
}
