// Where a grading copies and builds its submissions, and the checks made before a class is
// graded (docs/sandbox.md, "Grading: the workspace").
//
// A consumer's working directory is its submission's built copy, so the copy must never sit
// inside the output folder (from `<out>/.staff/<name>/build`, `../../..` listed every student).
// Sealed, the workspace is /var/lib/chaoslab/grade/<pid>-<start>-<random>/ (root's, 0711: the
// slot uids pass through it to the copy but list nothing), each submission's copy a folder of
// random name in it, there only while that submission is graded: then it moves to
// `<out>/.staff/<name>/build` (closed with the staff folder) and the workspace is removed at the
// end, or, after a crash, by the next grading (named after its dead owner's pid and start time).
// Not /tmp or /var/tmp: a sealed process gets private ones of its own, where a copy kept there
// would not be. Unsealed, the consumer runs as the grader's user anyway: a mkdtemp folder (0700).

import { chmodSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { onCleanup } from '../../base/cleanup.js';
import { PASSABLE } from '../../report/staff-only.js';
import { isAlive, readStat } from '../../sandbox/proc.js';
import { checkAccess } from '../../sandbox/room.js';
import { sealedOutProblem } from '../../sandbox/out-folder.js';
import { uidForSlot } from '../../sandbox/uids.js';

export const SEALED_WORKSPACES = '/var/lib/chaoslab/grade';

export interface Workspace {
  readonly dir: string;
  /** A path for one submission's copy (not made yet; it names no submission). */
  copyPath(): string;
  /** Moves a finished copy where staff keep it, or removes it when it cannot move (another file system). */
  keep(copy: string, where: string): void;
  /** Removes the workspace and what is left in it; idempotent. */
  remove(): void;
}

export function openWorkspace(sealed: boolean, root = SEALED_WORKSPACES): Workspace {
  let dir: string;
  if (sealed) {
    mkdirSync(root, { recursive: true, mode: PASSABLE });
    // /var/lib/chaoslab and its grade/ folder: passable, listable by root alone.
    for (const d of root === SEALED_WORKSPACES ? [dirname(root), root] : [root]) chmodSync(d, PASSABLE);
    sweepStale(root);
    const self = readStat(process.pid)?.start ?? '0';
    dir = join(root, `${process.pid}-${self}-${randomBytes(4).toString('hex')}`);
    mkdirSync(dir, { mode: PASSABLE });
    chmodSync(dir, PASSABLE);
  } else {
    dir = mkdtempSync(join(tmpdir(), 'chaoslab-grade-'));
  }
  let removed = false;
  const remove = (): void => {
    if (removed) return;
    removed = true;
    forget();
    rmSync(dir, { recursive: true, force: true });
  };
  const forget = onCleanup(`grading workspace ${dir}`, remove);
  return {
    dir,
    copyPath: () => join(dir, randomBytes(6).toString('hex')),
    keep: (copy, where) => {
      try {
        renameSync(copy, where);
      } catch {
        rmSync(copy, { recursive: true, force: true });
      }
    },
    remove,
  };
}

/** Workspaces whose grading died (SIGKILL, a crash): their owner's pid is gone, or is another process now. */
function sweepStale(root: string): void {
  for (const name of readdirSync(root)) {
    const m = /^(\d+)-(\d+)-[0-9a-f]+$/.exec(name);
    if (m && !isAlive(Number(m[1]), m[2])) rmSync(join(root, name), { recursive: true, force: true });
  }
}

/**
 * Before a sealed grading: why it cannot be graded safely here, or undefined. The slot uids must
 * reach the output folder (each run's room is under it: an --out under a 0700 folder, as
 * `mktemp -d` makes, would score every student 0), and must not reach the class folder (a
 * submission's build or consumer would read the others').
 */
export function placesProblem(outDir: string, classDir: string | undefined): string | undefined {
  const out = sealedOutProblem(outDir);
  if (out) return out;
  const uid = uidForSlot(0);
  if (classDir !== undefined && !checkAccess(resolve(classDir), uid, uid, 'search'))
    return `the class folder ${resolve(classDir)} can be reached by the sandbox uids (uid ${uid} passes through it): a submission's build or consumer could read the other submissions; make it root's alone (chmod 700 ${resolve(classDir)})`;
  return undefined;
}
