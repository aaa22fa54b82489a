// The end-to-end files (test/e2e/*.test.ts) split into two chains, each one process that runs
// its files one after another (test/_end-to-end-1.test.ts, test/_end-to-end-2.test.ts). Two
// chains keep both cores on end-to-end work, the longest part of `make test`, and the unit files
// run on tap's other jobs beside them (.taprc); within a chain, files never compete with each other.
//
// The split is deterministic: longest first, each file onto the chain with less work so far,
// by the rough minutes below (measured under load). A file not listed counts one minute: list a
// heavy new file here. These weights are stale as measurements (matrix.test.ts takes some 170 s
// since it runs one mutant per killer), but the split they give keeps matrix.test.ts and
// feed-server-clients.test.ts in one chain. The weights measured on 2026-12-05 put them in two,
// side by side: feed-server-slow-reader's reference run took 28.6 s instead of 8.6 s, its chain
// 488 s instead of 395 s, and `make test` 22m30s instead of 21m02s. Re-weigh with that in mind.
import { readdirSync } from 'node:fs';

const SECONDS: Record<string, number> = {
  'matrix.test.ts': 420,
  'feed.test.ts': 150,
  'chaos.test.ts': 120,
  'chaos-server.test.ts': 120,
  'sealed.test.ts': 100,
  'grade-hostile.test.ts': 130,
  'grade.test.ts': 80,
  'grade-validity.test.ts': 45,
  'grading-examples.test.ts': 75,
  'interrupt.test.ts': 70,
  'hostile.test.ts': 60,
  'loss.test.ts': 60,
  'batch.test.ts': 45,
  'ack-crash.test.ts': 35,
  'cli.test.ts': 30,
  'bench-fanout.test.ts': 25,
  'feed-server.test.ts': 40,
  'grade-server.test.ts': 70,
  'other-lab.test.ts': 20,
};
const DEFAULT_SECONDS = 60;

export const e2eDir = new URL('../e2e/', import.meta.url);

/** The files of chain `which` (0 or 1), in name order. */
export function chainFiles(which: 0 | 1, files = readdirSync(e2eDir).filter((f) => f.endsWith('.test.ts'))): string[] {
  const weight = (f: string) => SECONDS[f] ?? DEFAULT_SECONDS;
  const byWeight = [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
  const load = [0, 0];
  const chains: string[][] = [[], []];
  for (const file of byWeight) {
    const to = load[0]! <= load[1]! ? 0 : 1;
    chains[to]!.push(file);
    load[to]! += weight(file);
  }
  return chains[which]!.sort();
}
