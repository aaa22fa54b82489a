// `chaoslab mutants`: each lab's mutant matrix (see harness/run/mutants.ts, and ./mutants-action.ts
// for the work). Exit 0 only when every reference passes everything, every mutant is caught by
// its killer for its reason, and every run's console line, summary.md, junit.xml and
// report.html agree with its verdict.
import type { Command } from 'commander';
import { addOutOption } from './out-option.js';
import { positiveInt } from './options.js';
import type { MutantsOptions } from './mutants-action.js';

export function register(program: Command): void {
  addOutOption(
    program
      .command('mutants')
      .description(
        'run every mutant and reference consumer (and, in a lab with a push server under test, every server) against the catalogue and print the matrix',
      )
      .option('--quick', 'references against every scenario, mutants only against the happy path and their designated killer')
      .option('--killers', 'references too only against the happy path and the killers: every judgement, the fewest runs')
      .option('--catches', 'as --killers, without the mutants on the happy path: is every mutant caught, one run per mutant (the near miss is not judged)')
      .option('--language <name>', 'only the consumers in this language (typescript, python)')
      .option('--mutant <names>', 'only these mutants (comma-separated names from index.yaml), with the references')
      .option('--lab <name>', 'only this lab (default: every lab)')
      .option(
        '--program <which>',
        'only the consumer matrix or only the server matrix (consumer, server; default: both, for a lab with a push server under test)',
      )
      .option('--jobs <n>', 'runs at the same time', positiveInt, 1),
    'where the matrix folder is written',
  )
    .option('--seal', 'require sealed runs')
    .option('--no-seal', 'run unsealed (default: sealed wherever the machine allows)')
    // The matrix machinery is loaded only when the command runs.
    .action(async (opts: MutantsOptions) => (await import('./mutants-action.js')).mutantsAction(opts));
}
