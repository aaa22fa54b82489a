// The run's processes as the journal sees them: every start and exit is written down with its
// role and number, output tails included, and whatever still runs when the run ends is killed.
// Labs decide which processes to start and when; this module only keeps the record straight.

import type { JournalWriter, ProcessRole } from '../record/journal.js';
import { readStat } from '../sandbox/proc.js';
import type { Confinement } from './confinement.js';
import { type ExitInfo, type SupervisedProcess, startProcess, withDeadline } from './supervisor.js';

export interface StartedProcess {
  proc: SupervisedProcess;
  role: ProcessRole;
  incarnation: number;
  /** The harness itself holds it stopped (a SIGSTOP fault, until its SIGCONT): not a stop of its own. */
  heldByHarness?: boolean;
}

export class ProcessRunner {
  private readonly running = new Set<SupervisedProcess>();
  /** Each running process by pid (its session's id too: it is spawned as a session leader). */
  private readonly byPid = new Map<number, { role: ProcessRole; incarnation: number }>();
  private stopped = false;
  /** Roles confined besides the consumer's (a sealed server scenario's `server`), each as a uid of its own. */
  private readonly confinedRoles = new Map<ProcessRole, Confinement>();

  constructor(
    private readonly journal: JournalWriter,
    private readonly cwd: string,
    private readonly deadlineMs: number,
    private readonly log: (line: string) => void,
    /** Sealed runs: how consumer processes are confined (the control is trusted and is not). */
    private readonly confinement?: Confinement,
  ) {}

  /** From now on, processes of `role` are confined by `confinement` (its own uid, rooms, groups). */
  confineRole(role: ProcessRole, confinement: Confinement): void {
    this.confinedRoles.set(role, confinement);
  }

  /** How processes of `role` are confined, if they are: the consumer's by the run's confinement. */
  private confinementOf(role: ProcessRole): Confinement | undefined {
    return role === 'consumer' ? this.confinement : this.confinedRoles.get(role);
  }

  /**
   * Starts `command` as process `incarnation` of `role`, and journals it. `room` is the folder
   * the process may write (its HOME when sealed).
   */
  start(role: ProcessRole, incarnation: number, command: string, env: Record<string, string>, room?: string): StartedProcess {
    const name = `${role}#${incarnation}`;
    if (this.stopped) throw new RunStopped(`${label(role, incarnation)} was not started: the run was interrupted`);
    const confined = this.confinementOf(role);
    if (confined && !room) throw new Error(`${name}: a sealed ${role} process needs a room`);
    const line = confined ? confined.command(name, command, env, room!) : command;
    const proc = startProcess({ name, command: line, cwd: this.cwd, env: confined ? {} : env, ...(confined ? { sealed: true } : {}) });
    this.running.add(proc);
    this.byPid.set(proc.pid, { role, incarnation });
    // Gone, its pid can be another process's: it owns nothing any more.
    void proc.exited.then(() => this.byPid.delete(proc.pid));
    this.journal.write({
      type: 'process-start',
      role,
      incarnation,
      pid: proc.pid,
      command,
      env,
      ...(confined ? { sealed: { uid: confined.uid } } : {}),
    });
    this.log(`${label(role, incarnation)} started (pid ${proc.pid})`);
    return { proc, role, incarnation };
  }

  /** Its exit, bounded by the scenario's deadline (the process is killed then). */
  exit(started: StartedProcess): Promise<ExitInfo> {
    return withDeadline(started.proc, this.deadlineMs);
  }

  /** Waits for `exit`, then journals how the process ended and what it printed. */
  async finish(started: StartedProcess, exit: Promise<ExitInfo> = this.exit(started)): Promise<ExitInfo> {
    const raw = await exit;
    const { proc, role, incarnation } = started;
    this.running.delete(proc);
    const sealed = await this.confinementOf(role)?.exited(`${role}#${incarnation}`, raw.code, raw.signal);
    const info = { ...raw, ...(sealed ? { code: sealed.code, signal: sealed.signal } : {}) };
    const out = proc.outputTail();
    this.journal.write({
      type: 'process-exit',
      role,
      incarnation,
      code: info.code,
      signal: info.signal,
      ...(sealed?.limits ? { limits: sealed.limits } : {}),
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
      // A stop the harness made (a SIGSTOP fault) is not the process's own: its SIGCONT is the fault's.
      if (started.heldByHarness) {
        while (started.heldByHarness && !exited) await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      this.journal.write({ type: 'process-stopped', role, incarnation });
      whileStopped();
      this.log(`${label(role, incarnation)} stopped itself; file read from outside`);
      // A SIGSTOP fault that came meanwhile keeps it stopped until the fault's own SIGCONT.
      if (started.heldByHarness) continue;
      proc.continue();
      this.journal.write({ type: 'process-continued', role, incarnation });
      // SIGCONT takes effect asynchronously: don't mistake the same stop for a new one.
      for (let i = 0; i < 100 && proc.isStopped(); i++) await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * The running process of this run that `pids` (the holders of a socket) belong to: one of them
   * is that process, in its session, or below it. Undefined for any other process (another run's,
   * or one that left the session and was reparented: it cannot be told from a stranger).
   */
  ownerOf(pids: readonly number[]): { role: ProcessRole; incarnation: number } | undefined {
    for (const pid of pids) {
      const sid = readStat(pid)?.sid;
      const inSession = sid === undefined ? undefined : this.byPid.get(sid);
      if (inSession) return inSession;
      // Up the parent chain (a bounded walk: pids can be reused, the chain cannot loop for long).
      let at: number | undefined = pid;
      for (let depth = 0; at !== undefined && at > 1 && depth < 64; depth++) {
        const own = this.byPid.get(at);
        if (own) return own;
        at = readStat(at)?.ppid;
      }
    }
    return undefined;
  }

  /** An interrupt, or the end of the run: starts nothing more, kills whatever runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.killAll();
  }

  /** Kills whatever still runs (end of run, error, interrupt). */
  async killAll(): Promise<void> {
    await Promise.all([...this.running].map((proc) => proc.kill('harness')));
  }
}

/** What a lab's process model meets when it starts a process after the run was interrupted. */
export class RunStopped extends Error {
  override name = 'RunStopped';
}

const label = (role: ProcessRole, incarnation: number): string =>
  role === 'consumer' ? `consumer incarnation ${incarnation}` : role === 'server' ? 'server under test' : role;

/**
 * `work`, or a RunStopped rejection the moment `signal` aborts: a lab's loop never waits past the
 * end of its run on something that hangs (a Toxiproxy call, a restart delay). The work itself goes
 * on unwatched; its own rejection is swallowed.
 */
export function untilEnded<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  const stopped = () => new RunStopped(`the run ended (${String(signal.reason instanceof Error ? signal.reason.message : signal.reason)})`);
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(stopped());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`, or rejects with RunStopped the moment `signal` aborts (its timer cleared: nothing is left pending). */
export function sleepUntilEnded(ms: number, signal: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const slept = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
  });
  return untilEnded(signal, slept).finally(() => clearTimeout(timer));
}
