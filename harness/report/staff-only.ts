// Reports are staff's (docs/sandbox.md, "Modes: who may reach what"). A sealed consumer runs as a slot
// uid that must reach its room, `<reports>/<batch>/<run>/rooms/<name>/`, while its run is live,
// and nothing else: every folder on that way is passable but not listable (0711), and a run
// folder (a batch folder, a grading's staff folder) is closed (0700, its files 0600) the moment
// it is done, so a later consumer, or one of another slot, reads no report of another run even
// by name. The CLI's umask (077, harness/cli.ts) makes every other file the harness writes 0600.

import { chmodSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The mode of a folder a sandbox uid passes through to reach its room: search, no listing. */
export const PASSABLE = 0o711;
/** The umask of every chaoslab process: files 0600, folders 0700 unless made passable. */
export const STAFF_UMASK = 0o077;

/**
 * Makes a reports root, batch or run folder passable but not listable for other users. Only a
 * folder of ours that is no shared sticky one (`--reports /tmp` must not close /tmp to everyone):
 * such a folder is left as it is.
 */
export function makePassable(dir: string): void {
  const st = statSync(dir);
  const ours = process.geteuid === undefined || st.uid === process.geteuid();
  if (!ours || st.mode & 0o1000) return;
  if ((st.mode & 0o7777) !== PASSABLE) chmodSync(dir, PASSABLE);
}

/**
 * Closes a finished folder to everyone but its owner: the folder first (closed at once), then
 * every folder in it 0700 and every file 0600 or less; links are changed never, nor followed.
 */
export function closeFolder(dir: string): void {
  const visit = (path: string): void => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      chmodSync(path, 0o700);
      for (const name of readdirSync(path)) visit(join(path, name));
    } else chmodSync(path, st.mode & 0o600);
  };
  visit(dir);
}
