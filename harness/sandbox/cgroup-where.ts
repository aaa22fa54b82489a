// Where a sealed process's cgroups go, for either hierarchy:
//  - cgroup v1: one mount per controller (/sys/fs/cgroup/memory, …); the harness's own group of
//    that controller from /proc/self/cgroup ("4:memory:/some/group").
//  - cgroup v2 (the unified hierarchy): one mount for all controllers; the harness's own group
//    from the "0::/some/group" line. A controller is usable below a group only when it is listed
//    in the group's cgroup.controllers and enabled in its cgroup.subtree_control (the kernel
//    refuses that in a group that holds processes itself: the "no internal processes" rule).
// A controller mounted on v1 is used there (a hybrid machine mounts an empty v2 beside the v1
// controllers); v2 only when v1 does not have it.
//
// The texts of /proc/self/mountinfo and /proc/self/cgroup are read through a CgroupHost, so a
// test can describe a machine (a v2 one on this v1 machine) by hand.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Controller = 'pids' | 'memory';

export interface CgroupHost {
  mountinfo(): string | undefined;
  selfCgroup(): string | undefined;
}

const readOrUndefined = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

export const THIS_MACHINE: CgroupHost = {
  mountinfo: () => readOrUndefined('/proc/self/mountinfo'),
  selfCgroup: () => readOrUndefined('/proc/self/cgroup'),
};

/** The folder the harness's groups of one controller go in, and which hierarchy it belongs to. */
export interface CgroupPlace {
  version: 1 | 2;
  /** The harness's own group, e.g. /sys/fs/cgroup/memory/ or /sys/fs/cgroup/user.slice/x/. */
  own: string;
  /** `<own>/chaoslab`: the parent of every group the harness makes. */
  parent: string;
}

export const FOLDER = 'chaoslab';

/** Mount points of cgroup file systems: v1 controller -> mount, and the v2 mount. */
export function cgroupMounts(host: CgroupHost = THIS_MACHINE): { v1: Partial<Record<string, string>>; v2?: string } {
  const v1: Partial<Record<string, string>> = {};
  let v2: string | undefined;
  for (const line of (host.mountinfo() ?? '').split('\n')) {
    // "... <mount point> <options> ... - cgroup cgroup rw,memory" / "... - cgroup2 cgroup2 rw"
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const [fsType, , superOptions] = right.split(' ');
    const mountPoint = left.split(' ')[4];
    if (mountPoint === undefined) continue;
    if (fsType === 'cgroup2') v2 ??= mountPoint;
    if (fsType === 'cgroup' && superOptions !== undefined) for (const option of superOptions.split(',')) v1[option] ??= mountPoint;
  }
  return v2 === undefined ? { v1 } : { v1, v2 };
}

/** This process's group in a hierarchy: a v1 controller's, or v2's ("0::" line). */
export function ownGroupIn(controller: Controller | 'v2', host: CgroupHost = THIS_MACHINE): string | undefined {
  for (const line of (host.selfCgroup() ?? '').split('\n')) {
    const [id, controllers, path] = line.split(':');
    if (controllers === undefined || path === undefined) continue;
    if (controller === 'v2' ? id === '0' && controllers === '' : controllers.split(',').includes(controller)) return path;
  }
  return undefined;
}

/** Where groups of `controller` go, or why they cannot. Reads (never writes) the v2 controller lists. */
export function placeFor(controller: Controller, host: CgroupHost = THIS_MACHINE): CgroupPlace | { reason: string } {
  const mounts = cgroupMounts(host);
  const v1Mount = mounts.v1[controller];
  if (v1Mount !== undefined) {
    const group = ownGroupIn(controller, host);
    if (group === undefined) return { reason: `no ${controller} line in /proc/self/cgroup` };
    const own = join(v1Mount, group);
    return { version: 1, own, parent: join(own, FOLDER) };
  }
  if (mounts.v2 === undefined) return { reason: `no cgroup ${controller} controller mounted (neither v1 nor v2)` };
  const group = ownGroupIn('v2', host);
  if (group === undefined) return { reason: 'no cgroup v2 line ("0::") in /proc/self/cgroup' };
  const own = join(mounts.v2, group);
  const available = (readOrUndefined(join(own, 'cgroup.controllers')) ?? '').trim().split(/\s+/);
  if (!available.includes(controller)) return { reason: `cgroup v2: the ${controller} controller is not delegated to ${own} (not in its cgroup.controllers)` };
  return { version: 2, own, parent: join(own, FOLDER) };
}
