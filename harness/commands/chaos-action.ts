// `chaoslab chaos`'s work, loaded only when the command runs (./chaos.ts defines it): the lab's
// chaos model, the search (harness/chaos/search.ts), then the chaos folder's overview — the
// usual batch files, with the confirmed failures and their repros said first — and chaos.json.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChaosOutcome, scheduleAt, searchChaos } from '../chaos/search.js';
import { writeRepro } from '../chaos/repro.js';
import { runTrial } from '../chaos/trial.js';
import { interruptible } from '../interrupt.js';
import { labNamed, labNames } from '../labs/registry.js';
import { reportsDirOf, shellQuote } from '../paths.js';
import { type BatchSection, batchViewOf, ownCommandLine } from '../report/batch-view.js';
import { renderBatchFiles } from '../report/render-batch.js';
import { ensureDir, switchLatest } from '../report/run-folder.js';
import { typedCommand } from '../reproduce.js';
import { newRunId } from '../runner.js';
import { sealing } from '../sealing.js';
import type { ChaosCommandOptions } from './chaos.js';
import { EXIT, EXIT_SIGNAL, UsageError } from './exit-status.js';
import { sealModeOf } from './run.js';

export async function chaosAction(opts: ChaosCommandOptions): Promise<void> {
  const labName = opts.lab ?? 'ledger';
  const lab = labNamed(labName);
  if (!lab) throw new UsageError(`unknown lab "${labName}"; labs: ${labNames().join(', ')}`);
  if (!lab.chaos) throw new UsageError(`the ${lab.name} lab draws no chaos schedules`);
  if (opts.path !== undefined && opts.seed === undefined) throw new UsageError('--path needs the --seed it belongs to');
  const model = await lab.chaos();
  const cwd = process.cwd();
  const reportsDir = reportsDirOf(opts, cwd);
  const consumerCommand = opts.consumer ?? lab.referenceCommand;
  const seed = opts.seed ?? (Math.random() * 0x1_0000_0000) >>> 0;
  const seal = sealModeOf(opts.seal);
  const decision = await sealing(seal, opts.toxiproxyUrl);
  const where = { sealed: decision.sealed };
  const common = {
    cwd,
    ...(seal ? { seal } : {}),
    ...(opts.toxiproxyUrl ? { toxiproxyUrl: opts.toxiproxyUrl } : {}),
    invokedAs: typedCommand(process.argv.slice(2)),
  };
  // The seed first: whatever happens next, the draw can be made again.
  process.stdout.write(
    `chaoslab chaos: seed ${seed} (--seed ${seed} draws the same schedules) · ${lab.name} lab · ` +
      `${opts.path ? `only path ${opts.path}` : `up to ${opts.runs} runs or ${Math.round(opts.budget / 1000)} s`} · ` +
      `${decision.sealed ? 'sealed' : 'not sealed'} · consumer: ${consumerCommand}\n`,
  );
  const stop = interruptible({ onInterrupt: (signal) => process.stdout.write(`\n${signal}: stopping after the running run\n`) });
  const startedAt = new Date().toISOString().slice(0, 19);
  const batchDir = join(ensureDir(reportsDir), newRunId(`chaos-${lab.name}`));
  ensureDir(batchDir);
  try {
    if (opts.path !== undefined) {
      const schedule = await scheduleAt(model.schedules(), seed, opts.path);
      const trial = await runTrial({
        ...common,
        lab,
        model,
        schedule,
        where,
        name: 'schedule',
        description: `chaoslab chaos, seed ${seed}, path ${opts.path}. Fault steps: ${model.steps(schedule, where).join('; ') || 'none'}.`,
        batchDir,
        consumerCommand,
        signal: stop.signal,
      });
      process.stdout.write(`${trial.status.toUpperCase()}  ${trial.headline}\n  scenario: ${trial.file}\n  report: ${join(trial.runDir, 'report.html')}\n`);
      finishBatch(batchDir, reportsDir, startedAt, [{ label: `path ${opts.path}`, trial }], []);
      process.exitCode = trial.status === 'pass' || trial.status === 'skipped' ? EXIT.pass : trial.status === 'fail' ? EXIT.fail : EXIT.error;
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
      batchDir,
      signal: stop.signal,
      log: (line) => process.stdout.write(`${line}\n`),
      onFailure: (failure) => writeRepro(failure, { lab: lab.name, model, where, batchDir, consumerCommand, seed, runsAsked: opts.runs, cwd, written: written++ }),
    });
    writeFileSync(join(batchDir, 'chaos.json'), `${JSON.stringify(chaosJson(outcome, lab.name, consumerCommand, batchDir), null, 2)}\n`);
    const index = finishBatch(batchDir, reportsDir, startedAt, outcome.trials, sectionsOf(outcome, batchDir));
    process.stdout.write(`${closingLine(outcome)}\n  overview: ${index}\n`);
    process.exitCode = outcome.harnessErrors.length || outcome.stoppedBy === 'interrupted' ? EXIT.error : outcome.failures.length ? EXIT.fail : EXIT.pass;
  } finally {
    stop.dispose();
    const by = stop.by();
    if (by) process.exitCode = EXIT_SIGNAL[by];
  }
}

/** The usual batch files (index.html, summary.md, results.json, junit.xml); returns index.html's path. */
function finishBatch(batchDir: string, reportsDir: string, startedAt: string, trials: ChaosOutcome['trials'], sections: BatchSection[]): string {
  const view = batchViewOf(
    batchDir,
    { name: 'chaos', startedAt, endedAt: new Date().toISOString().slice(0, 19), commandLine: ownCommandLine(), ...(sections.length ? { sections } : {}) },
    trials.map(({ label, trial }) => ({ label, runDir: trial.runDir, view: trial.view })),
  );
  renderBatchFiles(view);
  switchLatest(reportsDir, batchDir);
  return join(batchDir, 'index.html');
}

const rel = (batchDir: string, path: string): string => (path.startsWith(`${batchDir}/`) ? path.slice(batchDir.length + 1) : path);

/** What the overview says first: the seed, the confirmed failures with their repros, the unconfirmed ones. */
function sectionsOf(o: ChaosOutcome, batchDir: string): BatchSection[] {
  const stopped = { runs: 'all runs done', budget: 'the time budget ran out', failure: 'stopped at the first confirmed failure', interrupted: 'interrupted' }[
    o.stoppedBy
  ];
  const sections: BatchSection[] = [
    {
      title: 'Chaos',
      lines: [
        {
          text: `seed ${o.seed}: ${o.runsDone} of ${o.runsAsked} schedules tried (${stopped}); ${o.failures.length} confirmed failure${o.failures.length === 1 ? '' : 's'}`,
        },
      ],
    },
  ];
  if (o.failures.length)
    sections.push({
      title: `Confirmed failures (${o.failures.length})`,
      lines: o.failures.flatMap((f) => [
        {
          text: `run ${f.index + 1}: failed twice, shrunk from ${f.originalSteps.length} to ${f.steps.length} fault steps in ${f.shrinkRuns} runs (path ${f.path}): ${f.smallest[0].headline}`,
          href: `${rel(batchDir, f.smallest[0].runDir)}/report.html`,
        },
        {
          text: `repro: ${f.repro} — replay: chaoslab run ${shellQuote(f.repro)}`,
          href: rel(batchDir, f.repro.startsWith('/') ? f.repro : join(process.cwd(), f.repro)),
        },
        ...f.steps.map((s) => ({ text: `  step: ${s}` })),
      ]),
    });
  if (o.unconfirmed.length)
    sections.push({
      title: `Not confirmed (${o.unconfirmed.length}): failed once, then ${o.unconfirmed.every((u) => u.trials[1].status === 'pass') ? 'passed' : 'ended otherwise'} on a second run`,
      lines: o.unconfirmed.flatMap((u) => [
        { text: `run ${u.index + 1}, first: ${u.trials[0].headline}`, href: `${rel(batchDir, u.trials[0].runDir)}/report.html` },
        {
          text: `run ${u.index + 1}, again: ${u.trials[1].status.toUpperCase()} ${u.trials[1].headline}`,
          href: `${rel(batchDir, u.trials[1].runDir)}/report.html`,
        },
      ]),
    });
  if (o.harnessErrors.length)
    sections.push({
      title: `Harness errors (${o.harnessErrors.length})`,
      lines: o.harnessErrors.map((t) => ({ text: `${t.name}: ${t.headline}`, href: `${rel(batchDir, t.runDir)}/report.html` })),
    });
  return sections;
}

function closingLine(o: ChaosOutcome): string {
  const tried = `${o.runsDone} schedule${o.runsDone === 1 ? '' : 's'} tried`;
  if (o.failures.length)
    return `${o.failures.length} confirmed failure${o.failures.length === 1 ? '' : 's'} (${tried}): ${o.failures.map((f) => f.repro).join(', ')}`;
  const unconfirmed = o.unconfirmed.length ? `, ${o.unconfirmed.length} failed once but not again` : '';
  const errors = o.harnessErrors.length ? `, ${o.harnessErrors.length} harness error${o.harnessErrors.length === 1 ? '' : 's'}` : '';
  return `no failure found (${tried}${unconfirmed}${errors})`;
}

/** chaos.json: the search as data (schema: docs/chaos.md). */
function chaosJson(o: ChaosOutcome, lab: string, consumer: string, batchDir: string) {
  const trial = (t: ChaosOutcome['failures'][number]['found'][number]) => ({
    status: t.status,
    headline: t.headline,
    runDir: rel(batchDir, t.runDir),
    scenario: rel(batchDir, t.file),
  });
  return {
    schema: 1,
    lab,
    consumer,
    seed: o.seed,
    runsAsked: o.runsAsked,
    runsDone: o.runsDone,
    stoppedBy: o.stoppedBy,
    failures: o.failures.map((f) => ({
      run: f.index + 1,
      path: f.path,
      repro: f.repro,
      originalSteps: f.originalSteps,
      steps: f.steps,
      shrinkRuns: f.shrinkRuns,
      found: f.found.map(trial),
      smallest: f.smallest.map(trial),
    })),
    unconfirmed: o.unconfirmed.map((u) => ({ run: u.index + 1, steps: u.steps, trials: u.trials.map(trial) })),
    harnessErrors: o.harnessErrors.map((t) => ({ name: t.name, headline: t.headline, runDir: rel(batchDir, t.runDir) })),
  };
}
