// A sealed run's consumer processes (harness/sandbox/ has the pieces, docs/sandbox.md the why):
// each runs as the slot's uid, in a PID namespace of its own under a trusted init, with rlimits,
// its own pids and memory cgroups, a clean environment and its room as HOME. This process must
// already be inside the run's network namespace, whose firewall lets that uid reach its proxy only.
// Each room is a tmpfs with a disk quota, sampled while the run lasts, kept on disk at the end;
// after the run, whatever the uid still owns outside its room is found, reported and removed.

import { performance } from 'node:perf_hooks';
import type { JournalEvent } from '../record/journal.js';
import { type CgroupStats, createProcessCgroup, type ProcessCgroup } from '../sandbox/cgroup.js';
import { confinedArgv, decodeSealedExit, type Limits, shellCommandLine } from '../sandbox/confine.js';
import { allowPorts, NFT_HERE, readFirewallCounters, type UidCounters } from '../sandbox/firewall.js';
import { describeLeftover, findLeftovers, removeLeftovers, worldWritableDirs } from '../sandbox/leftovers.js';
import { closeRoom, createRoom } from '../sandbox/room.js';
import { DEFAULT_ROOM_QUOTA_BYTES, keepRoomFs, mountRoomFs, roomUsage } from '../sandbox/room-fs.js';

/** What one consumer process may use, besides the chain's rlimits (DEFAULT_LIMITS). */
export const CONSUMER_CGROUP = { pids: 512, memoryBytes: 2 * 1024 ** 3 };

/** How often a room's use is sampled while the run lasts (a statfs: microseconds). */
const SAMPLE_MS = 100;

interface Room {
  name: string;
  path: string;
  peakBytes: number;
  full: boolean;
}

export class Confinement {
  /** Rooms made for this run: tmpfs with a quota, kept on disk and handed back to root at the end. */
  private readonly rooms: Room[] = [];
  private readonly groups = new Map<string, ProcessCgroup>();
  private sampler: NodeJS.Timeout | undefined;
  /** A folder its processes must reach read-only (a server's outbox's): kept reachable under a private /tmp. */
  readOnlyDir: string | undefined;
  /** Rlimits other than DEFAULT_LIMITS (a server's open files). */
  limits: Partial<Limits> = {};

  constructor(
    readonly uid: number,
    readonly gid: number,
    private readonly runId: string,
    readonly roomQuotaBytes = DEFAULT_ROOM_QUOTA_BYTES,
    /** The machine's world-writable folders, found once by the harness (else here, once per worker). */
    private readonly scanDirs?: readonly string[],
  ) {}

  /** Creates `<roomsDir>/<name>`, the uid's, 0700, with a tmpfs of the quota mounted on it. */
  room(roomsDir: string, name: string): string {
    const path = createRoom(roomsDir, this.uid, this.gid, name);
    mountRoomFs(path, this.uid, this.gid, this.roomQuotaBytes);
    this.rooms.push({ name, path, peakBytes: 0, full: false });
    this.sampler ??= setInterval(() => this.sample(), SAMPLE_MS).unref();
    return path;
  }

  /** Lets the uid reach `port` (its proxy's, once known) through the run's firewall, from in here. */
  allowPort(port: number): Promise<void> {
    return allowPorts(NFT_HERE, this.uid, [port]);
  }

  /** What the run's firewall let through and refused for the uid. */
  async firewallCounters(): Promise<UidCounters | undefined> {
    return (await readFirewallCounters(NFT_HERE)).get(this.uid);
  }

  /** The shell command line that runs `command` confined, with `env` as its whole environment. */
  command(name: string, command: string, env: Record<string, string>, home: string): string {
    const group = createProcessCgroup(`${this.runId}-${name}`, CONSUMER_CGROUP);
    this.groups.set(name, group);
    const readOnly = this.readOnlyDir === undefined ? {} : { readOnlyDir: this.readOnlyDir };
    return shellCommandLine(confinedArgv({ command, uid: this.uid, gid: this.gid, home, env, cgroup: group, limits: this.limits, ...readOnly }));
  }

  /** The consumer's own exit (init and unshare turn a signal death into 128+n), and what its cgroups saw; the groups are removed. */
  async exited(name: string, code: number | null, signal: string | null): Promise<{ code: number | null; signal: string | null; limits?: CgroupStats }> {
    this.sample(); // before a restart or the harness's read changes it
    const group = this.groups.get(name);
    this.groups.delete(name);
    const limits = group?.stats();
    await group?.remove();
    return { ...decodeSealedExit(code, signal), ...(limits ? { limits } : {}) };
  }

  private sample(): void {
    for (const room of this.rooms) {
      const usage = roomUsage(room.path);
      if (!usage) continue;
      room.peakBytes = Math.max(room.peakBytes, usage.usedBytes);
      room.full ||= usage.full;
    }
  }

  /** A `room` entry per room: its quota, its use now and at most, whether it was full. */
  roomEntries(): JournalEvent[] {
    this.sample();
    return this.rooms.flatMap((room): JournalEvent[] => {
      const usage = roomUsage(room.path);
      if (!usage) return [];
      return [
        {
          type: 'room',
          name: room.name,
          quotaBytes: this.roomQuotaBytes,
          usedBytes: usage.usedBytes,
          peakBytes: room.peakBytes,
          files: usage.usedFiles,
          full: room.full,
        },
      ];
    });
  }

  /**
   * What the uid owns outside its room (found, then removed): a `leftovers` entry. `before` the
   * run's first process: what an earlier holder of the uid left (another harness, a test, a
   * consumer sealed by an older version), cleared so this consumer meets none of it and is not
   * blamed for it; `after`: what this run's consumer left.
   */
  async leftovers(when: 'before' | 'after'): Promise<JournalEvent> {
    const started = performance.now();
    const dirs = this.scanDirs ?? (await worldWritableDirs());
    const found = findLeftovers(this.uid, dirs);
    const notRemoved = await removeLeftovers(found);
    const tookMs = Math.round((performance.now() - started) * 100) / 100;
    return { type: 'leftovers', when, uid: this.uid, found: found.map(describeLeftover), notRemoved, folders: [...dirs], tookMs };
  }

  /** Removes the groups, keeps each room's content on disk (unmounting its tmpfs) and hands it to root. Throws what went wrong, after doing the rest. */
  async close(): Promise<void> {
    clearInterval(this.sampler);
    for (const group of this.groups.values()) await group.remove();
    this.groups.clear();
    const problems: string[] = [];
    for (const room of this.rooms.splice(0)) {
      const problem = await keepRoomFs(room.path).catch((error: unknown) => String(error));
      if (problem !== undefined) problems.push(problem);
      closeRoom(room.path);
    }
    if (problems.length > 0) throw new Error(problems.join('; '));
  }
}
