// `chaoslab bench`: what a run costs (bench/bench.mjs; docs/benchmarks.md "What each figure measures"). The bench is
// a script of its own beside dist/, run in a child process with this one's terminal.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Command } from 'commander';

export interface BenchOptions {
  quick?: boolean;
  full?: boolean;
}

/** The bench's argv for these options. */
export const benchArgs = (root: string, opts: BenchOptions): string[] => [
  join(root, 'bench', 'bench.mjs'),
  ...(opts.quick ? ['--quick'] : []),
  ...(opts.full ? ['--full'] : []),
];

/** Runs node with `args` on this terminal; its exit status (2 when it could not run or was killed). */
export const runNode = (args: string[]): Promise<number> =>
  new Promise<number>((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    child.on('error', () => resolve(2));
    child.on('close', (status) => resolve(status ?? 2));
  });

export function register(program: Command): void {
  program
    .command('bench')
    .description('measure what a run costs, each figure beside its floor; writes reports/bench/<date>.json and docs/benchmarks.md')
    .option('--quick', 'skip the catalogue figures (the long part); the same as BENCH_QUICK=1')
    .option('--full', 'also the larger sizes')
    .action(async (opts: BenchOptions) => {
      const { projectRoot } = await import('../base/paths.js');
      process.exitCode = await runNode(benchArgs(projectRoot, opts));
    });
}
