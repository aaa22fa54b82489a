// A file that is either its old bytes or its new ones, never half of either: written beside
// itself, then renamed over (a reader, or a kill in between, sees a whole file). Returns the bytes written.
import { renameSync, writeFileSync } from 'node:fs';

export function writeAtomically(path: string, text: string, mode?: number): number {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, mode === undefined ? {} : { mode });
  renameSync(temp, path);
  return Buffer.byteLength(text);
}
