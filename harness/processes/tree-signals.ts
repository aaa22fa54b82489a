// How a signal reaches a supervised tree, and the kill ladder.
//  - Unsealed: one kill of the process group reaches every process that stayed in it; then each
//    member that left the group (setsid, setpgid) gets its own. A process still in the group is
//    never signalled twice: a second SIGTERM would kill a consumer that restored the default
//    action after the first (as the reference consumers do on their way out).
//  - Sealed (sandbox/confine.ts): every signal but SIGKILL goes to the consumer's own processes,
//    one by one, never to the launcher or tini: tini would forward it to the consumer's group
//    once more, a moment later (a forwarded SIGCONT let a self-stopping consumer run on unseen).
//  - Without /proc, members are unknown: signals go to the group only.

import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { nestedPids, type ProcStat } from '../sandbox/proc.js';
import { HAS_PROC, type ProcessTree } from './process-tree.js';

/** kill() gives up waiting for unkillable processes (state D) after this long. */
const KILL_GIVE_UP_MS = 5000;

/** How deep the harness's own PID namespace is (1 on a host, more in a container; 0: the kernel does not say). */
const OWN_PID_DEPTH = HAS_PROC ? nestedPids('self').length : 0;

/** A sealed tree's launcher (in the harness's PID namespace) or the init of the consumer's namespace (tini). */
function isSealedWrapper(pid: number): boolean {
  if (OWN_PID_DEPTH === 0) return false;
  const pids = nestedPids(pid);
  return pids.length <= OWN_PID_DEPTH || pids.at(-1) === 1;
}

const isKill = (sig: NodeJS.Signals | number): boolean => sig === 'SIGKILL' || sig === osConstants.signals.SIGKILL;

function kill(pid: number, sig: NodeJS.Signals | number): void {
  try {
    process.kill(pid, sig);
  } catch {} // gone meanwhile
}

export interface SignalTarget {
  /** The root's pid, also its process group's id. */
  root: number;
  sealed: boolean;
  /** The tree is known to be gone (only consulted without /proc). */
  gone: boolean;
}

/** Sends `sig` once to each process of `alive` (the tree's live members, just read). */
export function sendToTree(target: SignalTarget, sig: NodeJS.Signals | number, alive: readonly ProcStat[]): void {
  if (target.sealed && !isKill(sig)) {
    for (const entry of alive) if (entry.pid !== process.pid && !isSealedWrapper(entry.pid)) kill(entry.pid, sig);
    return;
  }
  // Without /proc we cannot see the group, so we send it as long as the tree is not known to be gone.
  const toGroup = HAS_PROC ? alive.some((entry) => entry.pgid === target.root) : !target.gone;
  if (toGroup) kill(-target.root, sig);
  for (const entry of alive) {
    if (entry.pid === process.pid || (toGroup && entry.pgid === target.root)) continue;
    kill(entry.pid, sig);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Freezes the tree (SIGSTOP to the group and every member, rescanning until no new member shows
 * up, so nothing can fork away while we kill), then SIGKILL and SIGCONT until none is left alive
 * (zombies count as dead: they hold nothing but a pid, and reaping orphans is init's job).
 */
export async function killTree(target: SignalTarget, tree: ProcessTree): Promise<void> {
  const giveUpAt = performance.now() + KILL_GIVE_UP_MS;
  if (HAS_PROC) {
    let seen = -1;
    for (let round = 0; round < 20; round++) {
      sendToTree(target, 'SIGSTOP', tree.aliveMembers(true));
      if (tree.size === seen) break;
      seen = tree.size;
    }
  }
  for (;;) {
    const alive = tree.aliveMembers(true);
    sendToTree(target, 'SIGKILL', alive);
    sendToTree(target, 'SIGCONT', alive);
    if (!HAS_PROC || alive.length === 0 || performance.now() > giveUpAt) return;
    await sleep(10);
  }
}

/** The synchronous last resort, for process 'exit': one SIGKILL round. */
export function killTreeSync(target: SignalTarget, tree: ProcessTree): void {
  const alive = tree.aliveMembers(true);
  sendToTree(target, 'SIGKILL', alive);
  sendToTree(target, 'SIGCONT', alive);
}
