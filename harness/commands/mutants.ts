// `chaoslab mutants`: each lab's mutant matrix (see harness/mutants.ts). Exit 0 only when every
// reference passes everything, every mutant is caught by its killer for its reason, and every
// run's console line, summary.md, junit.xml and report.html agree with its verdict.
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runBatch } from '../batch.js';
import { allLabs, labNamed, labNames } from '../labs/registry.js';
import { cellOf, judgeRow, loadMatrixConsumers, type MatrixRow, matrixItems, renderMatrixMarkdown } from '../mutants.js';
import { defaultReportsDir, projectRoot, scenariosDir } from '../paths.js';
import { agreementProblems } from '../report/agreement.js';
import { listScenarios } from '../scenario/catalogue.js';
import { loadScenario } from '../scenario/load.js';
import { EXIT, UsageError } from './exit-status.js';
import { positiveInt, sealModeOf } from './run.js';

interface MutantsOptions {
  quick?: boolean;
  jobs: number;
  reports: string;
  lab?: string;
  seal?: boolean;
}

export function register(program: Command): void {
  program
    .command('mutants')
    .description('run every mutant and reference consumer against the catalogue and print the matrix')
    .option('--quick', 'references against every scenario, mutants only against the happy path and their designated killer')
    .option('--lab <name>', 'only this lab (default: every lab)')
    .option('--jobs <n>', 'runs at the same time', positiveInt, 1)
    .option('--reports <dir>', 'where the matrix folder is written', defaultReportsDir)
    .option('--seal', 'require sealed runs')
    .option('--no-seal', 'run unsealed (default: sealed wherever the machine allows)')
    .action(async (opts: MutantsOptions) => {
      if (opts.lab && !labNamed(opts.lab)) throw new UsageError(`unknown lab "${opts.lab}"; labs: ${labNames().join(', ')}`);
      const labs = allLabs().filter((lab) => !opts.lab || lab.name === opts.lab);
      let passed = 0;
      let failed = 0;
      for (const lab of labs) {
        const consumers = loadMatrixConsumers(lab);
        const scenarios = listScenarios(scenariosDir, lab.name).map((s) => loadScenario(s.file));
        const items = matrixItems(consumers, scenarios, opts.quick === true, lab.happyPath);
        let done = 0;
        process.stdout.write(
          `${lab.name} mutant matrix: ${items.length} runs (${consumers.length} consumers × ${scenarios.length} scenarios${opts.quick ? ', quick' : ''}), ${opts.jobs} at a time\n`,
        );
        const disagreements: { label: string; runDir: string; problems: string[] }[] = [];
        // The consumers' commands are relative to the project root, so the runs start there.
        const { batchDir, results } = await runBatch(`${lab.name}-mutants${opts.quick ? '-quick' : ''}`, items, {
          jobs: opts.jobs,
          cwd: projectRoot,
          reportsDir: opts.reports,
          ...(sealModeOf(opts.seal) ? { seal: sealModeOf(opts.seal)! } : {}),
          onFinish: (item, result) => {
            done++;
            const disagree = agreementProblems(result.runDir, result.view);
            if (disagree.length) disagreements.push({ label: item.label, runDir: result.runDir, problems: disagree });
            if (result.status !== 'pass' || done % 10 === 0) process.stdout.write(`  [${done}/${items.length}] ${item.label}: ${result.status}\n`);
          },
        });
        const rows: MatrixRow[] = consumers.map((consumer) =>
          judgeRow(
            consumer,
            items.flatMap((item, i) => (item.consumer === consumer ? [cellOf(item.scenario.name, results[i]!)] : [])),
            lab.happyPath,
          ),
        );
        const names = scenarios.map((s) => s.name);
        writeFileSync(join(batchDir, 'matrix.md'), renderMatrixMarkdown(rows, names, batchDir));
        writeFileSync(
          join(batchDir, 'matrix.json'),
          JSON.stringify(
            {
              lab: lab.name,
              rows: rows.map((r) => ({ consumer: r.consumer.label, kind: r.consumer.kind, ok: r.ok, note: r.note, cells: r.cells })),
              agreement: { runs: results.length, disagreements },
            },
            null,
            2,
          ),
        );
        process.stdout.write('\n');
        for (const row of rows) process.stdout.write(`${row.ok ? 'ok     ' : 'PROBLEM'}  ${row.consumer.label.padEnd(38)} ${row.note}\n`);
        for (const d of disagreements) process.stdout.write(`DISAGREE ${d.label}: ${d.problems.join('; ')} (${relative(process.cwd(), d.runDir)})\n`);
        process.stdout.write(
          `${lab.name}: reports agree with the verdict in ${results.length - disagreements.length} of ${results.length} runs — matrix: ${relative(process.cwd(), join(batchDir, 'matrix.md'))}, every run: ${relative(process.cwd(), join(batchDir, 'index.html'))}\n`,
        );
        passed += rows.filter((r) => r.ok).length;
        failed += rows.filter((r) => !r.ok).length + disagreements.length;
      }
      // Rows judged ok pass; rows that are not, and runs whose reports disagree with their verdict, fail.
      process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
      process.exitCode = failed === 0 ? EXIT.pass : EXIT.fail;
    });
}
