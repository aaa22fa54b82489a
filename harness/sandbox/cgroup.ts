// Per-process cgroup v1 groups for the `pids` and `memory` controllers: a fork bomb meets
// pids.max, a memory hog meets memory.limit_in_bytes (the kernel's OOM killer ends it inside
// its group), and the group's counters say which limit was hit.
//
// Where: under the harness's OWN group of each controller (read from /proc/self/cgroup), in a
// `chaoslab/` folder, e.g. /sys/fs/cgroup/pids/chaoslab/<harness pid>-<start>-<n>/ when the
// harness sits at the root. Nesting keeps whatever limits the harness itself is under, and
// leaves the machine's other groups alone. The group name starts with the harness's pid and
// start time, so a later harness can remove groups a crashed one left (sweepStaleCgroups).
//
// A process joins by writing its own pid to cgroup.procs before it execs the consumer (the
// `sh -c 'echo $$ > …'` step of confine.ts), so everything it forks is counted from the first
// instruction on. remove() kills anything still inside, then rmdirs.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, readStat, sleep } from './proc.js';

export type Controller = 'pids' | 'memory';

export interface CgroupLimits {
  /** pids.max: processes and threads together. */
  pids?: number;
  /** memory.limit_in_bytes (and memory.memsw.limit_in_bytes where swap is accounted). */
  memoryBytes?: number;
}

export interface CgroupStats {
  /** Current number of tasks (pids.current). */
  pidsCurrent?: number;
  /** How many forks pids.max refused (pids.events "max"). */
  pidsDenied?: number;
  /** memory.max_usage_in_bytes. */
  memoryPeakBytes?: number;
  /** How many times the limit was hit (memory.failcnt). */
  memoryLimitHits?: number;
  /** Processes the OOM killer ended in this group (memory.oom_control "oom_kill"). */
  oomKills?: number;
}

export interface ProcessCgroup {
  readonly name: string;
  /** Controller -> the group's folder. Only controllers that were usable are present. */
  readonly dirs: Partial<Record<Controller, string>>;
  /** The cgroup.procs files a starting process writes its pid to. */
  readonly procsFiles: string[];
  /** Pids currently in the group (any controller). */
  pids(): number[];
  stats(): CgroupStats;
  /** SIGKILLs whatever is still inside and removes the folders; true when all are gone. Idempotent. */
  remove(timeoutMs?: number): Promise<boolean>;
}

const FOLDER = 'chaoslab';
let counter = 0;

/** Where a v1 controller is mounted, from /proc/self/mountinfo; undefined when it is not (or only cgroup v2 is). */
export function controllerMount(controller: Controller): string | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    // "... <mount point> <options> ... - cgroup cgroup rw,memory"
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const [fsType, , superOptions] = right.split(' ');
    if (fsType !== 'cgroup' || superOptions === undefined) continue;
    if (superOptions.split(',').includes(controller)) return left.split(' ')[4];
  }
  return undefined;
}

/** This process's group for a v1 controller, e.g. "/" or "/process_api/abc". */
export function ownGroup(controller: Controller): string | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers !== undefined && path !== undefined && controllers.split(',').includes(controller)) return path;
  }
  return undefined;
}

/** The `chaoslab` folder for a controller under this process's own group, or undefined. */
export function chaoslabParent(controller: Controller): string | undefined {
  const mount = controllerMount(controller);
  const group = ownGroup(controller);
  if (mount === undefined || group === undefined) return undefined;
  return join(mount, group, FOLDER);
}

/** Whether a controller can be used here: its parent folder can be created and a child made and removed. */
export function controllerUsable(controller: Controller): { ok: true; parent: string } | { ok: false; reason: string } {
  const parent = chaoslabParent(controller);
  if (parent === undefined) return { ok: false, reason: `no cgroup v1 ${controller} controller mounted` };
  const trial = join(parent, `probe-${process.pid}-${++counter}`);
  try {
    mkdirSync(parent, { recursive: true });
    mkdirSync(trial);
    rmdirSync(trial);
    return { ok: true, parent };
  } catch (error) {
    return { ok: false, reason: `cannot create a ${controller} group under ${parent}: ${(error as Error).message}` };
  }
}

function ownTag(): string {
  return `${process.pid}-${readStat(process.pid)?.start ?? '0'}`;
}

/** Creates one group per usable controller with the given limits. Throws if a limit cannot be written. */
export function createProcessCgroup(label: string, limits: CgroupLimits, controllers: readonly Controller[] = ['pids', 'memory']): ProcessCgroup {
  const name = `${ownTag()}-${++counter}-${label.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40)}`;
  const dirs: Partial<Record<Controller, string>> = {};
  try {
    for (const controller of controllers) {
      const parent = chaoslabParent(controller);
      if (parent === undefined) continue;
      mkdirSync(parent, { recursive: true });
      const dir = join(parent, name);
      mkdirSync(dir);
      dirs[controller] = dir;
      if (controller === 'pids' && limits.pids !== undefined) writeFileSync(join(dir, 'pids.max'), String(limits.pids));
      if (controller === 'memory' && limits.memoryBytes !== undefined) {
        writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        const memsw = join(dir, 'memory.memsw.limit_in_bytes');
        if (existsSync(memsw)) {
          try {
            writeFileSync(memsw, String(limits.memoryBytes)); // no swapping around the limit
          } catch {}
        }
      }
    }
  } catch (error) {
    for (const dir of Object.values(dirs)) {
      try {
        rmdirSync(dir);
      } catch {}
    }
    throw new Error(`cgroup ${name}: ${(error as Error).message}`);
  }
  return new Group(name, dirs);
}

function readNumber(path: string): number | undefined {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function readKeyed(path: string, key: string): number | undefined {
  try {
    const match = new RegExp(`^${key}\\s+(\\d+)$`, 'm').exec(readFileSync(path, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function procsOf(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map(Number);
  } catch {
    return [];
  }
}

class Group implements ProcessCgroup {
  readonly procsFiles: string[];
  private removed: Promise<boolean> | undefined;

  constructor(
    readonly name: string,
    readonly dirs: Partial<Record<Controller, string>>,
  ) {
    this.procsFiles = Object.values(dirs).map((dir) => join(dir, 'cgroup.procs'));
  }

  pids(): number[] {
    return [...new Set(Object.values(this.dirs).flatMap(procsOf))];
  }

  stats(): CgroupStats {
    const stats: CgroupStats = {};
    const { pids, memory } = this.dirs;
    if (pids !== undefined) {
      const current = readNumber(join(pids, 'pids.current'));
      const denied = readKeyed(join(pids, 'pids.events'), 'max');
      if (current !== undefined) stats.pidsCurrent = current;
      if (denied !== undefined) stats.pidsDenied = denied;
    }
    if (memory !== undefined) {
      const peak = readNumber(join(memory, 'memory.max_usage_in_bytes'));
      const hits = readNumber(join(memory, 'memory.failcnt'));
      const oom = readKeyed(join(memory, 'memory.oom_control'), 'oom_kill');
      if (peak !== undefined) stats.memoryPeakBytes = peak;
      if (hits !== undefined) stats.memoryLimitHits = hits;
      if (oom !== undefined) stats.oomKills = oom;
    }
    return stats;
  }

  remove(timeoutMs = 5000): Promise<boolean> {
    this.removed ??= removeDirs(Object.values(this.dirs), timeoutMs);
    return this.removed;
  }
}

async function removeDirs(dirs: string[], timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  let left = dirs.filter((dir) => existsSync(dir));
  while (left.length > 0) {
    for (const dir of left) {
      for (const pid of procsOf(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      try {
        rmdirSync(dir); // EBUSY while a task (even a zombie) is still charged to it
      } catch {}
    }
    left = left.filter((dir) => existsSync(dir));
    if (left.length === 0 || Date.now() > until) break;
    await sleep(10);
  }
  return left.length === 0;
}

/** Removes groups left by harness processes that are gone (crash, SIGKILL); returns how many. */
export async function sweepStaleCgroups(controllers: readonly Controller[] = ['pids', 'memory']): Promise<number> {
  let swept = 0;
  for (const controller of controllers) {
    const parent = chaoslabParent(controller);
    if (parent === undefined || !existsSync(parent)) continue;
    for (const name of readdirSync(parent)) {
      const match = /^(\d+)-(\d+)-/.exec(name);
      if (!match) continue;
      if (isAlive(Number(match[1]), match[2])) continue; // its harness still runs
      if (await removeDirs([join(parent, name)], 2000)) swept++;
    }
  }
  return swept;
}
