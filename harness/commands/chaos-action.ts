// `chaoslab chaos`'s work, loaded only when the command runs (./chaos.ts defines it): the lab's
// chaos model, the search (harness/chaos/search.ts), then the chaos folder's overview — the
// usual batch files, with the confirmed failures and their repros said first — and chaos.json.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chaosJson, closingLine, finishBatch, sectionsOf } from '../chaos/overview.js';
import { writeRepro } from '../chaos/repro.js';
import { scheduleAt, searchChaos } from '../chaos/search.js';
import { runTrial, type TrialRequest } from '../chaos/trial.js';
import { interruptible } from '../base/interrupt.js';
import { labNamed, labNames } from '../labs/registry.js';
import type { Lab } from '../lab-api/lab.js';
import type { ChaosModel } from '../lab-api/chaos-model.js';
import { reportsDirOf, reportsPathShower } from '../base/paths.js';
import { jsonText, terminalText } from '../text/inert.js';
import { ensureDir } from '../report/run-folder.js';
import { closeFolder, makePassable } from '../report/staff-only.js';
import { typedCommand } from '../record/reproduce.js';
import { newRunId } from '../run/runner.js';
import { sealing } from '../run/sealing.js';
import { EXIT, EXIT_SIGNAL, UsageError } from '../base/exit-status.js';
import { sealModeOf } from './options.js';

export interface ChaosCommandOptions {
  lab?: string;
  consumer?: string;
  /** A push server under test: the lab's server chaos model, its probes the lab's reference consumer. */
  server?: string;
  seed?: number;
  runs: number;
  budget: number;
  keepGoing?: boolean;
  shrinkRuns: number;
  steadyRuns: number;
  path?: string;
  out?: string;
  reports?: string;
  toxiproxyUrl?: string;
  seal?: boolean;
  storeLimit?: number;
}

/** The lab and its chaos model: its consumer model, or with --server its server model. */
async function labAndModel(labName: string, server: boolean): Promise<{ lab: Lab; model: ChaosModel }> {
  const lab = labNamed(labName);
  if (!lab) throw new UsageError(`unknown lab "${labName}"; labs: ${labNames().join(', ')}`);
  const chaosOf = server ? lab.server?.chaos : lab.chaos;
  if (!chaosOf) throw new UsageError(`the ${lab.name} lab draws no chaos schedules${server ? ' for a push server (--server)' : ''}`);
  return { lab, model: await chaosOf() };
}

/** `--server`'s part of a search, a trial and a repro. */
const serverPart = (serverCommand: string | undefined) => (serverCommand === undefined ? {} : { serverCommand });

export async function chaosAction(opts: ChaosCommandOptions): Promise<void> {
  // The registry's first lab when --lab does not say (chaos --help says so).
  const { lab, model } = await labAndModel(opts.lab ?? labNames()[0]!, opts.server !== undefined);
  if (opts.path !== undefined && opts.seed === undefined) throw new UsageError('--path needs the --seed it belongs to');
  const { server: serverCommand } = opts;
  const cwd = process.cwd();
  const reportsDir = reportsDirOf(opts, cwd);
  const show = reportsPathShower(opts, cwd);
  const consumerCommand = opts.consumer ?? lab.referenceCommand;
  const seed = opts.seed ?? (Math.random() * 0x1_0000_0000) >>> 0;
  const seal = sealModeOf(opts.seal);
  const decision = await sealing(seal, opts.toxiproxyUrl);
  const where = { sealed: decision.sealed };
  const common = {
    cwd,
    ...(seal ? { seal } : {}),
    ...(opts.toxiproxyUrl ? { toxiproxyUrl: opts.toxiproxyUrl } : {}),
    ...(opts.storeLimit ? { storeLimitBytes: opts.storeLimit } : {}),
    invokedAs: typedCommand(process.argv.slice(2)),
    ...serverPart(serverCommand),
  };
  // The seed first: whatever happens next, the draw can be made again.
  process.stdout.write(
    `chaoslab chaos: seed ${seed} (--seed ${seed} draws the same schedules) · ${lab.name} lab · ` +
      `${opts.path ? `only path ${opts.path}` : `up to ${opts.runs} runs or ${Math.round(opts.budget / 1000)} s`} · ` +
      `${decision.sealed ? 'sealed' : 'not sealed'} · ${serverCommand === undefined ? `consumer: ${consumerCommand}` : `server: ${serverCommand}`}\n`,
  );
  const stop = interruptible({ onInterrupt: (signal) => process.stdout.write(`\n${signal}: stopping after the running run\n`) });
  const startedAt = new Date().toISOString().slice(0, 19);
  const batchDir = join(ensureDir(reportsDir), newRunId(`chaos-${lab.name}`));
  // Passable while its runs are live, closed when the search ends (docs/sandbox.md, "Modes: who may reach what").
  makePassable(reportsDir);
  makePassable(ensureDir(batchDir));
  try {
    if (opts.path !== undefined) {
      await replayPath({ ...common, lab, model, where, seed, path: opts.path, batchDir, reportsDir, startedAt, consumerCommand, signal: stop.signal, show });
      return;
    }
    let written = 0;
    const outcome = await searchChaos({
      ...common,
      lab,
      model,
      where,
      consumerCommand,
      seed,
      runs: opts.runs,
      budgetMs: opts.budget,
      keepGoing: opts.keepGoing === true,
      shrinkRuns: opts.shrinkRuns,
      steadyRuns: opts.steadyRuns,
      batchDir,
      signal: stop.signal,
      log: (line) => process.stdout.write(`${terminalText(line)}\n`),
      onFailure: (failure) =>
        writeRepro(failure, {
          lab: lab.name,
          model,
          where,
          batchDir,
          consumerCommand,
          ...serverPart(serverCommand),
          seed,
          runsAsked: opts.runs,
          cwd,
          written: written++,
        }),
    });
    writeFileSync(join(batchDir, 'chaos.json'), jsonText(chaosJson(outcome, lab.name, consumerCommand, batchDir, serverCommand)));
    const index = finishBatch(batchDir, reportsDir, startedAt, outcome.trials, sectionsOf(outcome, batchDir));
    process.stdout.write(`${closingLine(outcome)}\n  overview: ${terminalText(show(index))}\n`);
    process.exitCode = outcome.harnessErrors.length || outcome.stoppedBy === 'interrupted' ? EXIT.error : outcome.failures.length ? EXIT.fail : EXIT.pass;
  } finally {
    stop.dispose();
    closeFolder(batchDir);
    const by = stop.by();
    if (by) process.exitCode = EXIT_SIGNAL[by];
  }
}

/** `--seed S --path P`: the one schedule at that seed and path, run as a trial; the exit status is its verdict's. */
async function replayPath(
  run: Omit<TrialRequest, 'schedule' | 'name' | 'description'> & {
    seed: number;
    path: string;
    reportsDir: string;
    startedAt: string;
    show: (path: string) => string;
  },
): Promise<void> {
  const { model, seed, path, where, batchDir, reportsDir, startedAt, show, ...rest } = run;
  const schedule = await scheduleAt(model.schedules(), seed, path);
  const trial = await runTrial({
    ...rest,
    model,
    schedule,
    where,
    name: 'schedule',
    description: `chaoslab chaos, seed ${seed}, path ${path}. Fault steps: ${model.steps(schedule, where).join('; ') || 'none'}.`,
    batchDir,
  });
  process.stdout.write(
    `${trial.status.toUpperCase()}  ${terminalText(trial.headline)}\n  scenario: ${terminalText(show(trial.file))}\n  report: ${terminalText(show(join(trial.runDir, 'report.html')))}\n`,
  );
  finishBatch(batchDir, reportsDir, startedAt, [{ label: `path ${path}`, trial }], []);
  process.exitCode = trial.status === 'pass' || trial.status === 'skipped' ? EXIT.pass : trial.status === 'fail' ? EXIT.fail : EXIT.error;
}
