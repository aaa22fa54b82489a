// The chaoslab command line as a commander program: one module per command under
// harness/commands/. A mistake in how a command was called is one line naming it, plus where
// to read more — never the whole help.

import { Command } from 'commander';
import * as bench from './bench.js';
import * as catalogue from './catalogue.js';
import * as chaos from './chaos.js';
import * as clean from './clean.js';
import * as grade from './grade.js';
import * as mergeReports from './merge-reports.js';
import * as mutants from './mutants.js';
import * as report from './report.js';
import * as run from './run.js';
import { harnessVersion } from '../base/paths.js';

/** commander's "error: unknown option '--foo'\n(Did you mean --for?)" as one line with a hint. */
export function oneLineError(message: string, helpCommand: string): string {
  const text = message
    .replace(/^error:\s*/i, '')
    .replace(/\(Did you mean/g, '(did you mean')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
  return `chaoslab: ${text} (see ${helpCommand} --help)\n`;
}

export interface ProgramOutput {
  writeOut?: (text: string) => void;
  writeErr?: (text: string) => void;
}

export function buildProgram(output: ProgramOutput = {}): Command {
  const writeOut = output.writeOut ?? ((text: string) => process.stdout.write(text));
  const writeErr = output.writeErr ?? ((text: string) => process.stderr.write(text));
  const program = new Command('chaoslab')
    .description('Fault-injection test harness and chaos lab for event-stream consumers')
    .version(harnessVersion)
    .exitOverride();
  for (const command of [run, catalogue, mutants, chaos, report, clean, bench, grade, mergeReports]) command.register(program);
  for (const command of [program, ...program.commands]) {
    const helpCommand = command === program ? 'chaoslab' : `chaoslab ${command.name()}`;
    command.configureOutput({ writeOut, writeErr, outputError: (message, write) => write(oneLineError(message, helpCommand)) });
  }
  return program;
}
