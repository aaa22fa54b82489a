// The run's processes as the journal sees them: every start and exit is written down with its
// role and number, output tails included, and whatever still runs when the run ends is killed.
// Labs decide which processes to start and when; this module only keeps the record straight.

import type { JournalWriter, Role } from './journal.js';
import { type ExitInfo, type SupervisedProcess, startProcess, withDeadline } from './supervisor.js';

export interface StartedProcess {
  proc: SupervisedProcess;
  role: Role;
  incarnation: number;
}

export class ProcessRunner {
  private readonly running = new Set<SupervisedProcess>();

  constructor(
    private readonly journal: JournalWriter,
    private readonly cwd: string,
    private readonly deadlineMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts `command` as process `incarnation` of `role`, and journals it. */
  start(role: Role, incarnation: number, command: string, env: Record<string, string>): StartedProcess {
    const proc = startProcess({ name: `${role}#${incarnation}`, command, cwd: this.cwd, env });
    this.running.add(proc);
    this.journal.write({ type: 'process-start', role, incarnation, pid: proc.pid, command, env });
    this.log(`${label(role, incarnation)} started (pid ${proc.pid})`);
    return { proc, role, incarnation };
  }

  /** Its exit, bounded by the scenario's deadline (the process is killed then). */
  exit(started: StartedProcess): Promise<ExitInfo> {
    return withDeadline(started.proc, this.deadlineMs);
  }

  /** Waits for `exit`, then journals how the process ended and what it printed. */
  async finish(started: StartedProcess, exit: Promise<ExitInfo> = this.exit(started)): Promise<ExitInfo> {
    const info = await exit;
    const { proc, role, incarnation } = started;
    this.running.delete(proc);
    const out = proc.outputTail();
    this.journal.write({
      type: 'process-exit',
      role,
      incarnation,
      code: info.code,
      signal: info.signal,
      ...(info.killedBy ? { killedBy: info.killedBy } : {}),
      durationMs: Math.round(info.durationMs),
      stdoutTail: out.stdout,
      stderrTail: out.stderr,
      stdoutBytes: out.stdoutBytes,
      stderrBytes: out.stderrBytes,
    });
    const how = info.killedBy ? `killed at the ${info.killedBy}` : info.signal ? `killed by ${info.signal}` : `exited ${info.code}`;
    this.log(`${label(role, incarnation)} ${how}`);
    return info;
  }

  /**
   * While `started` runs: each time it stops itself (SIGSTOP), call `whileStopped` (the lab reads
   * its file from outside), then let it go on. Returns when the process has exited.
   */
  async observeSelfStops(started: StartedProcess, exit: Promise<unknown>, whileStopped: () => void): Promise<void> {
    const { proc, role, incarnation } = started;
    let exited = false;
    void exit.then(() => {
      exited = true;
    });
    while (!exited) {
      const state = await proc.waitUntilStoppedOrExited(1000);
      if (state === 'exited') return;
      if (state !== 'stopped') continue;
      this.journal.write({ type: 'process-stopped', role, incarnation });
      whileStopped();
      this.log(`${label(role, incarnation)} stopped itself; file read from outside`);
      proc.continue();
      this.journal.write({ type: 'process-continued', role, incarnation });
      // SIGCONT takes effect asynchronously: don't mistake the same stop for a new one.
      for (let i = 0; i < 100 && proc.isStopped(); i++) await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Kills whatever still runs (end of run, error, interrupt). */
  async killAll(): Promise<void> {
    await Promise.all([...this.running].map((proc) => proc.kill('harness')));
  }
}

const label = (role: Role, incarnation: number): string => (role === 'consumer' ? `consumer incarnation ${incarnation}` : role);
