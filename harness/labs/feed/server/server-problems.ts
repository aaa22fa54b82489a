// The server under test as a process, from what the journal recorded of it: how it started,
// stopped itself, and ended. A server that exits before the run is over (after a bad client's
// frame: the crash it caused), never listens, misses its `stop@` hook or does not exit 0 within
// 2 s of SIGTERM is a finding, named with its status and the last line it wrote on stderr.

import { basename } from 'node:path';
import type { Finding, ProcessRef, Verdict } from '../../../findings/verdict.js';
import type { LockHolder } from '../../../sandbox/file-locks.js';
import type { JournalEntry } from '../../../record/journal.js';
import { exitFacts, lastLine } from '../check/facts.js';
import { seconds } from '../report/words.js';
import { SERVER_SIGTERM_EXIT_MS } from './process.js';
import { SERVER_SIGNAL } from './wire/names.js';
import { COMMIT_WHILE_STOPPED } from './script.js';

/** Slack for the harness's own measurement of "exit within 2 s". */
const EXIT_SLACK_MS = 250;
const SERVER: ProcessRef = { role: 'server', incarnation: 1 };

export interface ServerFacts {
  command?: string;
  pid?: number;
  startedAt?: number;
  fault?: string;
  exit?: { t: number; code: number | null; signal: string | null; killedBy?: string; durationMs: number; stderrTail: string };
  sigtermAt?: number;
  /** The harness killed it: it had not listened within 10 s. */
  notListeningAt?: number;
  /** When it stopped itself (its `stop@` hook), each time. */
  stops: number[];
  /** When the harness committed the script's first blocks while it was stopped. */
  committedAt?: number;
}

export function serverFactsOf(journal: readonly JournalEntry[]): ServerFacts {
  const facts: ServerFacts = { stops: [] };
  for (const e of journal) {
    if (e.type === 'process-start' && e.role === 'server')
      Object.assign(facts, { command: e.command, pid: e.pid, startedAt: e.t, ...(e.env.CHAOSLAB_FAULT ? { fault: e.env.CHAOSLAB_FAULT } : {}) });
    else if (e.type === 'process-stopped' && e.role === 'server') facts.stops.push(e.t);
    else if (e.type === 'process-exit' && e.role === 'server') facts.exit = exitFacts(e);
    else if (e.type === 'fault' && e.name === SERVER_SIGNAL.sigterm) facts.sigtermAt = e.t;
    else if (e.type === 'fault' && e.name === SERVER_SIGNAL.notListening) facts.notListeningAt = e.t;
    else if (e.type === 'fault' && e.name === COMMIT_WHILE_STOPPED) facts.committedAt = e.t;
  }
  return facts;
}

const how = (e: NonNullable<ServerFacts['exit']>): string => (e.signal ? `was killed by ${e.signal}` : `exited with status ${e.code}`);
const said = (e: NonNullable<ServerFacts['exit']>): string => (lastLine(e.stderrTail) ? ` (its stderr: "${lastLine(e.stderrTail)}")` : '');

/** A bad client's bad first frame (server contract §5), as it was sent: who sent it, what it was, when. */
export interface BadFrameSent {
  who: string;
  what: string;
  t: number;
}

/**
 * A server that exited on its own after a bad client sent its bad frame: the last such frame
 * before the exit, the words of a crash it caused (its time and the server's stderr show how
 * close they were). None for status 64 (a bad environment says so itself).
 */
function crashedByBadClient(name: string, f: ServerFacts, badFrames: readonly BadFrameSent[]): Finding | undefined {
  const e = f.exit;
  const bad = badFrames.filter((b) => e && b.t <= e.t).at(-1);
  if (!e || !bad || e.code === 64) return undefined;
  return {
    code: 'bad-client-crashed-server',
    text: `a bad client crashed the server: ${name} ${how(e)} ${seconds(e.durationMs)} after it started, before the run was over, ${seconds(e.t - bad.t)} after ${bad.who} sent ${bad.what} as its first frame${said(e)} — close that one connection, sending nothing first: a bad client never takes the server or another connection down (server contract §5)`,
    subject: { process: SERVER, t: e.t },
  };
}

/** How it ended: before the end, never listening, at the deadline, or after SIGTERM (exit 0 within 2 s). */
function endProblems(f: ServerFacts, badFrames: readonly BadFrameSent[]): Finding[] {
  const name = `the server under test (\`${f.command ?? '?'}\`)`;
  const e = f.exit;
  if (!e)
    return f.startedAt === undefined
      ? []
      : [{ code: 'server-never-ended', text: `${name} has no recorded exit (the run was cut short)`, subject: { process: SERVER } }];
  const at = { process: SERVER, t: e.t };
  if (f.notListeningAt !== undefined)
    return [
      {
        code: 'server-not-listening',
        text: `${name} did not listen on its CHAOSLAB_HOST:CHAOSLAB_PORT within 10 s of starting (server contract §1): the harness killed it${said(e)}`,
        subject: at,
      },
    ];
  if (e.killedBy === 'deadline')
    return [{ code: 'server-deadline', text: `${name} was killed at the scenario's deadline (${seconds(e.durationMs)} after it started)`, subject: at }];
  if (f.sigtermAt === undefined) {
    const crash = crashedByBadClient(name, f, badFrames);
    if (crash) return [crash];
    const why =
      e.code === 64
        ? ': status 64 says its environment or outbox was bad, but the harness gave it a valid one (server contract §1)'
        : '; nothing asked it to end';
    return [
      {
        code: 'server-exited-early',
        text: `${name} ${how(e)} ${seconds(e.durationMs)} after it started, before the run was over${why}${said(e)}`,
        subject: at,
      },
    ];
  }
  if (e.killedBy)
    return [
      {
        code: 'server-sigterm-ignored',
        text: `${name} did not exit within ${SERVER_SIGTERM_EXIT_MS / 1000} s of SIGTERM: the harness killed it ${seconds(e.t - f.sigtermAt)} after`,
        subject: at,
      },
    ];
  if (e.code !== 0)
    return [{ code: 'server-sigterm-status', text: `${name} ${how(e)} after SIGTERM, expected status 0 (server contract §1)${said(e)}`, subject: at }];
  const took = (f.startedAt ?? 0) + e.durationMs - f.sigtermAt;
  if (f.startedAt !== undefined && took > SERVER_SIGTERM_EXIT_MS + EXIT_SLACK_MS)
    return [
      { code: 'server-sigterm-slow', text: `${name} took ${seconds(took)} to exit after SIGTERM, more than ${SERVER_SIGTERM_EXIT_MS / 1000} s`, subject: at },
    ];
  return [];
}

/** A `stop@` hook the server never fired, though a snapshot was sent (the probe's store holds one). */
function hookProblems(f: ServerFacts, snapshotSent: boolean): Finding[] {
  const stop = (f.fault ?? '').split(',').find((item) => item.startsWith('stop@'));
  if (!stop || f.stops.length > 0 || !snapshotSent || f.notListeningAt !== undefined) return [];
  return [
    {
      code: 'server-hook-not-fired',
      text: `the server under test ran with CHAOSLAB_FAULT=${f.fault} and sent a snapshot, but never stopped itself: ${stop} must SIGSTOP the process after that snapshot was read and before its frame is sent (server contract §6)`,
      subject: { process: SERVER },
    },
  ];
}

/** `badFrames`: what the harness's bad clients sent, to name the crash one of them caused. */
export function serverProblems(f: ServerFacts, snapshotSent: boolean, badFrames: readonly BadFrameSent[] = []): Finding[] {
  return [...hookProblems(f, snapshotSent), ...endProblems(f, badFrames)];
}

/**
 * A lock a reader never needs, that keeps a writer out: in `-shm` the WAL write, checkpoint and
 * recovery bytes (120-122), in the database the pending and reserved bytes (1073741824-5).
 */
function keepsWriterOut(h: LockHolder): boolean {
  const [from, to] = h.range.split('-').map((n) => (n === 'EOF' ? Number.MAX_SAFE_INTEGER : Number(n))) as [number, number];
  const overlaps = (a: number, b: number) => from <= b && to >= a;
  return h.file.endsWith('-shm') ? overlaps(120, 122) : h.file.endsWith('-wal') ? false : overlaps(1073741824, 1073741825);
}

const holderWords = (h: LockHolder): string =>
  `${h.pid === null ? 'a lock tied to no process (an open-file-description lock)' : `pid ${h.pid}${h.comm ? ` (${h.comm}` : ' ('}${h.uid === undefined ? '' : `, uid ${h.uid}`})`}: ${h.kind} on ${basename(h.file)} bytes ${h.range}`;

/**
 * The harness's outbox writer was locked out (guard/outbox-lock.ts): that is the verdict, whatever
 * the probes then missed (the script stopped there). The rest of the verdict's tables stay.
 */
export function lockedOutboxFirst(journal: readonly JournalEntry[], verdict: Verdict): Verdict {
  const locked = journal.find((e) => e.type === 'outbox-locked');
  if (locked?.type !== 'outbox-locked') return verdict;
  const blocking = locked.holders.filter(keepsWriterOut);
  const named = blocking.length > 0 ? blocking : locked.holders;
  const shown = named.slice(0, 3).map(holderWords);
  const more = named.length > shown.length ? `, and ${named.length - shown.length} more` : '';
  const which = blocking.length > 0 ? "the writer's own lock bytes were held by" : 'locks held then';
  const who = shown.length > 0 ? `; ${which}: ${shown.join('; ')}${more}` : '; no lock was held any more when the harness looked';
  const finding: Finding = {
    code: 'outbox-locked',
    text: `the outbox was locked against the harness's writer until it gave up (${locked.message}) at ${seconds(locked.t)}${who}. A server reads the outbox in short read transactions and never locks it (server contract §2); the run stopped there`,
    subject: { process: SERVER, t: locked.t },
  };
  return { ...verdict, status: 'fail', headline: finding.text, findings: [finding], harnessErrors: [], diff: [] };
}
