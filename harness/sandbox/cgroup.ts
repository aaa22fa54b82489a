// Per-process cgroups for the `pids` and `memory` controllers, on cgroup v1 or v2
// (cgroup-where.ts finds which): a fork bomb meets pids.max, a memory hog meets the memory
// limit (v1 memory.limit_in_bytes, v2 memory.max; swap around it refused) and the kernel's OOM
// killer ends it inside its group; the group's counters say which limit was hit. The memory
// cgroup is the sealed runs' memory cap: it counts pages used, not address space reserved, so
// runtimes that reserve large virtual ranges (V8's WebAssembly, the JVM, Go) run unhindered.
//
// Where: under the harness's OWN group (read from /proc/self/cgroup), in a `chaoslab/` folder,
// e.g. /sys/fs/cgroup/pids/chaoslab/<harness pid>-<start>-<n>/ on v1 when the harness sits at
// the root. Nesting keeps whatever limits the harness itself is under, and leaves the machine's
// other groups alone. On v2 one folder serves both controllers; they are enabled in the
// `cgroup.subtree_control` of the harness's group and of `chaoslab/`. The group name starts
// with the harness's pid and start time, so a later harness can remove groups a crashed one
// left (sweepStaleCgroups).
//
// A process joins by writing 0 (itself) to each group's join file before it execs the consumer
// (the `sh -c 'echo 0 > …'` step of confine.ts), so everything it forks is counted from the
// first instruction on. On v1 that file is `tasks`, which moves the writing thread: the shell has
// only one, so it is the whole process, and moving the current thread alone is the one migration
// that skips the kernel's global threadgroup lock, whose first taking after a quiet spell waits
// for an RCU grace period (20 ms here, for every consumer start, where `cgroup.procs` was
// written). On v2 it is `cgroup.procs`. remove() kills anything still inside, then rmdirs.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CgroupHost, type CgroupPlace, type Controller, cgroupMounts, ownGroupIn, placeFor, THIS_MACHINE } from './cgroup-where.js';
import { isAlive, readStat, sleep } from './proc.js';

export type { CgroupHost, Controller } from './cgroup-where.js';

export interface CgroupLimits {
  /** pids.max: processes and threads together. */
  pids?: number;
  /** v1 memory.limit_in_bytes (+ memory.memsw.limit_in_bytes where swap is accounted); v2 memory.max (+ memory.swap.max 0). */
  memoryBytes?: number;
}

export interface CgroupStats {
  /** Current number of tasks (pids.current). */
  pidsCurrent?: number;
  /** How many forks pids.max refused (pids.events "max"). */
  pidsDenied?: number;
  /** The most memory used (v1 memory.max_usage_in_bytes, v2 memory.peak where the kernel has it). */
  memoryPeakBytes?: number;
  /** How many times the limit was hit (v1 memory.failcnt, v2 memory.events "max"). */
  memoryLimitHits?: number;
  /** Processes the OOM killer ended in this group (v1 memory.oom_control, v2 memory.events "oom_kill"). */
  oomKills?: number;
  /** The memory limit the group had, in bytes (for the words of a finding). */
  memoryLimitBytes?: number;
  /** The pids limit the group had. */
  pidsLimit?: number;
}

export interface ProcessCgroup {
  readonly name: string;
  /** Controller -> the group's folder (on v2 both are the same folder). Only usable controllers are present. */
  readonly dirs: Partial<Record<Controller, string>>;
  /** The files a starting, single-threaded process writes 0 to, to join each group itself
   *  (v1 `tasks`, v2 `cgroup.procs`). */
  readonly joinFiles: string[];
  /** Pids currently in the group (any controller). */
  pids(): number[];
  stats(): CgroupStats;
  /** SIGKILLs whatever is still inside and removes the folders; true when all are gone. Idempotent. */
  remove(timeoutMs?: number): Promise<boolean>;
}

let counter = 0;

/** Where a v1 controller is mounted, from /proc/self/mountinfo; undefined when it is not (v2 only, or absent). */
export function controllerMount(controller: Controller, host: CgroupHost = THIS_MACHINE): string | undefined {
  return cgroupMounts(host).v1[controller];
}

/** This process's group for a v1 controller, e.g. "/" or "/process_api/abc". */
export function ownGroup(controller: Controller, host: CgroupHost = THIS_MACHINE): string | undefined {
  return ownGroupIn(controller, host);
}

/** The `chaoslab` folder for a controller under this process's own group, or undefined. */
export function chaoslabParent(controller: Controller, host: CgroupHost = THIS_MACHINE): string | undefined {
  const place = placeFor(controller, host);
  return 'parent' in place ? place.parent : undefined;
}

/**
 * On v2, a controller reaches a child group only when every group from the harness's own down
 * enables it in cgroup.subtree_control. Writing "+memory" into a group that holds processes
 * (the harness's own, unless it sits at the root) fails with EBUSY: then the controller is not
 * usable here, and the caller says so. One write per folder for all controllers missing there.
 */
function enableV2(place: CgroupPlace, controllers: readonly Controller[]): void {
  if (place.version !== 2) return;
  for (const dir of [place.own, place.parent]) {
    const control = join(dir, 'cgroup.subtree_control');
    const enabled = (readFileSafe(control) ?? '').trim().split(/\s+/);
    const missing = controllers.filter((controller) => !enabled.includes(controller));
    if (missing.length === 0) continue;
    try {
      writeFileSync(control, missing.map((controller) => `+${controller}`).join(' '));
    } catch (error) {
      throw new Error(`cannot enable the ${missing.join(' and ')} controller in ${control}: ${(error as Error).message}`);
    }
  }
}

function readFileSafe(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Whether a controller can be used here: its parent folder can be created and a child made and removed. */
export function controllerUsable(
  controller: Controller,
  host: CgroupHost = THIS_MACHINE,
): { ok: true; parent: string; version: 1 | 2 } | { ok: false; reason: string } {
  const place = placeFor(controller, host);
  if (!('parent' in place)) return { ok: false, reason: place.reason };
  const trial = join(place.parent, `probe-${process.pid}-${++counter}`);
  try {
    mkdirSync(place.parent, { recursive: true });
    enableV2(place, [controller]);
    mkdirSync(trial);
    rmdirSync(trial);
    return { ok: true, parent: place.parent, version: place.version };
  } catch (error) {
    return { ok: false, reason: `cannot create a cgroup v${place.version} ${controller} group under ${place.parent}: ${(error as Error).message}` };
  }
}

function ownTag(): string {
  return `${process.pid}-${readStat(process.pid)?.start ?? '0'}`;
}

/** Writes the limits of one controller into its group's folder. */
function writeLimits(version: 1 | 2, controller: Controller, dir: string, limits: CgroupLimits): void {
  if (controller === 'pids' && limits.pids !== undefined) writeFileSync(join(dir, 'pids.max'), String(limits.pids));
  if (controller !== 'memory' || limits.memoryBytes === undefined) return;
  writeFileSync(join(dir, version === 1 ? 'memory.limit_in_bytes' : 'memory.max'), String(limits.memoryBytes));
  // No swapping around the limit (the files are absent where swap is not accounted).
  const swap = version === 1 ? ['memory.memsw.limit_in_bytes', String(limits.memoryBytes)] : ['memory.swap.max', '0'];
  if (existsSync(join(dir, swap[0]!))) {
    try {
      writeFileSync(join(dir, swap[0]!), swap[1]!);
    } catch {}
  }
}

/** Creates one group per usable controller with the given limits. Throws if a limit cannot be written. */
export function createProcessCgroup(
  label: string,
  limits: CgroupLimits,
  controllers: readonly Controller[] = ['pids', 'memory'],
  host: CgroupHost = THIS_MACHINE,
): ProcessCgroup {
  const name = `${ownTag()}-${++counter}-${label.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40)}`;
  const dirs: Partial<Record<Controller, string>> = {};
  const versions: Partial<Record<Controller, 1 | 2>> = {};
  try {
    const places = controllers.flatMap((controller) => {
      const place = placeFor(controller, host);
      return 'parent' in place ? [{ controller, place }] : [];
    });
    const v2 = places.filter(({ place }) => place.version === 2);
    if (v2[0] !== undefined) {
      mkdirSync(v2[0].place.parent, { recursive: true });
      enableV2(
        v2[0].place,
        v2.map(({ controller }) => controller),
      );
    }
    for (const { controller, place } of places) {
      mkdirSync(place.parent, { recursive: true });
      const dir = join(place.parent, name);
      if (!Object.values(dirs).includes(dir)) mkdirSync(dir);
      dirs[controller] = dir;
      versions[controller] = place.version;
      writeLimits(place.version, controller, dir, limits);
    }
  } catch (error) {
    for (const dir of new Set(Object.values(dirs))) {
      try {
        rmdirSync(dir);
      } catch {}
    }
    throw new Error(`cgroup ${name}: ${(error as Error).message}`);
  }
  return new Group(name, dirs, versions, limits);
}

function readNumber(path: string): number | undefined {
  const text = readFileSafe(path);
  if (text === undefined) return undefined;
  const value = Number(text.trim());
  return Number.isFinite(value) ? value : undefined;
}

function readKeyed(path: string, key: string): number | undefined {
  const match = new RegExp(`^${key}\\s+(\\d+)$`, 'm').exec(readFileSafe(path) ?? '');
  return match ? Number(match[1]) : undefined;
}

function procsOf(dir: string): number[] {
  return (readFileSafe(join(dir, 'cgroup.procs')) ?? '')
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
}

class Group implements ProcessCgroup {
  readonly joinFiles: string[];
  private removed: Promise<boolean> | undefined;

  constructor(
    readonly name: string,
    readonly dirs: Partial<Record<Controller, string>>,
    private readonly versions: Partial<Record<Controller, 1 | 2>>,
    private readonly limits: CgroupLimits,
  ) {
    // A Set: on v2 both controllers share one folder, hence one file.
    this.joinFiles = [
      ...new Set(Object.entries(dirs).map(([controller, dir]) => join(dir, versions[controller as Controller] === 1 ? 'tasks' : 'cgroup.procs'))),
    ];
  }

  pids(): number[] {
    return [...new Set(Object.values(this.dirs).flatMap(procsOf))];
  }

  stats(): CgroupStats {
    const stats: CgroupStats = {};
    const { pids, memory } = this.dirs;
    const set = <K extends keyof CgroupStats>(key: K, value: number | undefined) => {
      if (value !== undefined) stats[key] = value;
    };
    if (pids !== undefined) {
      set('pidsCurrent', readNumber(join(pids, 'pids.current')));
      set('pidsDenied', readKeyed(join(pids, 'pids.events'), 'max'));
      set('pidsLimit', this.limits.pids);
    }
    if (memory !== undefined && this.versions.memory === 1) {
      set('memoryPeakBytes', readNumber(join(memory, 'memory.max_usage_in_bytes')));
      set('memoryLimitHits', readNumber(join(memory, 'memory.failcnt')));
      set('oomKills', readKeyed(join(memory, 'memory.oom_control'), 'oom_kill'));
    }
    if (memory !== undefined && this.versions.memory === 2) {
      set('memoryPeakBytes', readNumber(join(memory, 'memory.peak'))); // Linux 5.19 and later
      set('memoryLimitHits', readKeyed(join(memory, 'memory.events'), 'max'));
      set('oomKills', readKeyed(join(memory, 'memory.events'), 'oom_kill'));
    }
    if (memory !== undefined) set('memoryLimitBytes', this.limits.memoryBytes);
    return stats;
  }

  remove(timeoutMs = 5000): Promise<boolean> {
    this.removed ??= removeDirs([...new Set(Object.values(this.dirs))], timeoutMs);
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
export async function sweepStaleCgroups(controllers: readonly Controller[] = ['pids', 'memory'], host: CgroupHost = THIS_MACHINE): Promise<number> {
  let swept = 0;
  const parents = new Set(controllers.map((controller) => chaoslabParent(controller, host)));
  for (const parent of parents) {
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
