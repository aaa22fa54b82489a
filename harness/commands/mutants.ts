// `chaoslab mutants`: the mutant matrix (see harness/mutants.ts). Exit 0 only when every
// reference passes everything and every mutant is caught by its killer for its reason.
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runBatch } from '../batch.js';
import { cellOf, judgeRow, loadMatrixConsumers, matrixItems, mutantIndexFile, renderMatrixMarkdown } from '../mutants.js';
import { defaultReportsDir, projectRoot, scenariosDir } from '../paths.js';
import { listScenarios, loadScenario } from '../scenario/load.js';
import { EXIT } from './exit-status.js';
import { positiveInt } from './run.js';

export function register(program: Command): void {
  program
    .command('mutants')
    .description('run every mutant and reference consumer against the catalogue and print the matrix')
    .option('--quick', 'references against every scenario, mutants only against happy-path and their designated killer')
    .option('--jobs <n>', 'runs at the same time', positiveInt, 1)
    .option('--reports <dir>', 'where the matrix folder is written', defaultReportsDir)
    .action(async (opts: { quick?: boolean; jobs: number; reports: string }) => {
      const consumers = loadMatrixConsumers(mutantIndexFile(projectRoot));
      const scenarios = listScenarios(scenariosDir).map((s) => loadScenario(s.file));
      const items = matrixItems(consumers, scenarios, opts.quick === true);
      const byLabel = new Map(items.map((i) => [i.label, i]));
      let done = 0;
      process.stdout.write(
        `mutant matrix: ${items.length} runs (${consumers.length} consumers × ${scenarios.length} scenarios${opts.quick ? ', quick' : ''}), ${opts.jobs} at a time\n`,
      );
      // The consumers' commands are relative to the project root, so the runs start there.
      const { batchDir, results } = await runBatch(opts.quick ? 'mutants-quick' : 'mutants', items, {
        jobs: opts.jobs,
        cwd: projectRoot,
        reportsDir: opts.reports,
        onFinish: (item, result) => {
          done++;
          if (result.status !== 'pass' || done % 10 === 0) process.stdout.write(`  [${done}/${items.length}] ${item.label}: ${result.status}\n`);
        },
      });
      const rows = consumers.map((consumer) =>
        judgeRow(
          consumer,
          items.flatMap((item, i) => (byLabel.get(item.label)?.consumer === consumer ? [cellOf(item.scenario.name, results[i]!)] : [])),
        ),
      );
      const names = scenarios.map((s) => s.name);
      writeFileSync(join(batchDir, 'matrix.md'), renderMatrixMarkdown(rows, names, batchDir));
      writeFileSync(
        join(batchDir, 'matrix.json'),
        JSON.stringify(
          rows.map((r) => ({ consumer: r.consumer.label, kind: r.consumer.kind, ok: r.ok, note: r.note, cells: r.cells })),
          null,
          2,
        ),
      );
      process.stdout.write('\n');
      for (const row of rows) process.stdout.write(`${row.ok ? 'ok     ' : 'PROBLEM'}  ${row.consumer.label.padEnd(38)} ${row.note}\n`);
      const problems = rows.filter((r) => !r.ok).length;
      process.stdout.write(`\n${rows.length - problems} passed, ${problems} failed — matrix: ${relative(process.cwd(), join(batchDir, 'matrix.md'))}\n`);
      process.exitCode = problems === 0 ? EXIT.pass : EXIT.fail;
    });
}
