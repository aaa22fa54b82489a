// The chaos folder's overview, drawn from the search's outcome: the usual batch files (index.html,
// summary.md, results.json, junit.xml) of every run, with the seed and the confirmed failures and
// their repros said first, the closing line of the console, and chaos.json (docs/chaos.md).

import { join } from 'node:path';
import { shellQuote } from '../base/paths.js';
import { type BatchSection, batchViewOf, ownCommandLine } from '../report/batch-view.js';
import { renderBatchFiles } from '../report/render-batch.js';
import { switchLatest } from '../report/run-folder.js';
import type { ChaosOutcome, Failure } from './search.js';
import { COVERAGE_BOUND, type CoverageRow, coverageRows, metShare } from '../findings/coverage.js';

/** The usual batch files (index.html, summary.md, results.json, junit.xml); returns index.html's path. */
export function finishBatch(
  batchDir: string,
  reportsDir: string,
  startedAt: string,
  trials: ChaosOutcome['trials'],
  sections: BatchSection[],
  commandLine = ownCommandLine(),
): string {
  const view = batchViewOf(
    batchDir,
    { name: 'chaos', startedAt, endedAt: new Date().toISOString().slice(0, 19), commandLine, ...(sections.length ? { sections } : {}) },
    trials.map(({ label, trial }) => ({ label, runDir: trial.runDir, view: trial.view })),
  );
  renderBatchFiles(view);
  switchLatest(reportsDir, batchDir);
  return join(batchDir, 'index.html');
}

const rel = (batchDir: string, path: string): string => (path.startsWith(`${batchDir}/`) ? path.slice(batchDir.length + 1) : path);

/** What the overview says first: the seed, the confirmed failures with their repros, the unconfirmed ones. */
export function sectionsOf(o: ChaosOutcome, batchDir: string, cwd = process.cwd()): BatchSection[] {
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
  const coverage = coverageOf(o);
  if (coverage.length)
    sections.push({
      title: `Coverage: did each fault kind take effect? (${o.searchRuns.length} schedules)`,
      lines: coverage.map((row) => ({ text: coverageLine(row) })),
    });
  if (o.failures.length)
    sections.push({
      title: `Confirmed failures (${o.failures.length})`,
      lines: o.failures.flatMap((f) => [
        {
          text: `run ${f.index + 1}: shrunk from ${f.originalSteps.length} to ${f.steps.length} fault steps in ${f.shrinkRuns} runs (path ${f.path}), failed ${steadiness(f)}: ${f.smallest[0]!.headline}`,
          href: `${rel(batchDir, f.smallest[0]!.runDir)}/report.html`,
        },
        {
          text: `repro: ${f.repro} — replay: chaoslab run ${shellQuote(f.repro)}`,
          href: rel(batchDir, f.repro.startsWith('/') ? f.repro : join(cwd, f.repro)),
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
  if (o.untested.length)
    sections.push({
      title: `Untested (${o.untested.length}): passed, but a drawn fault took no effect`,
      lines: o.untested.map((t) => ({ text: `${t.name}: ${t.headline}`, href: `${rel(batchDir, t.runDir)}/report.html` })),
    });
  if (o.harnessErrors.length)
    sections.push({
      title: `Harness errors (${o.harnessErrors.length})`,
      lines: o.harnessErrors.map((t) => ({ text: `${t.name}: ${t.headline}`, href: `${rel(batchDir, t.runDir)}/report.html` })),
    });
  return sections;
}

/** The search's coverage table: a row per fault kind, over the first run of each schedule. */
export const coverageOf = (o: Pick<ChaosOutcome, 'searchRuns'>): CoverageRow[] => coverageRows(o.searchRuns.map((t) => t.coverage));

/** "reorganisation: met in 18 of 20 runs that drew it (90 %); 31 drawn, 29 took effect", and below the bound, that it is the generator's defect. */
export function coverageLine(row: CoverageRow): string {
  const share = Math.floor(metShare(row) * 100);
  const below = metShare(row) < COVERAGE_BOUND ? ` — below ${COVERAGE_BOUND * 100} %: the generator draws ${row.kind} faults that test nothing` : '';
  return `${row.kind}: met in ${row.runsMet} of ${row.runsDrawn} runs that drew it (${share} %); ${row.drawn} drawn, ${row.tookEffect} took effect${below}`;
}

/** "4 of 4 runs", or "3 of 4 runs (it turns on timing: a replay may pass)". */
export function steadiness(f: Pick<Failure, 'failedRuns' | 'smallest'>): string {
  const of = `${f.failedRuns} of ${f.smallest.length} runs`;
  return f.failedRuns === f.smallest.length ? of : `${of} (it turns on timing: a replay may pass)`;
}

export function closingLine(o: ChaosOutcome): string {
  const tried = `${o.runsDone} schedule${o.runsDone === 1 ? '' : 's'} tried`;
  if (o.failures.length)
    return `${o.failures.length} confirmed failure${o.failures.length === 1 ? '' : 's'} (${tried}): ${o.failures.map((f) => f.repro).join(', ')}`;
  const unconfirmed = o.unconfirmed.length ? `, ${o.unconfirmed.length} failed once but not again` : '';
  const errors = o.harnessErrors.length ? `, ${o.harnessErrors.length} harness error${o.harnessErrors.length === 1 ? '' : 's'}` : '';
  const untested = o.untested.length ? `, ${o.untested.length} untested (a fault took no effect)` : '';
  return `no failure found (${tried}${unconfirmed}${untested}${errors})`;
}

/** chaos.json: the search as data (schema: docs/chaos.md). */
/** `server`: `chaos --server`'s push server under test (`consumer` is then its probes'). */
export function chaosJson(o: ChaosOutcome, lab: string, consumer: string, batchDir: string, server?: string) {
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
    ...(server === undefined ? {} : { server }),
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
      steadyRuns: f.steadyRuns,
      failedRuns: f.failedRuns,
      found: f.found.map(trial),
      smallest: f.smallest.map(trial),
    })),
    unconfirmed: o.unconfirmed.map((u) => ({ run: u.index + 1, steps: u.steps, trials: u.trials.map(trial) })),
    harnessErrors: o.harnessErrors.map((t) => ({ name: t.name, headline: t.headline, runDir: rel(batchDir, t.runDir) })),
    untested: o.untested.map((t) => ({ name: t.name, headline: t.headline, runDir: rel(batchDir, t.runDir) })),
    coverage: coverageOf(o),
  };
}
