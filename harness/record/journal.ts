// The run's journal: JSON Lines, appended synchronously, so a crash or Ctrl-C still leaves
// everything up to that moment readable. Only the stream's own lines (a wire send or recv, two
// an event) wait, for at most the rest of the event loop's turn, to go out in one append with
// the others of that turn: one write(2) a line cost the harness more than its publisher did.
// Any other entry, the writer's close and the process's exit write them at once. The writer
// also keeps every entry in memory: the checker judges from that record — what the harness
// itself saw — never from the file, which is the harness's output, not its input. Schema:
// docs/journal.md.

import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { TranscriptEvent } from '../../publisher/transcript.js';
import type { ProcessRef, Verdict } from '../findings/verdict.js';
import type { Reproduce } from './reproduce.js';
import type { CgroupStats } from '../sandbox/cgroup.js';
import type { LockHolder } from '../sandbox/file-locks.js';

/**
 * Who is at the other end of a connection, as far as the harness can tell (unsealed runs):
 * `proxy`, this run's Toxiproxy; `direct`, a process of this run of the stream's own role (for a
 * consumer: around the proxy); `stray`, any other process (another run's Toxiproxy or harness, a
 * stranger); `unknown`, nothing holds the far end any more.
 */
export type Peer = { pid: number; comm: string; via: 'proxy' | 'direct' | 'stray' } | { via: 'unknown' };

/** 2: labs (a `protocol` per run), findings in the verdict, connection owners on `wire` opens. */
export const JOURNAL_SCHEMA = 2;

export type Role = 'consumer' | 'control';
/** A process's role: a store's (the consumer under test, the control), or the push server under test (the feed lab's server scenarios). */
export type ProcessRole = Role | 'server';

export type JournalEvent =
  | {
      type: 'run-start';
      schema: number;
      runId: string;
      scenario: { name: string; file: string; description: string };
      harnessVersion: string;
      node: string;
      platform: string;
      cwd: string;
      /** The lab. */
      protocol: string;
      consumerCommand: string;
      controlCommand: string;
      /** A scenario that tests the lab's push server: the server under test (the consumers are probes). */
      serverCommand?: string;
      /** Whether the run was sealed, and why (not). */
      sealing?: string;
      /** The command line and CHAOSLAB_* environment that re-run this run by hand, in `cwd` (absent in older journals). */
      reproduce?: Reproduce;
    }
  /** `identity`: how the harness knows the server is the one this run started (or that it does not check). */
  | { type: 'toxiproxy'; url: string; version: string; owned: boolean; identity?: string; pid?: number }
  /** The scenario as loaded: its source text and the resolved plan (script, settings, expectations). */
  | { type: 'scenario'; source: string; plan: unknown }
  | { type: 'stream'; role: Role; stream: string; host: string; port: number; db: string }
  | { type: 'proxy'; action: 'create' | 'remove'; name: string; listen?: string; upstream?: string }
  | { type: 'process-start'; role: ProcessRole; incarnation: number; pid: number; command: string; env: Record<string, string>; sealed?: { uid: number } }
  | { type: 'process-stopped'; role: ProcessRole; incarnation: number }
  | { type: 'process-continued'; role: ProcessRole; incarnation: number }
  | {
      type: 'process-exit';
      role: ProcessRole;
      incarnation: number;
      code: number | null;
      signal: string | null;
      killedBy?: 'deadline' | 'harness';
      durationMs: number;
      stdoutTail: string;
      stderrTail: string;
      stdoutBytes: number;
      stderrBytes: number;
      /** Sealed runs: what the process's cgroups counted (refused forks, OOM kills, peak memory). */
      limits?: CgroupStats;
    }
  /**
   * A line on the wire, as the publisher saw it; on `open`, the process that owns the connection.
   * `truncated`: characters of this line left out; `omitted` (on `close`): the consumer's lines left
   * out once its connection reached the journal's bound (harness/record/wire-journal.ts).
   */
  | ({
      type: 'wire';
      stream: string;
      conn: number;
      owner?: ProcessRef;
      /** On `open` of a consumer's connection in an unsealed run: the process at the other end. */
      peer?: Peer;
      truncated?: number;
      omitted?: { lines: number; chars: number };
    } & TranscriptEvent)
  /** A sealed run: the consumer's uid, and what its firewall let through and refused. */
  | {
      type: 'seal';
      uid: number /** The server under test's uid (issue 31); else the consumers'. */;
      role?: 'server';
      allowed: { packets: number; bytes: number };
      rejected: { packets: number; bytes: number };
    }
  /**
   * A sealed run's room (a tmpfs with a disk quota), before the verdict: its quota, what it holds
   * and held at most (sampled every 100 ms and at each exit), whether it was full (less than 1 %
   * free, or no inode left).
   */
  | { type: 'room'; name: string; quotaBytes: number; usedBytes: number; peakBytes: number; files: number; full: boolean }
  /**
   * What the consumer's uid owned outside its room (files in the world-writable `folders`, SysV
   * IPC objects), removed by the harness; `notRemoved`: what could not be, with why. `before` the
   * first process: an earlier holder's; `after` the run: the consumer's.
   */
  | { type: 'leftovers'; when: 'before' | 'after'; uid: number; found: string[]; notRemoved: string[]; folders: string[]; tookMs: number }
  /** The harness read a consumer's store through an independent connection; `store` is the lab's snapshot. */
  | { type: 'store-read'; role: Role; incarnation?: number; when: StoreReadWhen; db: string; store: unknown }
  /** `role`: the process a signal went to, when the run names it (the feed lab's server runs); else a consumer's `incarnation`. */
  | {
      type: 'fault';
      action: 'apply' | 'lift';
      name: string;
      kind: 'toxic' | 'proxy-down' | 'signal' | 'loss';
      detail: string;
      incarnation?: number;
      role?: ProcessRole;
    }
  /**
   * Who takes part in the run, in its own words (the feed lab's server runs: "probe 2", "server
   * instance 1", "slow"): a lane of the sequence diagram, and the name reports give its processes
   * and connections (harness/record/cast.ts). `side`: the server side answers, the client side
   * connects. It is a process (`process`; a restarted one repeats its `id`), a wire stream
   * (`stream`), and on the server side the `tag` of the wire opens that lead to it. A run without
   * parties (the consumer runs) speaks of its consumer and control as ever.
   */
  | { type: 'party'; id: string; name: string; side: 'server' | 'client'; about?: string; process?: ProcessRef; stream?: string; tag?: string }
  /**
   * A loss fault was lifted: its nftables rules, and the named counters read back just before the
   * table was removed (`dropped` + `passed` = every packet to or from the consumer's proxy port).
   */
  | {
      type: 'loss';
      name: string;
      percent: number;
      port: number;
      rules: string[];
      dropped: { packets: number; bytes: number };
      passed: { packets: number; bytes: number };
    }
  /** The harness's indexer committed `blocks` to the outbox in one transaction (a block, or a reorganisation's new blocks): the feed lab's server runs time delivery lag from it. */
  | { type: 'outbox-commit'; blocks: number[]; logs: number }
  /**
   * One client of a server run's crowd (the feed lab's fan-out), journaled when the run is over:
   * when it subscribed, its snapshot's cursor (or its first frame, cut, when that was no
   * snapshot), the cursors of the events it read in order with the time each arrived, a SHA-256
   * of those event frames, and how it ended.
   */
  | {
      type: 'crowd-client';
      client: number;
      /** Absent: it never connected (`close` says why). */
      subscribedAt?: number;
      snapshot?: string;
      /** The first frame that was not what the contract says (not JSON, an unknown op, a second snapshot), cut. */
      unexpected?: string;
      firstFrame?: string;
      events: string[];
      arrivals: number[];
      digest: string;
      /** Frames of any kind read after a `reset`. */
      afterReset: number;
      reset?: string;
      close?: { t: number; by: 'publisher' | 'consumer' | 'reset'; reason: string };
    }
  /** A process's memory, sampled from /proc: the resident set of its whole tree (the feed lab's server under test). */
  | { type: 'memory'; role: ProcessRole; incarnation: number; rssBytes: number; processes: number }
  | { type: 'verdict'; verdict: Verdict }
  | { type: 'harness-error'; message: string }
  /** A server run: the harness's outbox writer was locked out (SQLITE_BUSY); who held locks on the outbox then. */
  | { type: 'outbox-locked'; message: string; holders: LockHolder[] }
  /** `interrupted`: stopped (SIGINT/SIGTERM) before its own end; `by` the signal, `at` the journal time it came. */
  | { type: 'run-end'; status: 'pass' | 'fail' | 'error' | 'interrupted' | 'skipped'; interrupted?: { by: string; at: number } };

export type JournalEntry = { t: number } & JournalEvent;

/**
 * When the harness read a store: after a process exited, while it stopped itself, at the end;
 * a lab may read at moments of its own too (the feed lab: at each subscribe, and while it waits
 * for convergence), which reports name in the words of the lab's `Vocabulary.readMoments`.
 */
export type StoreReadWhen = 'after-exit' | 'while-stopped' | 'final' | 'at-subscribe' | 'converging';

/** Writers with lines waiting: the process's exit writes them (a crash loses none). */
const waiting = new Set<JournalWriter>();
let exitHooked = false;

/** Characters of waiting lines that make the writer append at once. */
const WAITING_CHARS = 64 * 1024;

export class JournalWriter {
  private fd: number | undefined;
  private waitingLines: string[] = [];
  private waitingChars = 0;
  /** Everything written, in order: the harness's own record of the run. */
  readonly entries: JournalEntry[] = [];

  constructor(
    readonly path: string,
    private readonly clock: () => number,
    /** Sees every entry as it is written (e.g. the live console). */
    private readonly listener?: (entry: JournalEntry) => void,
  ) {
    this.fd = openSync(path, 'a');
  }

  write(event: JournalEvent): void {
    if (this.fd === undefined) return;
    const entry = { t: Math.round(this.clock() * 1000) / 1000, ...event } as JournalEntry;
    const line = `${JSON.stringify(entry)}\n`;
    this.waitingLines.push(line);
    this.waitingChars += line.length;
    if (!isStreamLine(event) || this.waitingChars >= WAITING_CHARS) this.flush();
    else if (this.waitingLines.length === 1) this.flushSoon();
    this.entries.push(entry);
    this.listener?.(entry);
  }

  /** Appends the waiting lines in one write. */
  flush(): void {
    if (this.fd === undefined || this.waitingLines.length === 0) return;
    const text = this.waitingLines.join('');
    this.waitingLines = [];
    this.waitingChars = 0;
    waiting.delete(this);
    writeSync(this.fd, text);
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private flushSoon(): void {
    waiting.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.on('exit', () => {
        for (const writer of waiting) writer.flush();
      });
    }
    setImmediate(() => this.flush());
  }
}

/** A line of the stream itself (what the publisher sent and received), the bulk of a journal. */
function isStreamLine(event: JournalEvent): boolean {
  return event.type === 'wire' && (event.kind === 'send' || event.kind === 'recv');
}

/**
 * Reads a journal back. A last line cut short by a crash is ignored; any other bad line is an
 * error that names the file and line, because a journal with a hole would mislead the checker.
 */
export function readJournal(path: string): JournalEntry[] {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const entries: JournalEntry[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch (error) {
      const isTruncatedTail = index === lines.length - 1 && !text.endsWith('\n');
      if (!isTruncatedTail) throw new Error(`${path}:${index + 1}: not a JSON journal entry (${(error as Error).message})`);
      return;
    }
    const { t, type } = (entry ?? {}) as { t?: unknown; type?: unknown };
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || typeof t !== 'number' || typeof type !== 'string')
      throw new Error(`${path}:${index + 1}: not a journal entry (an object with a number \`t\` and a string \`type\`): ${line.slice(0, 80)}`);
    entries.push(entry as JournalEntry);
  });
  return entries;
}
