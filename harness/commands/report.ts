// `chaoslab report <run-folder...>`: re-renders summary.md, report.html and junit.xml from each
// run folder's journal — no re-run, also for the partial journal of an interrupted run.
// `--junit <file>` also writes one JUnit file with a test case per run (multi-scenario CI).
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { readJournal } from '../journal.js';
import { renderJunit } from '../report/junit.js';
import { renderRunFolder } from '../report/render-all.js';
import { resolveRunFolder } from '../report/run-folder.js';
import { seconds } from '../report/sequence-diagram.js';
import { EXIT } from './exit-status.js';

export interface ReportCommandOptions {
  junit?: string;
  quiet?: boolean;
}

export function register(program: Command): void {
  program
    .command('report')
    .description('re-render summary.md, report.html and junit.xml of run folders from their journals (no re-run)')
    .argument('<run-folders...>', 'run folders (reports/<run-id>), a reports folder (its latest run) or journal.jsonl files')
    .option('--junit <file>', 'also write one JUnit XML file with a test case per run folder')
    .option('-q, --quiet', 'print nothing but errors')
    .action((folders: string[], opts: ReportCommandOptions) => {
      const cwd = process.cwd();
      const dirs = folders.map(resolveRunFolder);
      for (const dir of dirs) {
        const r = renderRunFolder(dir);
        if (opts.quiet) continue;
        const x = r.explanation;
        process.stdout.write(
          `${x.status.toUpperCase()}  ${x.name}  (${seconds(x.durationMs)}${x.complete ? '' : ', partial journal'})\n` +
            `  ${x.headline}\n` +
            r.files.map((f) => `  wrote ${relative(cwd, f) || f}\n`).join(''),
        );
      }
      if (opts.junit) {
        writeFileSync(opts.junit, renderJunit(dirs.map((runDir) => ({ journal: readJournal(`${runDir}/journal.jsonl`), runDir }))));
        if (!opts.quiet) process.stdout.write(`wrote ${opts.junit} (${dirs.length} test case${dirs.length === 1 ? '' : 's'})\n`);
      }
      process.exitCode = EXIT.pass;
    });
}
