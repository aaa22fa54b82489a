// `chaoslab chaos`: seeded random fault schedules against one consumer (or, with --server, one
// push server: the lab's server model draws kills, stops, restarts, a second instance, cuts and
// bad clients); a confirmed failure is
// shrunk and written as a scenario file that `chaoslab run` replays (harness/chaos/, and
// ./chaos-action.ts for the work). Exit 0 no failure found, 1 a confirmed failure (repro
// written), 2 a harness error (2 wins), 130/143 after Ctrl-C/SIGTERM.
import { type Command, InvalidArgumentError } from 'commander';
import { addOutOption } from './out-option.js';
import { DEFAULT_LAB_HELP, nonNegativeInt, positiveInt, STORE_LIMIT_FLAGS, STORE_LIMIT_HELP, sizeOption } from './options.js';
import type { ChaosCommandOptions } from './chaos-action.js';
import { UsageError } from '../base/exit-status.js';

export const DEFAULT_BUDGET = '15m';

/** "15m", "90s", "1h30m", "2h": a duration in milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text.trim());
  if (!m || text.trim() === '' || !m.slice(1).some(Boolean)) throw new InvalidArgumentError('expected a duration such as 15m, 90s or 1h30m');
  const [h, min, s] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number];
  const ms = ((h * 60 + min) * 60 + s) * 1000;
  if (ms <= 0) throw new InvalidArgumentError('expected a duration above zero');
  return ms;
}

export const seedOption = (value: string): number => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 0xffff_ffff) throw new InvalidArgumentError('expected a whole number from 0 to 4294967295');
  return n;
};

const pathOption = (value: string): string => {
  if (!/^[0-9]+(:[0-9]+)*$/.test(value)) throw new InvalidArgumentError('expected a fast-check path such as 17 or 17:0:3');
  return value;
};

export function register(program: Command): void {
  const command = program
    .command('chaos')
    .description('seeded random fault schedules against one consumer; a confirmed failure is shrunk and written as a replayable scenario (repro.yaml)')
    .option('--lab <name>', `the lab whose layers the schedules draw from (default: ${DEFAULT_LAB_HELP})`)
    .option('--consumer <command>', "shell command line of the consumer under test (default: the lab's TypeScript reference)")
    .option(
      '--server <command>',
      "shell command line of a push server under test: the lab's server schedules (kill, SIGSTOP, restart, a second instance, cuts, reorganisations, bad and slow clients) against it, the reference consumers as its probes",
    )
    .option('--seed <n>', 'seed of the draw: the same seed gives the same schedules (default: a random one, printed first)', seedOption)
    .option('--runs <n>', 'schedules to try at most', positiveInt, 100)
    .option('--budget <duration>', `time to search at most, e.g. 15m, 90s, 1h30m (default ${DEFAULT_BUDGET})`, parseDuration, parseDuration(DEFAULT_BUDGET))
    .option('--keep-going', 'after a confirmed failure, search on (each failure gets its own repro)')
    .option('--shrink-runs <n>', 'runs a shrink may take at most (a failing candidate takes two)', positiveInt, 30)
    .option(
      '--steady-runs <n>',
      'runs more of the shrunk schedule before it is written; if one passes, a larger confirmed schedule that fails every run is preferred (0: none)',
      nonNegativeInt,
      2,
    )
    .option('--path <path>', "with --seed: run only the schedule at this fast-check path (a repro's header names it), once", pathOption);
  addOutOption(command, 'where the chaos folder is written')
    .option('--toxiproxy-url <url>', 'use a running Toxiproxy server (default: $TOXIPROXY_URL, else start one)')
    .option('--seal', 'require sealed runs')
    .option('--no-seal', 'run unsealed (default: sealed wherever the machine allows)')
    .option(STORE_LIMIT_FLAGS, STORE_LIMIT_HELP, sizeOption())
    .action(async (opts: ChaosCommandOptions) => {
      if (opts.server !== undefined && opts.consumer !== undefined)
        throw new UsageError("--server and --consumer: chaos tests one program; with --server the lab's reference consumers are the probes");
      await (await import('./chaos-action.js')).chaosAction(opts);
    });
}
