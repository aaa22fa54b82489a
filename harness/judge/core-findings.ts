// Findings the harness makes itself, whatever the lab: a consumer command that could not be
// started, a consumer that went around the proxy, one that met a disk limit or left something
// of its uid behind. They join the lab's findings in the verdict, first, because they void every
// other observation: a consumer that never ran, or bypassed the proxy, was never tested under
// the scenario's faults.

import { formatBytes } from '../text/bytes.js';
import type { JournalEntry } from '../record/journal.js';
import { lossFindings, lossTables } from './loss-check.js';
import { limitsMet } from '../sandbox/limit-words.js';
import { ROOM_INODES } from '../sandbox/room-fs.js';
import { type Finding, statusOf, type Table, type Verdict } from '../findings/verdict.js';

/** What the shell says when it cannot run a command: bash's exit codes 126 (not executable) and 127 (not found). */
const CANNOT_RUN = new Set([126, 127]);
/** The shell's "not found", and the interpreters' own words for a program file that is not there. */
const NOT_FOUND = /not found|can't open file|cannot find module/i;

/** Why a path under /tmp is not found in a sealed run, though it is there on the machine. */
const PRIVATE_TMP =
  " — a sealed run has its own empty /tmp, so nothing of yours under /tmp is there: keep your program and what it reads in your project folder (README, 'Run a scenario against your program')";

/** Whether a consumer's exit is the shell's own "cannot run this command" (126, 127): no later incarnation can start either. */
export const isShellCannotRun = (e: JournalEntry): boolean => e.type === 'process-exit' && e.role === 'consumer' && e.code !== null && CANNOT_RUN.has(e.code);

/**
 * The first consumer process whose command could not be started: bash exited 126 or 127, or the
 * process exited before it ever connected and said "not found" (or, for a program file that is
 * not there, python's "can't open file", node's "Cannot find module"). The finding quotes that
 * message. Other words on the way out (a consumer's own "No such file or directory") are the
 * consumer's failure, not a start failure.
 */
export function cannotStartFinding(journal: readonly JournalEntry[]): Finding | undefined {
  const connected = new Set<number>();
  const sealed = new Set<number>();
  for (const e of journal) {
    if (e.type === 'wire' && e.kind === 'open' && e.owner?.role === 'consumer') connected.add(e.owner.incarnation);
    if (e.type === 'process-start' && e.role === 'consumer' && e.sealed) sealed.add(e.incarnation);
    if (e.type !== 'process-exit' || e.role !== 'consumer' || e.code === null || e.code === 0) continue;
    const said = e.stderrTail
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const message = [...said].reverse().find((l) => NOT_FOUND.test(l)) ?? said.at(-1);
    if (!CANNOT_RUN.has(e.code) && !(message && NOT_FOUND.test(message) && !connected.has(e.incarnation))) continue;
    const quoted = message ? `${JSON.stringify(message.length > 300 ? `${message.slice(0, 299)}…` : message)} ` : '';
    return {
      code: 'cannot-start',
      text: `your command could not be started: ${quoted}(consumer incarnation ${e.incarnation} exited ${e.code})${sealed.has(e.incarnation) && message?.includes('/tmp/') ? PRIVATE_TMP : ''}`,
      subject: { process: { role: 'consumer', incarnation: e.incarnation }, t: e.t },
    };
  }
  return undefined;
}

export function coreFindings(journal: readonly JournalEntry[]): Finding[] {
  const findings: Finding[] = [];
  const cannotStart = cannotStartFinding(journal);
  if (cannotStart) findings.push(cannotStart);
  for (const e of journal) {
    if (e.type === 'wire' && e.kind === 'open' && e.peer?.via === 'direct' && e.owner?.role === 'consumer')
      findings.push({
        code: 'around-proxy',
        text: `consumer incarnation ${e.owner.incarnation} connected around the proxy: the connection came from pid ${e.peer.pid} (${e.peer.comm}), not from Toxiproxy, so no fault of the scenario could reach it`,
        subject: { process: e.owner, t: e.t },
      });
    if (e.type === 'seal' && e.rejected.packets > 0) {
      const packets = `${e.rejected.packets} packet${e.rejected.packets === 1 ? '' : 's'}`;
      findings.push(
        e.role === 'server'
          ? {
              code: 'server-reached-out',
              text: `the server under test tried to reach out: the sealed run's firewall refused ${packets} (a server may only answer on its listen port; it opens no connection, to Toxiproxy, the harness or anything else)`,
            }
          : {
              code: 'around-proxy',
              text: `the consumer tried to connect around the proxy: the sealed run's firewall refused ${packets} to addresses other than its proxy port`,
            },
      );
    }
  }
  findings.push(...limitFindings(journal));
  findings.push(...lossFindings(journal));
  return findings;
}

/**
 * A sealed consumer (or server under test) that met a limit, named: its room full (the tmpfs
 * quota: ENOSPC inside), memory (OOM kill in its cgroup), processes (forks pids.max refused), CPU
 * time (SIGXCPU), a file past RLIMIT_FSIZE (SIGXFSZ), open files (EMFILE), and anything its uid
 * left outside its room.
 */
export function limitFindings(journal: readonly JournalEntry[]): Finding[] {
  const findings: Finding[] = [];
  // The server under test is sealed as a uid of its own, in the room `server` (processes/server-seal.ts).
  const serverUids = new Set(journal.flatMap((e) => (e.type === 'process-start' && e.role === 'server' && e.sealed ? [e.sealed.uid] : [])));
  for (const e of journal) {
    if (e.type === 'room' && e.full) {
      const files = e.files >= ROOM_INODES ? ` or its ${ROOM_INODES} files` : '';
      findings.push({
        code: 'disk-limit',
        text: `the ${e.name === 'server' && serverUids.size > 0 ? 'server' : 'consumer'}'s room reached its disk limit of ${formatBytes(e.quotaBytes)}${files} (${formatBytes(e.peakBytes)} used at most): writes past it failed with "No space left on device"`,
      });
    }
    if (e.type === 'process-exit' && (e.role === 'consumer' || e.role === 'server'))
      // Sealed exits carry their cgroups' counters (`limits`); only then is an EMFILE the sandbox's limit.
      for (const met of limitsMet({ signal: e.signal, ...(e.limits ? { limits: e.limits, stderrTail: e.stderrTail } : {}) }, 'sealed runs')) {
        if (e.role === 'server' && !e.limits) continue; // an unsealed server's own signal death is the lab's to judge
        findings.push({
          code: met.code,
          text: `${e.role === 'server' ? 'the server under test' : `consumer incarnation ${e.incarnation}`} ${met.words}`,
          subject: { process: { role: e.role, incarnation: e.incarnation }, t: e.t },
        });
      }
    if (e.type === 'leftovers' && e.when === 'after')
      for (const left of e.found)
        findings.push({
          code: 'left-behind',
          text: `the ${serverUids.has(e.uid) ? 'server under test' : 'consumer'} left ${left} behind, outside its room (owned by its uid ${e.uid}); the harness removed it`,
        });
  }
  return findings;
}

/** The harness's own tables, whatever the lab: the measured packet loss. */
export const coreTables = (journal: readonly JournalEntry[]): Table[] => lossTables(journal);

/** The lab's verdict with the harness's own findings in front, and its tables after the lab's. */
export function withCoreFindings(verdict: Verdict, findings: readonly Finding[], tables: readonly Table[] = []): Verdict {
  const withTables = tables.length > 0 ? { ...verdict, tables: [...verdict.tables, ...tables] } : verdict;
  if (findings.length === 0) return withTables;
  const all = [...findings, ...verdict.findings];
  const status = statusOf(all, verdict.harnessErrors);
  return { ...withTables, findings: all, status, headline: status === 'pass' ? verdict.headline : (verdict.harnessErrors[0] ?? all[0]!).text };
}
