// What every lab's priority test checks, in one place: for each mutant, its cause leads over
// each generic finding its killer also reported, whichever order the checker found them in; and
// every code a table names is one the lab's checkers emit (found quoted in their source).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { type FindingPriorities, rankFindings } from '../../harness/findings/priority.js';

export const ROOT = join(import.meta.dirname, '../..');

/** Mutant → [its cause, the generic findings its killer also reported]. */
export type CausePairs = Record<string, [string, string[]]>;

export function causesLead(t: Test, pairs: CausePairs, priorities: FindingPriorities): void {
  for (const [mutant, [cause, generic]] of Object.entries(pairs))
    for (const code of generic) {
      const ranked = rankFindings(
        [code, cause].map((c) => ({ code: c, text: c })),
        priorities,
      );
      t.equal(ranked[0]!.code, cause, `${mutant}: ${cause} before ${code}`);
    }
}

/** Every .ts file under `dir` (a file or a folder, relative to the project root), read. */
export function sourcesUnder(dir: string): string[] {
  const path = join(ROOT, dir);
  if (!statSync(path).isDirectory()) return [readFileSync(path, 'utf8')];
  return readdirSync(path).flatMap((f) => (f.endsWith('.ts') || statSync(join(path, f)).isDirectory() ? sourcesUnder(join(dir, f)) : []));
}

export function codesAreEmitted(t: Test, priorities: FindingPriorities, dirs: readonly string[]): void {
  const source = dirs.flatMap(sourcesUnder).join('\n');
  for (const code of Object.keys(priorities)) t.ok(source.includes(`'${code}'`), code);
}
