// `chaoslab run`: one scenario, the whole catalogue (--all / --only), or one scenario many
// times (--repeat, the dstest habit), against one consumer.
import { type Command, InvalidArgumentError } from 'commander';
import { minimatch } from 'minimatch';
import { type BatchItem, runBatch } from '../batch.js';
import { labNamed, labNames } from '../labs/registry.js';
import { defaultReportsDir, scenariosDir } from '../paths.js';
import { type ScenarioOutcome, createConsoleReporter } from '../report/console.js';
import { runScenario } from '../runner.js';
import type { SealMode } from '../sealing.js';
import { listScenarios, resolveScenario } from '../scenario/catalogue.js';
import { loadScenario } from '../scenario/load.js';
import { EXIT, UsageError, combinedStatus } from './exit-status.js';

export interface RunCommandOptions {
  consumer?: string;
  reports: string;
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
}

/** The sealing mode the flags ask for. */
export const sealModeOf = (seal: boolean | undefined): SealMode | undefined => (seal === undefined ? undefined : seal ? 'on' : 'off');

export const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
};

export function register(program: Command): void {
  program
    .command('run')
    .description('run a scenario (by name from scenarios/, or a file path), the catalogue (--all, --only), or one scenario many times (--repeat)')
    .argument('[scenario]', 'scenario name (e.g. ack-crash) or path to a .yaml file')
    .option(
      '--consumer <command>',
      'shell command line of the consumer under test, run from the current directory (default: the TypeScript reference consumer)',
    )
    .option('--all', 'run every scenario of the catalogue')
    .option('--only <glob>', 'run the catalogue scenarios whose name matches (e.g. "malformed-*")')
    .option('--lab <name>', 'with --all or --only: only the scenarios of this lab (ledger)')
    .option('--repeat <n>', 'run the scenario n times and count passes and failures', positiveInt, 1)
    .option('--jobs <n>', 'runs at the same time (each has its own processes and Toxiproxy)', positiveInt, 1)
    .option('--reports <dir>', 'where run folders are written', defaultReportsDir)
    .option('--toxiproxy-url <url>', 'use a running Toxiproxy server (default: $TOXIPROXY_URL, else start one)')
    .option('--seal', 'require sealed runs (an error where the machine cannot seal)')
    .option('--no-seal', 'run unsealed: the consumer runs as your user (default: sealed wherever the machine allows; CHAOSLAB_SEAL=on|off|auto)')
    .option('-q, --quiet', 'print only the results')
    .option(
      '-v, --verbose',
      "with several runs: each run's milestones while it runs, and every run at the end (default: a line per run, then those that did not pass)",
    )
    .action(async (name: string | undefined, opts: RunCommandOptions) => {
      const cwd = process.cwd();
      const items = selectItems(name, opts);
      const reporter = createConsoleReporter({
        tty: process.stdout.isTTY === true,
        quiet: opts.quiet === true,
        verbose: opts.verbose === true,
        out: process.stdout,
        cwd,
      });
      try {
        if (items.length === 1 && opts.repeat === 1 && !opts.all && !opts.only) {
          const [item] = items;
          reporter.scenarioStarted(item!.label);
          const result = await runScenario({
            scenario: item!.scenario,
            cwd,
            reportsDir: opts.reports,
            ...(opts.consumer ? { consumerCommand: opts.consumer } : {}),
            ...(opts.toxiproxyUrl ? { toxiproxyUrl: opts.toxiproxyUrl } : {}),
            ...(sealModeOf(opts.seal) ? { seal: sealModeOf(opts.seal)! } : {}),
            onJournal: reporter.onJournal,
          });
          reporter.finalTable([reporter.scenarioFinished(item!.label, result)]);
          process.exitCode = EXIT[result.status];
          return;
        }
        const outcomes: ScenarioOutcome[] = [];
        const { results, view } = await runBatch(batchName(name ? [name] : [], opts), items, {
          jobs: opts.jobs,
          cwd,
          reportsDir: opts.reports,
          ...(opts.toxiproxyUrl ? { toxiproxyUrl: opts.toxiproxyUrl } : {}),
          ...(sealModeOf(opts.seal) ? { seal: sealModeOf(opts.seal)! } : {}),
          onStart: (item, index, total) => reporter.scenarioStarted(item.label, { index, total }),
          // Live step lines follow one run at a time; with several jobs only start/finish lines.
          ...(opts.jobs === 1 ? { onJournal: reporter.onJournal } : {}),
          onFinish: (item, result) => outcomes.push(reporter.scenarioFinished(item.label, result)),
        });
        reporter.batchFinished(outcomes, view, { verbose: opts.verbose === true });
        process.exitCode = EXIT[combinedStatus(results.map((r) => r.status))];
      } finally {
        reporter.close();
      }
    });
}

/**
 * The batch folder's name, after what was asked: `catalogue` (--all), `only-<glob>`, the names
 * given, `<lab>-catalogue`, with `-x<n>` for a repeat; safe as a file name.
 */
export function batchName(names: string[], opts: Pick<RunCommandOptions, 'all' | 'only' | 'lab' | 'repeat'>): string {
  const safe = (text: string): string =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '');
  const what = opts.only ? `only-${safe(opts.only) || 'glob'}` : opts.all ? 'catalogue' : safe(names.join('-')) || 'batch';
  const lab = opts.lab && (opts.all || opts.only) ? `${safe(opts.lab)}-` : '';
  return `${lab}${what}`.slice(0, 60).replace(/-+$/, '') + (opts.repeat > 1 ? `-x${opts.repeat}` : '');
}

function selectItems(name: string | undefined, opts: RunCommandOptions): BatchItem[] {
  const consumer = opts.consumer ? { consumerCommand: opts.consumer } : {};
  if (opts.all || opts.only) {
    if (name) throw new UsageError(`give a scenario name or --all/--only, not both (got "${name}")`);
    if (opts.lab && !labNamed(opts.lab)) throw new UsageError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
    const chosen = listScenarios(scenariosDir, opts.lab).filter((s) => !opts.only || minimatch(s.name, opts.only));
    if (chosen.length === 0) throw new UsageError(`no scenario matches "${opts.only}"${opts.lab ? ` in the ${opts.lab} lab` : ''}`);
    // One consumer speaks one lab's protocol: with --consumer, the scenarios must be of one lab.
    const spanned = [...new Set(chosen.map((s) => s.lab))];
    if (opts.consumer && spanned.length > 1)
      throw new UsageError(
        `--consumer speaks one lab's protocol, but these scenarios span the ${spanned.join(' and ')} labs: choose one with --lab ${spanned.join('|')}`,
      );
    return chosen.flatMap((s) => {
      const scenario = loadScenario(s.file);
      return Array.from({ length: opts.repeat }, (_, i) => ({ scenario, label: opts.repeat > 1 ? `${s.name} #${i + 1}` : s.name, ...consumer }));
    });
  }
  if (!name) throw new UsageError('name a scenario, or use --all or --only <glob> (see `chaoslab list`)');
  const scenario = loadScenario(resolveScenario(name, scenariosDir));
  return Array.from({ length: opts.repeat }, (_, i) => ({ scenario, label: opts.repeat > 1 ? `${scenario.name} #${i + 1}` : scenario.name, ...consumer }));
}
