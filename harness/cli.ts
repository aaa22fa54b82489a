#!/usr/bin/env node
// chaoslab command line: one module per command under harness/commands/.
// Exit status: 0 pass, 1 fail, 2 usage or harness error (2 wins).

import { Command, CommanderError } from 'commander';
import * as catalogue from './commands/catalogue.js';
import * as mutants from './commands/mutants.js';
import * as clean from './commands/clean.js';
import { EXIT } from './commands/exit-status.js';
import * as report from './commands/report.js';
import * as run from './commands/run.js';
import { runCleanups } from './cleanup.js';
import { exitWithParent } from './sandbox/orphan.js';
import { harnessVersion } from './paths.js';

export function buildProgram(): Command {
  const program = new Command('chaoslab')
    .description('Fault-injection test harness and chaos lab for event-stream consumers')
    .version(harnessVersion)
    .exitOverride()
    .showHelpAfterError();
  for (const command of [run, catalogue, mutants, report, clean]) command.register(program);
  return program;
}

// When whoever started us (npm exec, make, a CI step) dies, clean up and exit instead of running on for nobody.
exitWithParent(runCleanups);
try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end with code 0; every other commander error is a usage error.
    process.exitCode = error.exitCode === 0 ? 0 : EXIT.error;
  } else {
    process.stderr.write(`chaoslab: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = EXIT.error;
  }
}
