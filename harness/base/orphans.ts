// Nothing the harness starts outlives it: `dieWithHarness(argv)` gives the child SIGKILL from the
// kernel when the harness dies, however it dies (SIGKILL included), through util-linux's
// `setpriv --pdeathsig KILL`, which then execs the command in place (same pid). Where setpriv is
// missing (not Linux), the argv is unchanged and only the cleanups of harness/base/cleanup.ts protect
// against orphans. (The harness not outliving its parent: sandbox/orphan.ts's exitWithParent.)

import { existsSync } from 'node:fs';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** `argv`, so that it is killed when the harness dies (where the platform allows). */
export function dieWithHarness(argv: readonly string[]): string[] {
  return SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', '--', ...argv] : [...argv];
}
