// The end-to-end files (test/e2e/*.test.ts) split into two chains, each one process that runs
// its files one after another (test/_end-to-end-1.test.ts, test/_end-to-end-2.test.ts). Two
// chains keep both cores on end-to-end work, the longest part of `make test`, and the unit files
// fill in as a chain ends; within a chain, files never compete with each other.
//
// The split is deterministic: longest first, each file onto the chain with less work so far,
// by the seconds below (measured under load). A file not listed counts one minute: list a
// heavy new file here.
import { readdirSync } from 'node:fs';

const SECONDS: Record<string, number> = {
  // Measured 2026-12-05 in `make test` beside a CPU hog: the sum of each file's tests in its chain.
  'matrix.test.ts': 170,
  'feed-server-clients.test.ts': 100,
  'chaos-server.test.ts': 90,
  'feed.test.ts': 85,
  'grade-hostile.test.ts': 80,
  'grade.test.ts': 36,
  'grade-server.test.ts': 35,
  'feed-server.test.ts': 30,
  'chaos.test.ts': 27,
  'grade-replay.test.ts': 25,
  'grade-validity.test.ts': 20,
  'feed-server-fanout.test.ts': 16,
  'grading-examples.test.ts': 16,
  'ack-crash.test.ts': 15,
  'sealed.test.ts': 12,
  'store-integrity.test.ts': 12,
  'other-lab.test.ts': 10,
  'grade-build-cache.test.ts': 8,
  'interrupt.test.ts': 8,
  'hostile.test.ts': 7,
  'batch.test.ts': 5,
  'loss.test.ts': 5,
  'sealed-isolation.test.ts': 5,
  'bench-fanout.test.ts': 4,
  'cli.test.ts': 4,
  'build-native-addon.test.ts': 1,
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
