// The restart storm at small K (4 processes), run in this process so that its process model and
// its server count for coverage: the TypeScript reference passes, and report.html carries the
// storm's picture. That a storm catches a mutant is proved elsewhere, each once: the checker's
// findings on recorded storms (checker.test.ts), each backoff mutant's waits against the
// reference's (test/consumer/feed/mutants.test.ts), and the catalogue's feed-restart-storm
// catching its first mutant end to end (test/e2e/matrix.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { JournalEntry } from '../../../../../harness/record/journal.js';
import { runScenario } from '../../../../../harness/run/runner.js';
import { loadScenario } from '../../../../../harness/catalogue/load.js';

t.setTimeout(600_000);

const ROOT = join(import.meta.dirname, '../../../../..');
const scenario = loadScenario(join(ROOT, 'test', 'fixtures', 'scenarios', 'feed-restart-storm-small.yaml'));

const run = async (t: Test, consumer?: string) => {
  const journal: JournalEntry[] = [];
  const result = await runScenario({
    scenario,
    cwd: ROOT,
    reportsDir: t.testdir(),
    seal: 'off',
    ...(consumer ? { consumerCommand: consumer } : {}),
    onJournal: (entry) => journal.push(entry),
  });
  return { result, journal };
};

t.test('the TypeScript reference passes the storm at K = 4', async (t) => {
  const { result, journal } = await run(t);
  t.equal(result.status, 'pass', `${result.verdict?.headline ?? result.error}`);
  t.same(result.verdict?.findings, []);
  const opens = journal.filter((e) => e.type === 'wire' && e.kind === 'open');
  t.same([...new Set(opens.map((e) => (e.type === 'wire' ? e.stream : '')))].sort(), ['storm-1', 'storm-2', 'storm-3', 'storm-4'], 'one stream per process');
  t.ok(opens.length >= 4 * 2 * 7, `every process made at least 7 attempts per restart (${opens.length} connections)`);
  const exits = journal.filter((e) => e.type === 'process-exit');
  t.equal(exits.length, 4);
  t.ok(
    exits.every((e) => e.type === 'process-exit' && e.code === 0 && !e.killedBy),
    'all exit 0 on SIGTERM',
  );
  const html = readFileSync(join(result.runDir, 'report.html'), 'utf8');
  t.match(html, /<section id="feed-storm" class="figure">/, 'report.html shows the storm');
  t.match(html, /accepts per second/);
});
