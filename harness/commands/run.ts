// `chaoslab run`: one scenario, several (names, globs, --all, --only), or each many times
// (--repeat, the dstest habit), against one consumer. Several runs make a batch.
import { type Command, Option } from 'commander';
import { addRoomQuotaOption, positiveInt, STORE_LIMIT_FLAGS, STORE_LIMIT_HELP, sealModeOf, sizeOption } from './options.js';
import { addOutOption } from './out-option.js';
import type { RunCommandOptions } from './run-action.js';

export function register(program: Command): void {
  const command = program
    .command('run')
    .description('run scenarios (names from scenarios/, globs, or .yaml file paths), the catalogue (--all), or one scenario many times (--repeat)')
    .argument('[scenarios...]', 'scenario names (e.g. ack-crash), globs (e.g. "ack-*") or paths to .yaml files; several make a batch')
    .option(
      '--consumer <command>',
      'shell command line of the consumer under test, run from the current directory (default: the TypeScript reference consumer)',
    )
    .option(
      '--server <command>',
      "shell command line of the push server under test, for server scenarios (feed-server-*); run from the current directory (default: the lab's reference server)",
    )
    .option('--all', 'run every scenario of the catalogue')
    .option('--only <glob>', 'the same as a glob argument: run the catalogue scenarios whose name matches (e.g. "malformed-*")')
    .option('--lab <name>', "names, globs and --all pick from this lab only; another lab's scenario named outright is refused (`chaoslab list --lab <name>`)")
    .option('--repeat <n>', 'run each scenario n times and count passes and failures', positiveInt, 1)
    .option('--jobs <n>', 'runs at the same time (each has its own processes and Toxiproxy)', positiveInt, 1);
  addOutOption(command, 'where run folders are written')
    .option('--toxiproxy-url <url>', 'use a running Toxiproxy server (default: $TOXIPROXY_URL, else start one)')
    .option('--seal', 'require sealed runs (an error where the machine cannot seal)')
    .option('--no-seal', 'run unsealed: the consumer runs as your user (default: sealed wherever the machine allows; CHAOSLAB_SEAL=on|off|auto)')
    .option(STORE_LIMIT_FLAGS, STORE_LIMIT_HELP, sizeOption());
  addRoomQuotaOption(command)
    .addOption(
      new Option('--reporter <name>', 'console: progress and verdicts; json: one JSON document on stdout (progress on stderr)')
        .choices(['console', 'json'])
        .default('console'),
    )
    .option('--json', 'the same as --reporter json')
    .option('-q, --quiet', 'print only the results')
    .option(
      '-v, --verbose',
      "with several runs: each run's milestones while it runs, and every run at the end (default: a line per run, then those that did not pass)",
    )
    // The machinery (runner, batch) is loaded only when a run starts: `list`, `--help` and a
    // mistake in the scenario names stay quick.
    .action(async (names: string[], opts: RunCommandOptions) => {
      // The sealing probe (a trial namespace: child processes) runs while the scenarios load;
      // the runner awaits the same answer later (harness/run/sealing.ts), errors and all. Where
      // runs may be sealed, the first run's namespace and worker are made meanwhile too, beside
      // the probe, and closed if it says no (harness/run/sealed.ts).
      const cwd = process.cwd();
      const mode = sealModeOf(opts.seal);
      void Promise.all([import('../run/sealing.js'), import('../run/sealed.js')])
        .then(async ([{ mightSeal, sealing }, { discardPrewarmedPlace, prewarmSealedPlace }]) => {
          if (mightSeal(mode, opts.toxiproxyUrl)) prewarmSealedPlace(cwd);
          const decision = await sealing(mode, opts.toxiproxyUrl).catch(() => undefined);
          if (!decision?.sealed) await discardPrewarmedPlace();
        })
        .catch(() => {});
      try {
        const selection = (await import('./select.js')).selectItems(names, opts);
        await (await import('./run-action.js')).runAction(selection, opts);
      } finally {
        // One no run took (a mistake in the names, a run that needs another loopback).
        await (await import('../run/sealed.js')).discardPrewarmedPlace();
      }
    });
}
