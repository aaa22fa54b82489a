// A sealed run's consumer processes (harness/sandbox/ has the pieces, docs/sandbox.md the why):
// each runs as the slot's uid, in a PID namespace of its own under a trusted init, with rlimits,
// its own pids and memory cgroups, a clean environment and its room as HOME. This process must
// already be inside the run's network namespace, whose firewall lets that uid reach its proxy only.

import { type CgroupStats, createProcessCgroup, type ProcessCgroup } from '../sandbox/cgroup.js';
import { confinedArgv, decodeSealedExit, shellCommandLine } from '../sandbox/confine.js';
import { closeRoom } from '../sandbox/room.js';

/** What one consumer process may use, besides the chain's rlimits (DEFAULT_LIMITS). */
export const CONSUMER_CGROUP = { pids: 512, memoryBytes: 2 * 1024 ** 3 };

export class Confinement {
  /** Rooms made for this run, handed back to root at the end. */
  readonly rooms: string[] = [];
  private readonly groups = new Map<string, ProcessCgroup>();

  constructor(
    readonly uid: number,
    readonly gid: number,
    private readonly runId: string,
  ) {}

  /** The shell command line that runs `command` confined, with `env` as its whole environment. */
  command(name: string, command: string, env: Record<string, string>, home: string): string {
    const group = createProcessCgroup(`${this.runId}-${name}`, CONSUMER_CGROUP);
    this.groups.set(name, group);
    return shellCommandLine(confinedArgv({ command, uid: this.uid, gid: this.gid, home, env, cgroup: group }));
  }

  /** The consumer's own exit (init and unshare turn a signal death into 128+n), and what its cgroups saw; the groups are removed. */
  async exited(name: string, code: number | null, signal: string | null): Promise<{ code: number | null; signal: string | null; limits?: CgroupStats }> {
    const group = this.groups.get(name);
    this.groups.delete(name);
    const limits = group?.stats();
    await group?.remove();
    return { ...decodeSealedExit(code, signal), ...(limits ? { limits } : {}) };
  }

  async close(): Promise<void> {
    for (const group of this.groups.values()) await group.remove();
    this.groups.clear();
    for (const room of this.rooms) closeRoom(room);
  }
}
