// Nothing the harness starts outlives it, and the harness does not outlive its parent.
// - `dieWithHarness(argv)`: the child gets SIGKILL from the kernel when the harness dies, however
//   it dies (SIGKILL included), through util-linux's `setpriv --pdeathsig KILL`, which then execs
//   the command in place (same pid). Where setpriv is missing (not Linux), the argv is unchanged
//   and only the cleanups of harness/cleanup.ts protect against orphans.
// - `exitWithParent()`: when the process that started the harness (`npm exec`, make, a CI step)
//   dies, the harness is re-parented; it notices, runs its cleanups and exits, instead of running
//   a whole catalogue for nobody.

import { existsSync } from 'node:fs';
import { runCleanups } from './cleanup.js';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** `argv`, so that it is killed when the harness dies (where the platform allows). */
export function dieWithHarness(argv: readonly string[]): string[] {
  return SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', '--', ...argv] : [...argv];
}

let watching: NodeJS.Timeout | undefined;

/** Starts watching the parent; the harness exits (status 129, as after SIGHUP) once it is gone. */
export function exitWithParent(pollMs = 500): void {
  if (watching) return;
  const parent = process.ppid;
  watching = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watching);
    process.stderr.write(`\nchaoslab: the process that started me (pid ${parent}) is gone; cleaning up\n`);
    void runCleanups().finally(() => process.exit(129));
  }, pollMs);
  watching.unref();
}
