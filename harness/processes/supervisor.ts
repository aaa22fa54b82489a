// One consumer-under-test as a real OS process, supervised so that nothing it does can leak:
// it may hang, flood its output, ignore SIGTERM, stop itself, fork children, or fork
// grandchildren that call setsid() and get reparented to init. Whatever it does, kill() leaves
// no process of its tree behind, and the harness exiting (normally, on an error or on a signal)
// kills it too.
//
// How the tree is tracked (Linux):
//  - The consumer is spawned detached: `bash -c <command>` (or `sh -c`) becomes a session and process-group
//    leader, so its pid is also its pgid and sid; one kill(-pid) reaches every process that stays
//    in the group.
//  - A shared poller reads /proc/*/stat every POLL_MS and adds to each tree every process whose
//    parent is in the tree, or whose pgid/sid is the root's. (A process it found outside every
//    tree is not read again while /proc lists it: it can never join one; see `outsiders`.) Every pid ever seen is remembered
//    (with its start time, so a recycled pid is never mistaken for ours), so a grandchild that
//    called setsid() and was reparented to init after its parent died is still known.
//  - A process that escapes between two polls (fork, setsid, parent exits, all within POLL_MS)
//    is found anyway by a tag: every consumer gets a unique CHAOSLAB_SUPERVISOR_TAG environment
//    variable, which descendants inherit; kills and the end-of-run sweep also scan
//    /proc/*/environ for it. Only a process that both escapes between polls and clears its
//    environment (`env -i`) could get away.
//  - kill() first freezes the tree (SIGSTOP to the group and to every member, rescanning until no
//    new member shows up, so nothing can fork away while we are killing), then sends SIGKILL and
//    SIGCONT to the group and every member until none is left alive (zombies count as dead: they
//    hold no resources but a pid, and reaping orphans is init's job).
//  - When the main process exits on its own, any descendant still running is killed too (a
//    consumer instance that has exited must not leave writers behind for the next one); the
//    count is reported as ExitInfo.straysKilled.
//
//  - A sealed consumer (StartOptions.sealed) runs under a launcher and tini (sandbox/confine.ts):
//    every signal but SIGKILL goes to the consumer's own processes, one by one, never to those
//    two, since tini would forward it to the consumer's group once more, a moment later.
//
// Other platforms (no /proc): descendants cannot be discovered, so signals go to the process
// group only (a descendant that calls setsid() escapes), and isStopped() always returns false.

import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { onCleanup } from '../base/cleanup.js';
import { HeadTailBuffer } from '../sandbox/output.js';
import { dieWithHarness } from '../base/orphans.js';
import { nestedPids } from '../sandbox/proc.js';

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

export interface OutputTail {
  stdout: string;
  stderr: string;
  /** Total bytes ever written to each stream (not just the kept tail). */
  stdoutBytes: number;
  stderrBytes: number;
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
const POLL_MS = 50;
/** After the main process exits, how long to wait for its pipes to close before looking for
 *  descendants holding them. */
const PIPE_GRACE_MS = 150;
/** kill() gives up waiting for unkillable processes (state D) after this long. */
const KILL_GIVE_UP_MS = 5000;
const TAG_VARIABLE = 'CHAOSLAB_SUPERVISOR_TAG';

const HAS_PROC = process.platform === 'linux' && existsSync('/proc/self/stat');

// ---------------------------------------------------------------------------------------------
// /proc reading

interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  /** Start time in clock ticks since boot: with the pid, identifies a process uniquely. */
  start: string;
}

/** One stat line is far shorter (the comm field holds at most 64 bytes); reused, as the poller reads every process's. */
const STAT_BUFFER = Buffer.allocUnsafe(4096);
const SPACE = 0x20;
const CLOSE_PAREN = 0x29;

/** The fields of a stat line in `bytes[0, length)` (without decoding the rest of the line). */
function parseStat(pid: number, bytes: Buffer, length: number): ProcEntry | undefined {
  // "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  //  utime stime cutime cstime priority nice num_threads itrealvalue starttime ..."
  // comm may contain spaces and parentheses: parse after the last ')'.
  const close = bytes.lastIndexOf(CLOSE_PAREN, length - 1);
  if (close < 0) return undefined;
  const fields: string[] = [];
  let from = close + 2;
  while (fields.length < 20 && from < length) {
    let to = bytes.indexOf(SPACE, from);
    if (to < 0 || to > length) to = length;
    fields.push(bytes.toString('latin1', from, to));
    from = to + 1;
  }
  const [state, ppid, pgid, sid] = fields;
  const start = fields[19]?.trimEnd();
  if (state === undefined || ppid === undefined || pgid === undefined || sid === undefined || !start) {
    return undefined;
  }
  return { pid, ppid: Number(ppid), pgid: Number(pgid), sid: Number(sid), state, start };
}

function readStat(pid: number): ProcEntry | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
  } catch {
    return undefined; // gone
  }
  try {
    return parseStat(pid, STAT_BUFFER, readSync(fd, STAT_BUFFER, 0, STAT_BUFFER.length, 0));
  } catch {
    return undefined; // gone between the open and the read
  } finally {
    closeSync(fd);
  }
}

/** The pids /proc lists now (empty without /proc). */
function listedPids(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code >= 48 && code <= 57) pids.push(Number(name));
  }
  return pids;
}

/** Every process on the machine, but those in `skip` (empty without /proc). */
function scanProcesses(skip?: ReadonlySet<number>): ProcEntry[] {
  if (!HAS_PROC) return [];
  const entries: ProcEntry[] = [];
  for (const pid of listedPids()) {
    if (skip?.has(pid)) continue;
    const entry = readStat(pid);
    if (entry) entries.push(entry);
  }
  return entries;
}

/** How deep the harness's own PID namespace is (1 on a host, more in a container; 0: the kernel does not say). */
const OWN_PID_DEPTH = HAS_PROC ? nestedPids('self').length : 0;

/** A sealed tree's launcher (in the harness's PID namespace) or the init of the consumer's namespace (tini). */
function isSealedWrapper(pid: number): boolean {
  if (OWN_PID_DEPTH === 0) return false;
  const pids = nestedPids(pid);
  return pids.length <= OWN_PID_DEPTH || pids.at(-1) === 1;
}

function isAlive(entry: ProcEntry): boolean {
  return entry.state !== 'Z' && entry.state !== 'X';
}

function environHas(pid: number, needle: Buffer): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`).includes(needle);
  } catch {
    return false; // gone, or not ours to read
  }
}

// ---------------------------------------------------------------------------------------------
// The supervised tree

/** Supervised processes whose tree is not known to be gone yet. */
const live = new Set<Supervised>();
let pollTimer: NodeJS.Timeout | undefined;
/**
 * Pids the poller found outside every tree, while /proc keeps listing them. Such a process never
 * joins a tree: a process enters one only as a new child of a member (a new pid), or by the
 * root's group or session, which a process of another session cannot enter. So the poller reads
 * the stat lines of members and new pids only, not of the whole machine at every poll. A pid that
 * disappears from the listing is forgotten: reused, it is read again (pids are handed out in
 * turn, so a reuse within one poll would take a full cycle of them). Kills and sweeps still read
 * every process.
 */
const outsiders = new Set<number>();
let exitHookInstalled = false;
let tagCounter = 0;

function startPolling(): void {
  if (!HAS_PROC || pollTimer) return;
  pollTimer = setInterval(() => {
    if (live.size === 0) {
      clearInterval(pollTimer);
      pollTimer = undefined;
      return;
    }
    // Outsiders of the last poll that are still listed are not read again (see `outsiders`).
    const listed = new Set(listedPids());
    for (const pid of outsiders) if (!listed.has(pid)) outsiders.delete(pid);
    const table = scanProcesses(outsiders);
    for (const s of live) s.refresh(table, false);
    for (const entry of table) if (![...live].some((s) => s.knows(entry))) outsiders.add(entry.pid);
  }, POLL_MS);
  pollTimer.unref(); // the child process keeps the event loop alive while it runs
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort for process.exit() or a crash, when async cleanups cannot run: synchronous SIGKILL.
  process.on('exit', () => {
    for (const s of live) s.killSync();
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits for `p` at most `ms`; the timer is cleared when `p` wins, so it does not hold the process open for nothing. */
async function atMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

class Supervised implements SupervisedProcess {
  readonly name: string;
  readonly pid: number;
  readonly exited: Promise<ExitInfo>;

  private readonly startedAt = Date.now();
  private readonly sealed: boolean;
  private readonly tagNeedle: Buffer;
  /** Every process ever seen in the tree: pid -> start time. */
  private readonly known = new Map<number, string>();
  /** The root's start time (clock ticks): a process started before it is no descendant, and cannot carry the tag. */
  private rootStart = 0;
  private readonly stdoutTail: HeadTailBuffer;
  private readonly stderrTail: HeadTailBuffer;
  private readonly streams: Readable[] = [];
  private readonly pipesClosed: Promise<void>;
  private rootExit: { code: number | null; signal: string | null; at: number } | undefined;
  private killedBy: 'deadline' | 'harness' | undefined;
  private killing: Promise<void> | undefined;
  private done = false;
  private unregisterCleanup: () => void = () => {};
  private resolveExited!: (info: ExitInfo) => void;

  constructor(options: StartOptions) {
    this.name = options.name;
    this.sealed = options.sealed === true;
    const limit = options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT;
    // A quarter for the head (the start-up error), the rest for the tail (how it ended).
    this.stdoutTail = new HeadTailBuffer(Math.floor(limit / 4), limit - Math.floor(limit / 4));
    this.stderrTail = new HeadTailBuffer(Math.floor(limit / 4), limit - Math.floor(limit / 4));
    const tag = `${process.pid}:${++tagCounter}:${randomBytes(6).toString('hex')}`;
    this.tagNeedle = Buffer.from(`${TAG_VARIABLE}=${tag}\0`);

    let cwdOk = false;
    try {
      cwdOk = statSync(options.cwd).isDirectory();
    } catch {}
    if (!cwdOk) throw new Error(`${options.name}: working directory ${options.cwd} does not exist`);

    // The shell dies with the harness even if the harness is SIGKILLed (its descendants are
    // reached by kill() and the sweep while the harness lives; sealed runs add a PID namespace).
    const [file, ...args] = dieWithHarness([SHELL, '-c', options.command]);
    // node:child_process, not execa (about 0.1 s to import, in the worker that starts every run).
    const subprocess = spawn(file!, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, [TAG_VARIABLE]: tag },
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
    const rootStat = readStat(this.pid);
    if (rootStat) {
      this.known.set(this.pid, rootStat.start);
      this.rootStart = Number(rootStat.start);
    }

    this.exited = new Promise<ExitInfo>((resolve) => {
      this.resolveExited = resolve;
    });

    const closes: Promise<void>[] = [];
    for (const [streamName, stream, tail] of [
      ['stdout', subprocess.stdout, this.stdoutTail],
      ['stderr', subprocess.stderr, this.stderrTail],
    ] as const) {
      if (!stream) continue;
      this.streams.push(stream);
      const decoder = options.onOutput ? new StringDecoder('utf8') : undefined;
      let tapFailed = false;
      stream.on('data', (chunk: Buffer | string) => {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        tail.push(bytes);
        if (decoder && options.onOutput && !tapFailed) {
          const text = decoder.write(bytes);
          if (text) {
            try {
              options.onOutput(streamName, text);
            } catch (error) {
              tapFailed = true;
              process.stderr.write(`chaoslab: ${this.name}: output tap failed, detached: ${String(error)}\n`);
            }
          }
        }
      });
      stream.on('end', () => {
        const rest = decoder?.end();
        if (rest && options.onOutput && !tapFailed) {
          try {
            options.onOutput(streamName, rest);
          } catch {}
        }
      });
      stream.on('error', () => {}); // closed under us (we destroy it if a stray holds the pipe)
      closes.push(new Promise<void>((resolve) => stream.once('close', () => resolve())));
    }
    this.pipesClosed = Promise.all(closes).then(() => {});

    subprocess.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      void this.onRootExit(code, signal);
    });

    live.add(this);
    installExitHook();
    startPolling();
    this.unregisterCleanup = onCleanup(`kill ${this.name} (pid ${this.pid})`, async () => {
      await this.kill('harness');
    });
  }

  // --- tree discovery ---------------------------------------------------------------------

  /** Updates the set of known tree members from a process table and returns the live ones.
   *  With `deep`, also looks for processes carrying this tree's tag in their environment. */
  refresh(table: ProcEntry[], deep: boolean): ProcEntry[] {
    if (!HAS_PROC) return [];
    const root = this.pid;
    const byParent = new Map<number, ProcEntry[]>();
    const members = new Map<number, ProcEntry>();
    const queue: ProcEntry[] = [];
    const add = (entry: ProcEntry) => {
      if (members.has(entry.pid) || entry.pid === process.pid) return;
      members.set(entry.pid, entry);
      queue.push(entry);
    };
    for (const entry of table) {
      const siblings = byParent.get(entry.ppid);
      if (siblings) siblings.push(entry);
      else byParent.set(entry.ppid, [entry]);
      if (this.known.get(entry.pid) === entry.start || entry.pgid === root || entry.sid === root) add(entry);
    }
    if (deep) {
      for (const entry of table) {
        // Only a process started since the root can be its descendant: the others' environments are not read.
        if (!members.has(entry.pid) && isAlive(entry) && Number(entry.start) >= this.rootStart && environHas(entry.pid, this.tagNeedle)) add(entry);
      }
    }
    while (queue.length > 0) {
      for (const child of byParent.get(queue.pop()!.pid) ?? []) add(child);
    }
    // remember every member; forget the dead (their pids may be recycled)
    for (const [pid, start] of this.known) {
      if (members.get(pid)?.start !== start) this.known.delete(pid);
    }
    for (const entry of members.values()) this.known.set(entry.pid, entry.start);
    return [...members.values()].filter(isAlive);
  }

  /** Whether the last refresh counted `entry` in the tree (alive or a zombie). */
  knows(entry: ProcEntry): boolean {
    return this.known.get(entry.pid) === entry.start;
  }

  private aliveMembers(deep: boolean): ProcEntry[] {
    return this.refresh(scanProcesses(), deep);
  }

  private send(sig: NodeJS.Signals | number, alive: ProcEntry[]): void {
    if (this.sealed && sig !== 'SIGKILL' && sig !== osConstants.signals.SIGKILL) {
      for (const entry of alive) {
        if (entry.pid === process.pid || isSealedWrapper(entry.pid)) continue;
        try {
          process.kill(entry.pid, sig);
        } catch {}
      }
      return;
    }
    // The group first: one atomic kill for everything that stayed in it. Without /proc we cannot
    // see the group, so we send it as long as the tree is not known to be gone.
    const toGroup = HAS_PROC ? alive.some((entry) => entry.pgid === this.pid) : !this.done;
    if (toGroup) {
      try {
        process.kill(-this.pid, sig);
      } catch {}
    }
    // Then each member that left the group (setsid, setpgid); one still in it already got the
    // group's signal, and a second SIGTERM would kill a process that restored the default action
    // after the first (as a consumer on its way out does).
    for (const entry of alive) {
      if (entry.pid === process.pid || (toGroup && entry.pgid === this.pid)) continue;
      try {
        process.kill(entry.pid, sig);
      } catch {}
    }
  }

  /** Freezes the tree (so nothing forks away), then SIGKILLs it until nothing is left alive. */
  private killTree(): Promise<void> {
    this.killing ??= (async () => {
      const giveUpAt = Date.now() + KILL_GIVE_UP_MS;
      if (HAS_PROC) {
        let seen = -1;
        for (let round = 0; round < 20; round++) {
          const alive = this.aliveMembers(true);
          this.send('SIGSTOP', alive);
          const size = this.known.size;
          if (size === seen) break;
          seen = size;
        }
      }
      for (;;) {
        const alive = this.aliveMembers(true);
        this.send('SIGKILL', alive);
        this.send('SIGCONT', alive);
        if (!HAS_PROC) return;
        if (alive.length === 0 || Date.now() > giveUpAt) return;
        await sleep(10);
      }
    })();
    return this.killing;
  }

  /** Synchronous last resort, for process 'exit'. */
  killSync(): void {
    const alive = this.aliveMembers(true);
    this.send('SIGKILL', alive);
    this.send('SIGCONT', alive);
  }

  private async onRootExit(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    this.rootExit = { code, signal, at: Date.now() };
    let closed = false;
    void this.pipesClosed.then(() => (closed = true));
    await atMost(this.pipesClosed, PIPE_GRACE_MS);

    let straysKilled = 0;
    if (this.killing) {
      await this.killing;
    } else {
      const strays = this.aliveMembers(true);
      if (strays.length > 0 || (!HAS_PROC && !closed)) {
        straysKilled = strays.length;
        await this.killTree();
      }
    }
    if (!closed) {
      await atMost(this.pipesClosed, PIPE_GRACE_MS);
      // Still open: held by something we could not find. Stop reading rather than hang.
      if (!closed) for (const stream of this.streams) stream.destroy();
    }

    this.done = true;
    live.delete(this);
    this.unregisterCleanup();
    const info: ExitInfo = {
      code,
      signal,
      durationMs: this.rootExit.at - this.startedAt,
    };
    if (this.killedBy) info.killedBy = this.killedBy;
    if (straysKilled > 0) info.straysKilled = straysKilled;
    this.resolveExited(info);
  }

  // --- public API -------------------------------------------------------------------------

  isStopped(): boolean {
    if (this.done) return false;
    return this.aliveMembers(false).some((entry) => entry.state === 'T');
  }

  async waitUntilStoppedOrExited(timeoutMs: number): Promise<'stopped' | 'exited' | 'timeout'> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (this.rootExit || this.done) return 'exited';
      if (this.isStopped()) return 'stopped';
      if (Date.now() >= until) return 'timeout';
      await sleep(Math.min(20, Math.max(1, until - Date.now())));
    }
  }

  signal(sig: NodeJS.Signals): void {
    if (this.done) return;
    this.send(sig, this.aliveMembers(false));
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
    const alive = this.aliveMembers(true);
    this.send('SIGTERM', alive);
    this.send('SIGCONT', alive); // a stopped process only sees SIGTERM once continued
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const first = await Promise.race([this.exited, graceOver]);
    clearTimeout(timer);
    return first === 'grace' ? this.kill(reason) : first;
  }

  outputTail(): OutputTail {
    return {
      stdout: this.stdoutTail.text(),
      stderr: this.stderrTail.text(),
      stdoutBytes: this.stdoutTail.total,
      stderrBytes: this.stderrTail.total,
    };
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
