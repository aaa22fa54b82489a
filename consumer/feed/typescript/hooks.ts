// The fault hooks of the contract (consumer/feed/CONTRACT.md, section 7): the rules
// CHAOSLAB_FAULT names (environment.ts reads them) and what each does at its point.

export type FaultAction = 'exit' | 'raise' | 'stop';
export type FaultPoint = 'apply' | 'commit' | 'revoke' | 'snapshot';
export interface FaultRule {
  action: FaultAction;
  point: FaultPoint;
  n: number;
}

/** The exit status of `exit@...` (the harness tells it from a real failure). */
export const INJECTED_EXIT = 86;

export class InjectedFault extends Error {
  override name = 'InjectedFault';
}

/** Runs the fault plan for one point; `exit` ends the process with no cleanup at all. */
export function fireFaults(faults: readonly FaultRule[], point: FaultPoint, n: number): void {
  for (const f of faults) {
    if (f.point !== point || f.n !== n) continue;
    if (f.action === 'exit') {
      // reallyExit skips 'exit' listeners, finally blocks and every close: a real crash.
      const p = process as unknown as { reallyExit?: (code: number) => never };
      if (typeof p.reallyExit === 'function') p.reallyExit(INJECTED_EXIT);
      process.exit(INJECTED_EXIT);
    }
    if (f.action === 'raise') throw new InjectedFault(`injected raise at ${point}:${n}`);
    if (f.action === 'stop') process.kill(process.pid, 'SIGSTOP'); // resumes here after SIGCONT
  }
}
