// `chaoslab run`'s work, loaded only when a run starts (harness/commands/run.ts defines the
// command): one run, or a batch; the console on stdout, or on stderr under one JSON document.
import { interruptible } from '../base/interrupt.js';
import { reportsDirOf, reportsPathShower } from '../base/paths.js';
import { type ScenarioOutcome, createConsoleReporter } from '../report/console.js';
import { jsonText } from '../text/inert.js';
import type { RunView } from '../report/view.js';
import { typedCommand } from '../record/reproduce.js';
import { runScenario } from '../run/runner.js';
import { EXIT, EXIT_SIGNAL, combinedStatus } from '../base/exit-status.js';
import { sealModeOf } from './options.js';
import type { Selection } from './select.js';

/** `chaoslab run`'s options, as commander parsed them (./run.ts defines them). */
export interface RunCommandOptions {
  consumer?: string;
  /** --server: the push server under test, for server scenarios. */
  server?: string;
  out?: string;
  reports?: string;
  toxiproxyUrl?: string;
  quiet?: boolean;
  verbose?: boolean;
  all?: boolean;
  only?: string;
  jobs: number;
  repeat: number;
  lab?: string;
  /** --seal: true, --no-seal: false, neither: undefined (CHAOSLAB_SEAL, else auto). */
  seal?: boolean;
  /** --room-quota, in bytes. */
  roomQuota?: number;
  reporter: 'console' | 'json';
  json?: boolean;
  /** --store-limit: the largest consumer store the checker reads, in bytes. */
  storeLimit?: number;
}

export async function runAction({ items, batch, batchName, note }: Selection, opts: RunCommandOptions): Promise<void> {
  const cwd = process.cwd();
  const reportsDir = reportsDirOf(opts, cwd);
  const json = opts.json === true || opts.reporter === 'json';
  // With --json, stdout carries only the document: the console goes to stderr.
  const out = json ? process.stderr : process.stdout;
  if (note) out.write(`chaoslab: ${note}\n`);
  const reporter = createConsoleReporter({
    tty: out.isTTY === true,
    quiet: opts.quiet === true,
    verbose: opts.verbose === true,
    out,
    cwd,
    showPath: reportsPathShower(opts, cwd),
  });
  const invokedAs = typedCommand(process.argv.slice(2));
  // Ctrl-C/SIGTERM: stop, write every report, then exit 130/143; a second one exits at once.
  const stop = interruptible({ onInterrupt: (signal) => reporter.interrupted(signal) });
  const common = {
    signal: stop.signal,
    cwd,
    reportsDir,
    invokedAs,
    ...(opts.toxiproxyUrl ? { toxiproxyUrl: opts.toxiproxyUrl } : {}),
    ...(opts.storeLimit ? { storeLimitBytes: opts.storeLimit } : {}),
    ...(sealModeOf(opts.seal) ? { seal: sealModeOf(opts.seal)! } : {}),
    ...(opts.roomQuota !== undefined ? { roomQuotaBytes: opts.roomQuota } : {}),
  };
  try {
    if (!batch) {
      const [item] = items;
      reporter.scenarioStarted(item!.label);
      const result = await runScenario({
        ...common,
        scenario: item!.scenario,
        ...(item!.consumerCommand ? { consumerCommand: item!.consumerCommand } : {}),
        ...(item!.serverCommand ? { serverCommand: item!.serverCommand } : {}),
        onJournal: reporter.onJournal,
      });
      reporter.finalTable([reporter.scenarioFinished(item!.label, result)]);
      if (json) await printJson([{ view: result.view, runDir: result.runDir, label: item!.label }]);
      process.exitCode = EXIT[combinedStatus([result.status])];
      return;
    }
    const outcomes: ScenarioOutcome[] = [];
    const { runBatch } = await import('../run/batch.js');
    const { runs, view } = await runBatch(batchName, items, {
      ...common,
      jobs: opts.jobs,
      onStart: (item, nth, total) => reporter.scenarioStarted(item.label, { index: nth, total }),
      // Live step lines follow one run at a time; with several jobs only start/finish lines.
      ...(opts.jobs === 1 ? { onJournal: reporter.onJournal } : {}),
      onFinish: (item, result) => outcomes.push(reporter.scenarioFinished(item.label, result)),
    });
    reporter.batchFinished(outcomes, view, { verbose: opts.verbose === true });
    if (json) await printJson(runs.map(({ item, result }) => ({ view: result.view, runDir: result.runDir, label: item.label })));
    process.exitCode = EXIT[combinedStatus(runs.map(({ result }) => result.status))];
  } finally {
    reporter.close();
    stop.dispose();
    const by = stop.by();
    if (by) {
      process.exitCode = EXIT_SIGNAL[by];
      // Everything is stopped and written: a handle a stopped run left open must not keep us here.
      setTimeout(() => process.exit(EXIT_SIGNAL[by]), 2000).unref();
    }
  }
}

// The JSON document's modules, and a batch's, load only where they are needed: a single run
// starts once every module imported before it has loaded (its sealed worker waits for it).
async function printJson(runs: { view: RunView; runDir: string; label: string }[]): Promise<void> {
  const { resultsJson, runJson } = await import('../report/run-json.js');
  process.stdout.write(jsonText(resultsJson(runs.map(({ view, runDir, label }) => runJson(view, runDir, { label })))));
}
