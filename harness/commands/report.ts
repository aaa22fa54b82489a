// `chaoslab report <run-folder...>`: re-renders summary.md, report.html and junit.xml from each
// run folder's journal — no re-run, also for the partial journal of an interrupted run. A batch
// folder: every run in it, then its index.html, summary.md, results.json and junit.xml.
// `--junit <file>` also writes one JUnit file with a test case per run (multi-scenario CI).
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { EXIT } from '../base/exit-status.js';

export interface ReportCommandOptions {
  junit?: string;
  quiet?: boolean;
}

export function register(program: Command): void {
  program
    .command('report')
    .description('re-render summary.md, report.html and junit.xml of run folders from their journals (no re-run)')
    .argument('<run-folders...>', 'run folders (reports/<run-id>), batch folders (all their runs), a reports folder (its latest) or journal.jsonl files')
    .option('--junit <file>', 'also write one JUnit XML file with a test case per run folder')
    .option('-q, --quiet', 'print nothing but errors')
    .action(async (folders: string[], opts: ReportCommandOptions) => {
      const [{ totalsLine }, { renderJunitForRunDirs }, { renderRunFolder }, { rerenderBatch }, { resolveRunFolders }, { seconds }, { terminalText }] =
        await Promise.all([
          import('../report/batch-view.js'),
          import('../report/junit.js'),
          import('../report/render-all.js'),
          import('../report/render-batch.js'),
          import('../report/run-folder.js'),
          import('../text/format.js'),
          import('../text/inert.js'),
        ]);
      const cwd = process.cwd();
      const show = (f: string) => relative(cwd, f) || f;
      const all: string[] = [];
      for (const folder of folders) {
        const { runs, batch } = resolveRunFolders(folder);
        // A batch: every run in it, then the batch's own files (index.html, summary.md, results.json, junit.xml).
        const rerendered = batch ? rerenderBatch(batch, runs) : undefined;
        for (const [i, dir] of runs.entries()) {
          const r = rerendered?.runs[i] ?? renderRunFolder(dir);
          all.push(dir);
          if (opts.quiet) continue;
          const x = r.view;
          process.stdout.write(
            `${terminalText(x.status.toUpperCase())}  ${terminalText(x.name)}  (${seconds(x.durationMs)}${x.complete ? '' : ', partial journal'})\n` +
              `  ${terminalText(x.headline)}\n` +
              r.files.map((f) => `  wrote ${terminalText(show(f))}\n`).join(''),
          );
        }
        if (rerendered && !opts.quiet) {
          process.stdout.write(`${terminalText(`${rerendered.view.name}: ${totalsLine(rerendered.view)}`)}\n`);
          for (const f of rerendered.files) process.stdout.write(`wrote ${terminalText(show(f))}\n`);
        }
      }
      if (opts.junit) {
        writeFileSync(opts.junit, renderJunitForRunDirs(all));
        if (!opts.quiet) process.stdout.write(`wrote ${opts.junit} (${all.length} test case${all.length === 1 ? '' : 's'})\n`);
      }
      process.exitCode = EXIT.pass;
    });
}
