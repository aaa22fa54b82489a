// The feed run's end: SIGTERM to each consumer still running, which must exit 0 within 2 s; the
// harness kills it after SIGTERM_KILL_MS.

import type { Role } from '../../../record/journal.js';
import type { RunContext } from '../../../lab-api/lab.js';
import type { StartedProcess } from '../../../processes/processes.js';
import { SIGTERM_EXIT_MS, SIGTERM_FAULT } from '../check/facts.js';
import type { FeedPlan } from '../scenario/plan.js';

/** The harness kills a process that has not exited this long after SIGTERM (the contract asks for 2 s). */
const SIGTERM_KILL_MS = 4000;

/** Journals the SIGTERM as a signal fault and sends it once; nothing when the process is not running. */
/** `name`: the run's name for the process (a server run's probe); it then words the detail, and the entry names the process. */
export function sigtermAtEnd(ctx: RunContext<FeedPlan>, role: Role, started: StartedProcess | undefined, running: boolean, name?: string): void {
  if (!started || !running) return;
  ctx.journal.write({
    type: 'fault',
    action: 'apply',
    name: SIGTERM_FAULT[role],
    kind: 'signal',
    detail: `SIGTERM to ${name ?? (role === 'control' ? 'the control consumer' : `consumer incarnation ${started.incarnation}`)} (pid ${started.proc.pid}): the script is over; it must exit 0 within ${SIGTERM_EXIT_MS / 1000} s`,
    ...(role === 'consumer' ? { incarnation: started.incarnation } : {}),
    ...(name === undefined ? {} : { role, incarnation: started.incarnation }),
  });
  // Once to each process: a second SIGTERM would kill a consumer that restored the default
  // action after the first, as the references do on their way out (processes/tree-signals.ts).
  started.proc.signal('SIGTERM');
  started.proc.continue(); // a process stopped by its own hook only sees SIGTERM once continued
  const timer = setTimeout(() => void started.proc.kill('harness'), SIGTERM_KILL_MS);
  void started.proc.exited.then(() => clearTimeout(timer));
}
