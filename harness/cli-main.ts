// The chaoslab command line, loaded by its entry point harness/cli.ts (the commands:
// harness/commands/program.ts).
// Exit status: 0 pass, 1 fail, 2 usage or harness error (2 wins); 141 when the reader of our
// output went away first (as a process killed by SIGPIPE would report).

import { CommanderError } from 'commander';
import { runCleanups } from './base/cleanup.js';
import { EXIT } from './base/exit-status.js';
import { buildProgram } from './commands/program.js';
import { terminalText } from './text/inert.js';
import { exitWithParent } from './sandbox/orphan.js';

/** A closed stdout or stderr (`chaoslab list | head -1`) ends the process quietly: no stack trace, cleanups still run. */
function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    void runCleanups().finally(() => process.exit(process.exitCode ?? 141));
  });
}
endQuietlyOnClosedPipe(process.stdout);
endQuietlyOnClosedPipe(process.stderr);

// When whoever started us (npm exec, make, a CI step) dies, clean up and exit instead of running on for nobody.
exitWithParent(runCleanups);
try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end with code 0; every other commander error is a usage error.
    process.exitCode = error.exitCode === 0 ? 0 : EXIT.error;
  } else {
    // A message may quote a submission's bytes (a manifest, a path): each of its lines made inert.
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`chaoslab: ${message.split('\n').map(terminalText).join('\n')}\n`);
    process.exitCode = EXIT.error;
  }
}
