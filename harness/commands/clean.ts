// `chaoslab clean [--keep N]`: removes old run folders, keeping the N newest, the one
// `latest` points to and any run still being written.
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { relative } from 'node:path';
import { reportsDirOf } from '../base/paths.js';
import { addOutOption } from './out-option.js';

export interface CleanCommandOptions {
  keep: number;
  out?: string;
  reports?: string;
  dryRun?: boolean;
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number ≥ 0');
  return Number(value);
}

export function register(program: Command): void {
  addOutOption(
    program
      .command('clean')
      .description('remove old run folders from the reports folder')
      .option('--keep <n>', 'how many of the newest runs to keep', wholeNumber, 10),
    'the reports folder',
  )
    .option('-n, --dry-run', 'only list what would be removed')
    .action(async (opts: CleanCommandOptions) => {
      const { cleanRuns } = await import('../report/run-folder.js');
      const cwd = process.cwd();
      const result = cleanRuns(reportsDirOf(opts), opts.keep, { ...(opts.dryRun ? { dryRun: true } : {}) });
      const show = (p: string) => relative(cwd, p) || p;
      for (const dir of result.removed) process.stdout.write(`${opts.dryRun ? 'would remove' : 'removed'} ${show(dir)}\n`);
      process.stdout.write(
        `${opts.dryRun ? 'would remove' : 'removed'} ${result.removed.length} run folder${result.removed.length === 1 ? '' : 's'}, kept ${result.kept.length}` +
          `${result.latest ? `; latest → ${show(result.latest)}` : ''}\n`,
      );
    });
}
