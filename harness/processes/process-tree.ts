// Which processes belong to one supervised tree (Linux /proc). A process belongs when its parent
// does, or when its group or session is the root's; every member ever seen is remembered with its
// start time, so a grandchild that called setsid() and was reparented to init after its parent
// died is still known, and a recycled pid is never mistaken for a member. A deep look also reads
// /proc/<pid>/environ for the tree's tag (inherited by every descendant), which finds a process
// that escaped between two polls.

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isRunningState, type ProcStat, readStat, scanProcesses } from '../sandbox/proc.js';

/** Whether /proc can be read for process trees; without it only the process group is known. */
export const HAS_PROC = process.platform === 'linux' && existsSync('/proc/self/stat');

/** The environment variable that carries a tree's tag to every descendant. */
export const TAG_VARIABLE = 'CHAOSLAB_SUPERVISOR_TAG';

let tagCounter = 0;

function environHas(pid: number, needle: Buffer): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`).includes(needle);
  } catch {
    return false; // gone, or not ours to read
  }
}

export class ProcessTree {
  /** The value of TAG_VARIABLE for this tree's root. */
  readonly tag = `${process.pid}:${++tagCounter}:${randomBytes(6).toString('hex')}`;
  private readonly tagNeedle = Buffer.from(`${TAG_VARIABLE}=${this.tag}\0`);
  /** Every process ever seen in the tree: pid -> start time. */
  private readonly known = new Map<number, string>();
  /** The root's start time (clock ticks): a process started before it is no descendant, and cannot carry the tag. */
  private rootStart = 0;
  private root = 0;

  /** The tree's root, once spawned (its pid is also its group and session id). */
  setRoot(pid: number): void {
    this.root = pid;
    const stat = readStat(pid);
    if (stat) {
      this.known.set(pid, stat.start);
      this.rootStart = Number(stat.start);
    }
  }

  /** How many processes the tree has ever counted (and not yet seen die). */
  get size(): number {
    return this.known.size;
  }

  /** Updates the known members from a process table and returns the live ones (not zombies).
   *  With `deep`, also looks for processes carrying the tree's tag in their environment. */
  refresh(table: readonly ProcStat[], deep: boolean): ProcStat[] {
    if (!HAS_PROC) return [];
    const byParent = new Map<number, ProcStat[]>();
    const members = new Map<number, ProcStat>();
    const queue: ProcStat[] = [];
    const add = (entry: ProcStat) => {
      if (members.has(entry.pid) || entry.pid === process.pid) return;
      members.set(entry.pid, entry);
      queue.push(entry);
    };
    for (const entry of table) {
      const siblings = byParent.get(entry.ppid);
      if (siblings) siblings.push(entry);
      else byParent.set(entry.ppid, [entry]);
      if (this.knows(entry) || entry.pgid === this.root || entry.sid === this.root) add(entry);
    }
    if (deep) {
      for (const entry of table) {
        // Only a process started since the root can be its descendant: the others' environments are not read.
        if (!members.has(entry.pid) && isRunningState(entry.state) && Number(entry.start) >= this.rootStart && environHas(entry.pid, this.tagNeedle))
          add(entry);
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
    return [...members.values()].filter((entry) => isRunningState(entry.state));
  }

  /** Whether the last refresh counted `entry` in the tree (alive or a zombie). */
  knows(entry: ProcStat): boolean {
    return this.known.get(entry.pid) === entry.start;
  }

  /** The live members now, from a fresh read of every process. */
  aliveMembers(deep: boolean): ProcStat[] {
    return this.refresh(HAS_PROC ? scanProcesses() : [], deep);
  }
}
