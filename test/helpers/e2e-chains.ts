// The end-to-end files (test/e2e/*.test.ts) split into two chains, each one process that runs
// its files one after another (test/_end-to-end-1.test.ts, test/_end-to-end-2.test.ts). Two
// chains keep both cores on end-to-end work, the longest part of `make test`, and the unit files
// run on tap's other jobs beside them (.taprc); within a chain, files never compete with each other.
//
// The split is deterministic: longest first, each file onto the chain with less work so far,
// by the seconds below: each file's time in a clean clone's `make test` beside a CPU hog on a
// 2-core AMD EPYC machine of CI's kind (2026-12-07; matrix.test.ts less half of its ledger
// runs, which it no longer makes; feed.test.ts less its two TypeScript runs that the matrix makes).
// A file not listed counts DEFAULT_SECONDS: list a heavy new file here.
//
// matrix.test.ts and feed-server-clients.test.ts go together, in one chain: side by side in two
// (2026-12-05) feed-server-slow-reader's reference run took 28.6 s instead of 8.6 s beside the
// matrix's CPU, its chain 488 s instead of 395 s, and `make test` 22m30s instead of 21m02s.
import { readdirSync } from 'node:fs';

const SECONDS: Record<string, number> = {
  'matrix.test.ts': 161,
  'grade-hostile.test.ts': 128,
  'feed-server-clients.test.ts': 107,
  'grade.test.ts': 98,
  'feed.test.ts': 47,
  'chaos.test.ts': 40,
  'sealed.test.ts': 39,
  'grade-validity.test.ts': 37,
  'chaos-server.test.ts': 28,
  'feed-server.test.ts': 24,
  'feed-server-fanout.test.ts': 22,
  'grading-examples.test.ts': 22,
  'batch.test.ts': 19,
  'grade-replay.test.ts': 19,
  'grade-server.test.ts': 19,
  'hostile.test.ts': 18,
  'ack-crash.test.ts': 17,
  'store-integrity.test.ts': 17,
  'grade-build-cache.test.ts': 12,
  'other-lab.test.ts': 11,
  'bench-fanout.test.ts': 9,
  'loss.test.ts': 8,
  'cli.test.ts': 6,
  'sealed-isolation.test.ts': 6,
  'interrupt.test.ts': 4,
  'build-native-addon.test.ts': 1,
};
const DEFAULT_SECONDS = 30;
const TOGETHER: readonly (readonly string[])[] = [['matrix.test.ts', 'feed-server-clients.test.ts']];

export const e2eDir = new URL('../e2e/', import.meta.url);

/** The files of chain `which` (0 or 1), in name order. */
export function chainFiles(which: 0 | 1, files = readdirSync(e2eDir).filter((f) => f.endsWith('.test.ts'))): string[] {
  const weight = (f: string) => SECONDS[f] ?? DEFAULT_SECONDS;
  const grouped = new Set(TOGETHER.flat());
  const units = [...TOGETHER.map((group) => group.filter((f) => files.includes(f))), ...files.filter((f) => !grouped.has(f)).map((f) => [f])].filter(
    (unit) => unit.length > 0,
  );
  const unitWeight = (unit: readonly string[]) => unit.reduce((sum, f) => sum + weight(f), 0);
  units.sort((a, b) => unitWeight(b) - unitWeight(a) || a[0]!.localeCompare(b[0]!));
  const load = [0, 0];
  const chains: string[][] = [[], []];
  for (const unit of units) {
    const to = load[0]! <= load[1]! ? 0 : 1;
    chains[to]!.push(...unit);
    load[to]! += unitWeight(unit);
  }
  return chains[which]!.sort();
}
