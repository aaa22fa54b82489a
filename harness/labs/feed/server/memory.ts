// The server's memory over the run: the resident set of its process tree (the command's shell
// and everything under it), read from /proc every 100 ms and journaled as `memory` entries.
// The checker reports the samples as data and holds them to the scenario's bound, if any
// (server contract section 4: one slow client costs the server at most its queue).

import { readFileSync } from 'node:fs';
import type { RunContext } from '../../../lab-api/lab.js';
import { isRunningState, scanProcesses } from '../../../sandbox/proc.js';
import type { FeedPlan } from '../scenario/plan.js';

export const MEMORY_SAMPLE_MS = 100;
const PAGE_BYTES = 4096;

/** The pid and its descendants, from one scan of /proc. */
export function treeOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const stat of scanProcesses()) if (isRunningState(stat.state)) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat.pid]);
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && out.length < 4096) {
    const next = queue.shift()!;
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

/** Resident bytes of one process (statm's second field, in pages); 0 when it is gone. */
export function rssOf(pid: number): number {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    return Number.isFinite(pages) ? pages * PAGE_BYTES : 0;
  } catch {
    return 0;
  }
}

/** Samples the tree of `pid` until the returned stop is called; each sample is journaled. */
export function sampleServerMemory(ctx: RunContext<FeedPlan>, pid: number): () => void {
  const sample = () => {
    const pids = treeOf(pid);
    const rssBytes = pids.reduce((sum, p) => sum + rssOf(p), 0);
    if (rssBytes > 0) ctx.journal.write({ type: 'memory', role: 'server', incarnation: 1, rssBytes, processes: pids.length });
  };
  sample();
  const timer = setInterval(sample, MEMORY_SAMPLE_MS);
  return () => clearInterval(timer);
}
