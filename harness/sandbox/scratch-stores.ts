// Stores of the harness's own instruments (a server run's probes) live on a tmpfs while the run
// goes on, and are copied into the run folder once their processes are done.
//
// Why: a probe is the reference consumer, which commits each event on its own. On a disk each
// commit waits for its sync, and on a busy machine every such wait then waits its turn for the
// CPU again: feed-server-slow-reader (1 800 events at 250 a second) took 33-36 s beside CPU hogs
// (one per core or more) with the probe's store on the disk and 9.1 s on a tmpfs, 8.6 s either
// way on a quiet machine. A tmpfs keeps what a killed process wrote; only a machine crash would
// lose it, and no run simulates one. The consumer under test keeps its store where it was.
//
// The folder is /dev/shm/chaoslab-stores-<pid>-<start time>-<run id>, mode 0700: a harness killed
// with SIGKILL leaves it, and the next one removes those whose owner is gone, as room-fs.ts does
// with room mounts. Without a writable tmpfs at /dev/shm, the stores stay in the run folder.

import { accessSync, constants, copyFileSync, mkdirSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, readStat } from './proc.js';

const TMPFS_MAGIC = 0x01021994;
const PREFIX = 'chaoslab-stores-';
const OWNED = /^chaoslab-stores-(\d+)-(\d+)-/;

export interface ScratchStores {
  /** Where a store is written while the run goes on (the tmpfs, or the run folder). */
  live(name: string): string;
  /** Where it is kept: in the run folder. The journal names this path. */
  kept(name: string): string;
  /** Copies what the tmpfs holds into the run folder and removes its folder; once is enough, again does nothing. */
  keep(): void;
}

/** A writable tmpfs at `dir`, or undefined. */
function tmpfsAt(dir: string): string | undefined {
  try {
    if (statfsSync(dir).type !== TMPFS_MAGIC) return undefined;
    accessSync(dir, constants.W_OK);
    return dir;
  } catch {
    return undefined;
  }
}

/** Removes the scratch folders under `base` whose harness is gone; returns their names. */
export function sweepStaleScratch(base = '/dev/shm'): string[] {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith(PREFIX));
  } catch {
    return [];
  }
  return names.filter((name) => {
    const owner = OWNED.exec(name);
    if (owner && isAlive(Number(owner[1]), owner[2])) return false;
    rmSync(join(base, name), { recursive: true, force: true });
    return true;
  });
}

/** The run's scratch stores: on the tmpfs at `base` when there is one, else in `runDir` itself. */
export function scratchStores(runDir: string, runId: string, base = '/dev/shm'): ScratchStores {
  const tmpfs = tmpfsAt(base);
  let dir: string | undefined;
  if (tmpfs) {
    sweepStaleScratch(tmpfs);
    dir = join(tmpfs, `${PREFIX}${process.pid}-${readStat(process.pid)?.start ?? '0'}-${runId}`);
    mkdirSync(dir, { mode: 0o700 });
  }
  return {
    live: (name) => join(dir ?? runDir, name),
    kept: (name) => join(runDir, name),
    keep: () => {
      if (dir === undefined) return;
      // Every file: a store a killed process left mid-transaction comes with its hot journal.
      for (const name of readdirSync(dir)) copyFileSync(join(dir, name), join(runDir, name));
      rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}
