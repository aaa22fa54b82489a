// `chaoslab merge-reports <dir>... --out <dir>`: joins the outputs of `grade --shard` runs
// (their class.json) into one class report — grades.csv, index.html, class.json — and copies
// each submission's own folder beside them. A submission graded in two shards is an error.
import type { Command } from 'commander';

export interface MergeOptions {
  out: string;
}

export function register(program: Command): void {
  program
    .command('merge-reports')
    .description('join the outputs of several `chaoslab grade --shard` runs into one class report')
    .argument('<dirs...>', 'the --out folders of the shards')
    .requiredOption('--out <dir>', 'where the merged class report is written')
    .action(async (dirs: string[], opts: MergeOptions) => {
      const [{ cpSync, existsSync, mkdirSync }, { join, resolve }, { reportsPathShower }, { readClassReport }, { mergeClassReports }, { writeClassOutputs }] =
        await Promise.all([
          import('node:fs'),
          import('node:path'),
          import('../base/paths.js'),
          import('../grade/class/class-data.js'),
          import('../grade/class/merge.js'),
          import('./grade-action.js'),
        ]);
      const parts = dirs.map((dir) => ({ dir, report: readClassReport(dir) }));
      const merged = mergeClassReports(parts);
      const out = resolve(opts.out);
      const show = reportsPathShower({ out: opts.out });
      mkdirSync(out, { recursive: true });
      for (const { dir, report } of parts) {
        for (const sub of report.submissions) {
          const from = join(resolve(dir), sub.submission);
          if (existsSync(from) && from !== join(out, sub.submission)) cpSync(from, join(out, sub.submission), { recursive: true, verbatimSymlinks: true });
        }
      }
      writeClassOutputs(out, merged);
      process.stdout.write(
        `merged ${parts.length} folders, ${merged.submissions.length} submissions: ${show(join(out, 'grades.csv'))}, ${show(join(out, 'index.html'))}\n`,
      );
    });
}
