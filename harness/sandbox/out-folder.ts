// Whether sealed runs can be kept under an output folder. Each run's room, the consumer's
// database, lies under it, and the harness reads that database with the consumer's uid
// (sandbox/store-file.ts): a folder above it that other users cannot pass (0700, as `mktemp -d`
// makes) would have every store read as unreadable, a FAIL for a consumer that did nothing wrong.

import { resolve } from 'node:path';
import { checkAccess } from './room.js';
import { uidForSlot } from './uids.js';

/**
 * Why the sandbox uids cannot reach `outDir`, made passable already (report/staff-only.ts), or
 * undefined. Only the mode bits' "others" count for them, so one uid of the range tells for all.
 */
export function sealedOutProblem(outDir: string): string | undefined {
  const uid = uidForSlot(0);
  const stop = checkAccess(resolve(outDir), uid, uid, 'search', `the output folder ${resolve(outDir)}`);
  if (!stop) return undefined;
  return `${stop.message}: a sealed consumer keeps its database in a room under it, which the harness reads with the consumer's uid; give an --out every user can pass through (no 0700 folder above it, as mktemp -d makes)`;
}
