// `chaoslab run`: one scenario, several (names, globs, --all, --only), or each many times
// (--repeat, the dstest habit), against one consumer. Several runs make a batch.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { type BatchItem, runBatch } from '../batch.js';
import { labNamed, labNames } from '../labs/registry.js';
import { reportsDirOf, scenariosDir } from '../paths.js';
import { type ScenarioOutcome, createConsoleReporter } from '../report/console.js';
import { type RunJson, resultsJson, runJson } from '../report/run-json.js';
import { typedCommand } from '../reproduce.js';
import { runScenario } from '../runner.js';
import type { SealMode } from '../sealing.js';
import { catalogue, listScenarios } from '../scenario/catalogue.js';
import { loadScenario } from '../scenario/load.js';
import { EXIT, UsageError, combinedStatus } from './exit-status.js';
import { addOutOption } from './out-option.js';
import { selectScenarios } from './select.js';

export interface RunCommandOptions {
  consumer?: string;
  out?: string;
  reports?: string;
  toxiproxyUrl?: string;
  quiet?: boolean;
  all?: boolean;
  only?: string;
  jobs: number;
  repeat: number;
  lab?: string;
  /** --seal: true, --no-seal: false, neither: undefined (CHAOSLAB_SEAL, else auto). */
  seal?: boolean;
  reporter: 'console' | 'json';
  json?: boolean;
}

/** The sealing mode the flags ask for. */
export const sealModeOf = (seal: boolean | undefined): SealMode | undefined => (seal === undefined ? undefined : seal ? 'on' : 'off');

export const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
};

export function register(program: Command): void {
  const command = program
    .command('run')
    .description('run scenarios (names from scenarios/, globs, or .yaml file paths), the catalogue (--all), or one scenario many times (--repeat)')
    .argument('[scenarios...]', 'scenario names (e.g. ack-crash), globs (e.g. "ack-*") or paths to .yaml files; several make a batch')
    .option(
      '--consumer <command>',
      'shell command line of the consumer under test, run from the current directory (default: the TypeScript reference consumer)',
    )
    .option('--all', 'run every scenario of the catalogue')
    .option('--only <glob>', 'the same as a glob argument: run the catalogue scenarios whose name matches (e.g. "malformed-*")')
    .option('--lab <name>', 'only the scenarios of this lab (ledger, feed)')
    .option('--repeat <n>', 'run each scenario n times and count passes and failures', positiveInt, 1)
    .option('--jobs <n>', 'runs at the same time (each has its own processes and Toxiproxy)', positiveInt, 1);
  addOutOption(command, 'where run folders are written')
    .option('--toxiproxy-url <url>', 'use a running Toxiproxy server (default: $TOXIPROXY_URL, else start one)')
    .option('--seal', 'require sealed runs (an error where the machine cannot seal)')
    .option('--no-seal', 'run unsealed: the consumer runs as your user (default: sealed wherever the machine allows; CHAOSLAB_SEAL=on|off|auto)')
    .addOption(
      new Option('--reporter <name>', 'console: progress and verdicts; json: one JSON document on stdout (progress on stderr)')
        .choices(['console', 'json'])
        .default('console'),
    )
    .option('--json', 'the same as --reporter json')
    .option('-q, --quiet', 'print only the results')
    .action(async (names: string[], opts: RunCommandOptions) => {
      const cwd = process.cwd();
      const reportsDir = reportsDirOf(opts, cwd);
      const json = opts.json === true || opts.reporter === 'json';
      const { items, batch, batchName } = selectItems(names, opts);
      // With --json, stdout carries only the document: the console goes to stderr.
      const out = json ? process.stderr : process.stdout;
      const reporter = createConsoleReporter({ tty: out.isTTY === true, quiet: opts.quiet === true, out, cwd });
      const invokedAs = typedCommand(process.argv.slice(2));
      const common = {
        cwd,
        reportsDir,
        invokedAs,
        ...(opts.toxiproxyUrl ? { toxiproxyUrl: opts.toxiproxyUrl } : {}),
        ...(sealModeOf(opts.seal) ? { seal: sealModeOf(opts.seal)! } : {}),
      };
      try {
        if (!batch) {
          const [item] = items;
          reporter.scenarioStarted(item!.label);
          const result = await runScenario({
            ...common,
            scenario: item!.scenario,
            ...(item!.consumerCommand ? { consumerCommand: item!.consumerCommand } : {}),
            onJournal: reporter.onJournal,
          });
          reporter.finalTable([reporter.scenarioFinished(item!.label, result)]);
          if (json) printJson([runJson(result.view, result.runDir, { label: item!.label })]);
          process.exitCode = EXIT[result.status];
          return;
        }
        const outcomes: ScenarioOutcome[] = [];
        const { batchDir, results } = await runBatch(batchName, items, {
          ...common,
          jobs: opts.jobs,
          onStart: (item, index, total) => reporter.scenarioStarted(item.label, { index, total }),
          // Live step lines follow one run at a time; with several jobs only start/finish lines.
          ...(opts.jobs === 1 ? { onJournal: reporter.onJournal } : {}),
          onFinish: (item, result) => outcomes.push(reporter.scenarioFinished(item.label, result)),
        });
        reporter.finalTable(outcomes);
        const passed = results.filter((r) => r.status === 'pass').length;
        const errors = results.filter((r) => r.status === 'error').length;
        out.write(
          `${passed} passed, ${results.length - passed - errors} failed${errors ? `, ${errors} errors` : ''} — ${relative(cwd, batchDir) || '.'}/junit.xml\n`,
        );
        if (json) printJson(results.map((r, i) => runJson(r.view, r.runDir, { label: items[i]!.label })));
        process.exitCode = EXIT[combinedStatus(results.map((r) => r.status))];
      } finally {
        reporter.close();
      }
    });
}

const printJson = (runs: RunJson[]): void => {
  process.stdout.write(`${JSON.stringify(resultsJson(runs), null, 2)}\n`);
};

const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** The runs `chaoslab run` makes of its arguments; a batch when more than one scenario (or a glob, --all, --repeat) was asked for. */
export function selectItems(names: string[], opts: RunCommandOptions): { items: BatchItem[]; batch: boolean; batchName: string } {
  if (opts.lab && !labNamed(opts.lab)) throw new UsageError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
  const consumer = opts.consumer ? { consumerCommand: opts.consumer } : {};
  // Globs and --all list (and so validate) the whole catalogue; plain names need only its file names.
  const wide = opts.all || opts.only || names.some((n) => /[*?[\]{}!]/.test(n));
  const listed = wide ? listScenarios(scenariosDir) : catalogue(scenariosDir);
  const { picked, batch } = selectScenarios(names, opts, listed, isFile);
  const scenarios = picked.map((p) => loadScenario(p.file));
  // One consumer speaks one lab's protocol: with --consumer, the scenarios must be of one lab.
  const spanned = [...new Set(scenarios.map((s) => s.protocol))];
  if (opts.consumer && spanned.length > 1)
    throw new UsageError(
      `--consumer speaks one lab's protocol, but these scenarios span the ${spanned.join(' and ')} labs: choose one with --lab ${spanned.join('|')}`,
    );
  const items = scenarios.flatMap((scenario) =>
    Array.from({ length: opts.repeat }, (_, i) => ({ scenario, label: opts.repeat > 1 ? `${scenario.name} #${i + 1}` : scenario.name, ...consumer })),
  );
  const base = opts.all ? 'catalogue' : scenarios.length === 1 ? scenarios[0]!.name : `${scenarios.length}-scenarios`;
  return { items, batch: batch || opts.all === true || items.length > 1, batchName: opts.repeat > 1 ? `${base}-x${opts.repeat}` : base };
}
