// `chaoslab mutants`'s work (the command is defined in ./mutants.ts): the matrix of each lab,
// its judgement, and whether every run's reports agree with its verdict.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type BatchItem, runBatch } from '../run/batch.js';
import type { RunResult } from '../run/runner.js';
import { interruptible } from '../base/interrupt.js';
import { allLabs, labNamed, labNames, testsServer } from '../labs/registry.js';
import {
  cellOf,
  consumersIn,
  consumersNamed,
  judgeRow,
  loadMatrixConsumers,
  type MatrixConsumer,
  type MatrixRow,
  type MatrixScope,
  matrixItems,
  renderMatrixMarkdown,
} from '../run/mutants.js';
import { projectRoot, reportsDirOf } from '../base/paths.js';
import { typedCommand } from '../record/reproduce.js';
import { agreementProblems } from '../report/agreement.js';
import { loadLabScenarios } from '../catalogue/catalogue.js';
import { EXIT, EXIT_SIGNAL, UsageError } from '../base/exit-status.js';
import { sealModeOf } from './options.js';

export interface MutantsOptions {
  quick?: boolean;
  killers?: boolean;
  language?: string;
  mutant?: string;
  jobs: number;
  out?: string;
  reports?: string;
  lab?: string;
  seal?: boolean;
}

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
  if (opts.quick && opts.killers) throw new UsageError('--quick and --killers are two sizes of the matrix: give one');
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
  const scope: MatrixScope = opts.killers ? 'killers' : opts.quick ? 'quick' : 'full';
  const size = `${scope === 'full' ? '' : `, ${scope}`}${opts.language ? `, ${opts.language} only` : ''}${opts.mutant ? `, mutants ${opts.mutant} only` : ''}`;
  let passed = 0;
  let failed = 0;
  for (const lab of labs) {
    let consumers: MatrixConsumer[];
    try {
      consumers = consumersNamed(consumersIn(loadMatrixConsumers(lab), opts.language), mutantNames(opts.mutant));
    } catch (error) {
      throw new UsageError(`--mutant: ${lab.name}: ${(error as Error).message}`);
    }
    // Listed from the build's index where it vouches for a file: each is loaded once, here.
    // The lab's own scenario folder (scenarios/<lab>/ for the catalogue's labs), each file loaded once.
    // A consumer matrix: scenarios that test the lab's push server (their consumers are probes) are not its.
    const scenarios = loadLabScenarios(lab.scenariosDir).filter((s) => !testsServer(s));
    const items = matrixItems(consumers, scenarios, scope, lab.happyPath);
    let done = 0;
    process.stdout.write(
      `${lab.name} mutant matrix: ${items.length} runs (${consumers.length} consumers × ${scenarios.length} scenarios${size}), ${opts.jobs} at a time\n`,
    );
    const disagreements: Disagreement[] = [];
    // The consumers' commands are relative to the project root, so the runs start there.
    const batchName = `${lab.name}-mutants${scope === 'full' ? '' : `-${scope}`}${opts.language ? `-${opts.language}` : ''}${opts.mutant ? '-some' : ''}`;
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
    const { batchDir, results, notStarted } = await runBatch(batchName, items, batchOptions);
    await rerunHarnessErrors(batchName, items, results, batchOptions, signal);
    if (signal.aborted) {
      process.stdout.write(
        `${lab.name}: interrupted after ${results.length} of ${items.length} runs (${notStarted.length} not started): no matrix judged from a part of it — every run: ${relative(process.cwd(), join(batchDir, 'index.html'))}\n`,
      );
      return;
    }
    const rows: MatrixRow[] = consumers.map((consumer) =>
      judgeRow(
        consumer,
        items.flatMap((item, i) => (item.consumer === consumer ? [cellOf(item.scenario.name, results[i]!)] : [])),
        lab.happyPath,
      ),
    );
    const names = scenarios.map((s) => s.name).filter((name) => items.some((item) => item.scenario.name === name));
    writeMatrix(lab.name, batchDir, rows, names, results.length, disagreements);
    passed += rows.filter((r) => r.ok).length;
    failed += rows.filter((r) => !r.ok).length + disagreements.length;
  }
  // Rows judged ok pass; rows that are not, and runs whose reports disagree with their verdict, fail.
  process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  process.exitCode = failed === 0 ? EXIT.pass : EXIT.fail;
}

type Disagreement = { label: string; runDir: string; problems: string[] };

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
  run: (name: string, items: BatchItem[], options: Parameters<typeof runBatch>[2]) => Promise<{ results: RunResult[] }> = runBatch,
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
    again.forEach((i, k) => {
      if (rerun.results[k]) results[i] = rerun.results[k];
    });
  }
}

/** A lab's judged matrix: matrix.md and matrix.json in the batch folder, a line per row and per disagreement on stdout. */
function writeMatrix(labName: string, batchDir: string, rows: MatrixRow[], names: string[], runs: number, disagreements: Disagreement[]): void {
  writeFileSync(join(batchDir, 'matrix.md'), renderMatrixMarkdown(rows, names, batchDir));
  writeFileSync(
    join(batchDir, 'matrix.json'),
    JSON.stringify(
      {
        lab: labName,
        rows: rows.map((r) => ({ consumer: r.consumer.label, kind: r.consumer.kind, ok: r.ok, note: r.note, cells: r.cells })),
        agreement: { runs, disagreements },
      },
      null,
      2,
    ),
  );
  process.stdout.write('\n');
  for (const row of rows) process.stdout.write(`${row.ok ? 'ok     ' : 'PROBLEM'}  ${row.consumer.label.padEnd(38)} ${row.note}\n`);
  for (const d of disagreements) process.stdout.write(`DISAGREE ${d.label}: ${d.problems.join('; ')} (${relative(process.cwd(), d.runDir)})\n`);
  process.stdout.write(
    `${labName}: reports agree with the verdict in ${runs - disagreements.length} of ${runs} runs — matrix: ${relative(process.cwd(), join(batchDir, 'matrix.md'))}, every run: ${relative(process.cwd(), join(batchDir, 'index.html'))}\n`,
  );
}
