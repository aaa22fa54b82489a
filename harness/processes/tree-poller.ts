// One poller for every supervised tree: every POLL_MS it reads /proc and lets each tree count the
// new members, so a process that forks and escapes (setsid, reparented to init) is known before
// its parent dies. Trees leave the poller once they are known to be gone; it stops when none is left.

import { listPids, type ProcStat, scanProcesses } from '../sandbox/proc.js';
import { HAS_PROC } from './process-tree.js';

const POLL_MS = 50;

/** What the poller needs of a tree. */
export interface PolledTree {
  refresh(table: readonly ProcStat[], deep: boolean): unknown;
  knows(entry: ProcStat): boolean;
}

const watched = new Set<PolledTree>();
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

function poll(): void {
  if (watched.size === 0) {
    clearInterval(pollTimer);
    pollTimer = undefined;
    return;
  }
  // Outsiders of the last poll that are still listed are not read again (see `outsiders`).
  const listed = new Set(listPids());
  for (const pid of outsiders) if (!listed.has(pid)) outsiders.delete(pid);
  const table = scanProcesses(outsiders);
  for (const tree of watched) tree.refresh(table, false);
  for (const entry of table) if (![...watched].some((tree) => tree.knows(entry))) outsiders.add(entry.pid);
}

/** Polls for `tree`'s members until unwatch(tree). */
export function watch(tree: PolledTree): void {
  watched.add(tree);
  if (!HAS_PROC || pollTimer) return;
  pollTimer = setInterval(poll, POLL_MS);
  pollTimer.unref(); // the child process keeps the event loop alive while it runs
}

export function unwatch(tree: PolledTree): void {
  watched.delete(tree);
}
