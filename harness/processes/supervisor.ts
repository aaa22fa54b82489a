// One consumer-under-test as a real OS process, supervised so that nothing it does can leak:
// it may hang, flood its output, ignore SIGTERM, stop itself, fork children, or fork
// grandchildren that call setsid() and get reparented to init. Whatever it does, kill() leaves
// no process of its tree behind, and the harness exiting (normally, on an error or on a signal)
// kills it too. This module is the public entry; its parts (Linux):
//  - the consumer is spawned detached: `bash -c <command>` (or `sh -c`) becomes a session and
//    process-group leader, so its pid is also its pgid and sid; one kill(-pid) reaches every
//    process that stays in the group;
//  - process-tree.ts: which processes are the tree's (parentage, group, session, and a tag every
//    descendant inherits in its environment), tree-poller.ts: one poller that keeps every tree's
//    members counted, so a process that forks and escapes between two looks is still known;
//  - tree-signals.ts: a signal delivered once to each process (sealed consumers: never to the
//    launcher or tini), and the kill ladder (freeze, then SIGKILL until none is left);
//  - output-capture.ts: stdout and stderr into bounded head-and-tail buffers;
//  - here: start, exit (once the main process exits on its own, any descendant still running is
//    killed too and counted as ExitInfo.straysKilled), and the public methods.
// Only a process that both escapes between polls and clears its environment (`env -i`) could get
// away. Other platforms (no /proc): descendants cannot be discovered, so signals go to the
// process group only (a descendant that calls setsid() escapes), and isStopped() is always false.

import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { onCleanup } from '../base/cleanup.js';
import { atMost } from '../base/at-most.js';
import { dieWithHarness } from '../base/orphans.js';
import { OutputCapture, type OutputTail } from './output-capture.js';
import { HAS_PROC, ProcessTree, TAG_VARIABLE } from './process-tree.js';
import { unwatch, watch } from './tree-poller.js';
import { killTree, killTreeSync, type SignalTarget, sendToTree } from './tree-signals.js';

export type { OutputTail } from './output-capture.js';

// bash execs a lone simple command in place of itself (dash does not), so the supervised pid is
// the consumer itself and a signal death is reported as a signal, not as status 128+n.
const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

export interface StartOptions {
  /** For messages, e.g. "consumer#2". */
  name: string;
  /** A shell command line, run with `bash -c` (or `/bin/sh -c` where bash is missing). */
  command: string;
  /** Working directory of the consumer. */
  cwd: string;
  /** Added to process.env (the contract's CHAOSLAB_* variables). */
  env: Record<string, string>;
  /** Per stream, keep N bytes (default 64 KiB): its first quarter from the head, the rest from the tail; a flood never grows memory. */
  outputLimitBytes?: number;
  /** Optional live tap; chunks are decoded as UTF-8 (a character split across reads is kept whole). */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
  /**
   * The command is a sealed launcher (harness/sandbox/confine.ts): its own processes and the
   * init of the consumer's PID namespace (tini) are wrappers, and every signal but SIGKILL goes to
   * the consumer's processes only. tini forwards what it receives to the consumer's group, a
   * moment later: a SIGCONT forwarded after the consumer had stopped itself again let it run on
   * unseen (a stop hook's read then saw later events).
   */
  sealed?: boolean;
}

export interface ExitInfo {
  /** Exit code of the main process (the shell, or the command when the shell exec'd it). */
  code: number | null;
  /** Name of the signal that killed the main process, e.g. "SIGKILL". */
  signal: string | null;
  /** Set when the process ended because the harness killed or terminated it. */
  killedBy?: 'deadline' | 'harness';
  /** Start to exit of the main process. */
  durationMs: number;
  /** Descendants still running after the main process exited on its own; they were killed. */
  straysKilled?: number;
}

export interface SupervisedProcess {
  readonly name: string;
  readonly pid: number;
  /** Resolves once the main process has exited, its pipes are closed (or a short grace passed)
   *  and no descendant is left; never rejects. */
  readonly exited: Promise<ExitInfo>;
  /** Whether any process of the tree is stopped (state T), e.g. the consumer SIGSTOPped itself. */
  isStopped(): boolean;
  /** Polls until some process of the tree is stopped, the main process has exited, or the timeout. */
  waitUntilStoppedOrExited(timeoutMs: number): Promise<'stopped' | 'exited' | 'timeout'>;
  /** Sends a signal to the whole process group and to every descendant that left it. */
  signal(sig: NodeJS.Signals): void;
  /** SIGCONT to the whole tree. */
  continue(): void;
  /** SIGKILLs the whole tree (including escaped descendants) and waits for the exit. */
  kill(reason?: 'deadline' | 'harness'): Promise<ExitInfo>;
  /** SIGTERM (and SIGCONT, so stopped processes see it) to the tree; kill() after graceMs. */
  terminate(graceMs: number, reason?: 'deadline' | 'harness'): Promise<ExitInfo>;
  /** The kept tails of stdout/stderr and the total byte counts. */
  outputTail(): OutputTail;
}

const DEFAULT_OUTPUT_LIMIT = 64 * 1024;
/** After the main process exits, how long to wait for its pipes to close before looking for
 *  descendants holding them. */
const PIPE_GRACE_MS = 150;

/** Supervised processes whose tree is not known to be gone yet. */
const live = new Set<Supervised>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort for process.exit() or a crash, when async cleanups cannot run: synchronous SIGKILL.
  process.on('exit', () => {
    for (const s of live) s.killSync();
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function checkCwd(options: StartOptions): void {
  let cwdOk = false;
  try {
    cwdOk = statSync(options.cwd).isDirectory();
  } catch {}
  if (!cwdOk) throw new Error(`${options.name}: working directory ${options.cwd} does not exist`);
}

class Supervised implements SupervisedProcess {
  readonly name: string;
  readonly pid: number;
  readonly exited: Promise<ExitInfo>;
  // Monotonic: a wall-clock step (NTP, a VM's clock sync) must not stretch a measured exit time.
  private readonly startedAt = performance.now();
  private readonly tree = new ProcessTree();
  private readonly target: SignalTarget;
  private readonly output: OutputCapture;
  private rootExit: { code: number | null; signal: string | null; at: number } | undefined;
  private killedBy: 'deadline' | 'harness' | undefined;
  private killing: Promise<void> | undefined;
  private done = false;
  private unregisterCleanup: () => void = () => {};
  private resolveExited!: (info: ExitInfo) => void;

  constructor(options: StartOptions) {
    this.name = options.name;
    checkCwd(options);
    // The shell dies with the harness even if the harness is SIGKILLed (its descendants are
    // reached by kill() and the sweep while the harness lives; sealed runs add a PID namespace).
    const [file, ...args] = dieWithHarness([SHELL, '-c', options.command]);
    // node:child_process, not execa (about 0.1 s to import, in the worker that starts every run).
    const subprocess = spawn(file!, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, [TAG_VARIABLE]: this.tree.tag },
      detached: true, // own session and process group (pgid = sid = pid)
      stdio: ['ignore', 'pipe', 'pipe'], // we read the streams ourselves, into bounded tails
      windowsHide: true,
    });
    // A failed spawn also shows as an undefined pid, below; the event must not go unhandled.
    subprocess.on('error', () => {});
    if (subprocess.pid === undefined) {
      throw new Error(`${options.name}: could not start ${SHELL} -c ${JSON.stringify(options.command)}`);
    }
    this.pid = subprocess.pid;
    this.tree.setRoot(this.pid);
    this.target = { root: this.pid, sealed: options.sealed === true, gone: false };
    this.exited = new Promise<ExitInfo>((resolve) => {
      this.resolveExited = resolve;
    });
    const streams = { stdout: subprocess.stdout, stderr: subprocess.stderr };
    this.output = new OutputCapture(this.name, streams, options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT, options.onOutput);
    subprocess.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      void this.onRootExit(code, signal);
    });

    live.add(this);
    watch(this.tree);
    installExitHook();
    this.unregisterCleanup = onCleanup(`kill ${this.name} (pid ${this.pid})`, async () => {
      await this.kill('harness');
    });
  }

  /** Freezes the tree, then SIGKILLs it until nothing is left alive; one ladder at a time. */
  private killTree(): Promise<void> {
    this.killing ??= killTree(this.target, this.tree);
    return this.killing;
  }

  /** Synchronous last resort, for process 'exit'. */
  killSync(): void {
    killTreeSync(this.target, this.tree);
  }

  private async onRootExit(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.rootExit = { code, signal, at: performance.now() };
    let closed = false;
    void this.output.closed.then(() => (closed = true));
    await atMost(this.output.closed, PIPE_GRACE_MS);

    let straysKilled = 0;
    if (this.killing) {
      await this.killing;
    } else {
      const strays = this.tree.aliveMembers(true);
      if (strays.length > 0 || (!HAS_PROC && !closed)) {
        straysKilled = strays.length;
        await this.killTree();
      }
    }
    if (!closed) {
      await atMost(this.output.closed, PIPE_GRACE_MS);
      // Still open: held by something we could not find. Stop reading rather than hang.
      if (!closed) this.output.destroy();
    }

    this.done = true;
    this.target.gone = true;
    live.delete(this);
    unwatch(this.tree);
    this.unregisterCleanup();
    const info: ExitInfo = { code, signal, durationMs: this.rootExit.at - this.startedAt };
    if (this.killedBy) info.killedBy = this.killedBy;
    if (straysKilled > 0) info.straysKilled = straysKilled;
    this.resolveExited(info);
  }

  isStopped(): boolean {
    if (this.done) return false;
    return this.tree.aliveMembers(false).some((entry) => entry.state === 'T');
  }

  async waitUntilStoppedOrExited(timeoutMs: number): Promise<'stopped' | 'exited' | 'timeout'> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      if (this.rootExit || this.done) return 'exited';
      if (this.isStopped()) return 'stopped';
      if (performance.now() >= until) return 'timeout';
      await sleep(Math.min(20, Math.max(1, until - performance.now())));
    }
  }

  signal(sig: NodeJS.Signals): void {
    if (this.done) return;
    sendToTree(this.target, sig, this.tree.aliveMembers(false));
  }

  continue(): void {
    this.signal('SIGCONT');
  }

  async kill(reason: 'deadline' | 'harness' = 'harness'): Promise<ExitInfo> {
    if (this.done) return this.exited;
    if (!this.rootExit) this.killedBy ??= reason;
    await this.killTree();
    return this.exited;
  }

  async terminate(graceMs: number, reason: 'deadline' | 'harness' = 'harness'): Promise<ExitInfo> {
    if (this.done) return this.exited;
    if (!this.rootExit) this.killedBy ??= reason;
    const alive = this.tree.aliveMembers(true);
    sendToTree(this.target, 'SIGTERM', alive);
    sendToTree(this.target, 'SIGCONT', alive); // a stopped process only sees SIGTERM once continued
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const first = await Promise.race([this.exited, graceOver]);
    clearTimeout(timer);
    return first === 'grace' ? this.kill(reason) : first;
  }

  outputTail(): OutputTail {
    return this.output.tail();
  }
}

/** Starts `bash -c command` in its own process group, supervised. Throws if it cannot start. */
export function startProcess(options: StartOptions): SupervisedProcess {
  return new Supervised(options);
}

/** Resolves when the process exits, or kills it (killedBy 'deadline') after `ms`. */
export async function withDeadline(p: SupervisedProcess, ms: number): Promise<ExitInfo> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ExitInfo>((resolve) => {
    timer = setTimeout(() => resolve(p.kill('deadline')), ms);
  });
  try {
    return await Promise.race([p.exited, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
