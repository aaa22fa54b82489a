// The issue's own example, end to end: a real feed-reorg run with the reference consumer passes
// with its reorganisation met (the revoke was delivered). The same run's journal with the revoke
// frames to the consumer taken out (revokes dropped before the consumer) is judged again: the
// consumer still "passes" on its store, but the reorganisation reached no consumer, so the
// verdict is an ERROR that names it (fault-without-effect) and its coverage row falls.
import t from 'tap';
import { join } from 'node:path';
import { runScenario } from '../../../../harness/run/runner.js';
import { loadScenario, type Scenario } from '../../../../harness/catalogue/load.js';
import { checkFeedRun } from '../../../../harness/labs/feed/check/checker.js';
import type { FeedStoreSnapshot } from '../../../../harness/labs/feed/check/store-reader.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import { coverageRows, UNTESTED, withCoverage } from '../../../../harness/findings/coverage.js';
import type { JournalEntry } from '../../../../harness/record/journal.js';
import { scenariosDir } from '../../../../harness/base/paths.js';

t.setTimeout(180_000);

t.test('feed-reorg with its revokes dropped before the consumer is untested, not a pass', async (t) => {
  const scenario = loadScenario(join(scenariosDir, 'feed', 'feed-reorg.yaml')) as Scenario<FeedPlan>;
  const journal: JournalEntry[] = [];
  const result = await runScenario({ scenario, cwd: process.cwd(), reportsDir: t.testdir(), seal: 'off', onJournal: (e) => journal.push(e) });
  t.equal(result.status, 'pass', `the reference passes feed-reorg: ${result.verdict?.headline ?? result.error}`);
  const met = result.verdict?.coverage ?? [];
  t.match(
    met.find((c) => c.kind === 'reorg'),
    { fault: 'reorganisation after block 16', took: true, how: /the revoke from 14:0 was delivered/ },
    'the real run met its reorganisation',
  );

  const isRevokeToConsumer = (e: JournalEntry) => e.type === 'wire' && e.stream === 'consumer' && e.kind === 'send' && e.line.startsWith('{"op":"revoke"');
  t.ok(journal.some(isRevokeToConsumer), 'the run sent the consumer a revoke');
  const dropped = journal.filter((e) => !isRevokeToConsumer(e));
  const finals = new Map<string, FeedStoreSnapshot>();
  for (const e of journal) if (e.type === 'store-read' && e.when === 'final') finals.set(e.role, e.store as FeedStoreSnapshot);
  const judged = withCoverage(checkFeedRun({ journal: dropped, plan: scenario, read: (role) => finals.get(role)! }));

  t.equal(judged.status, 'error', 'a pass whose reorganisation reached no consumer is an ERROR');
  t.same(judged.findings, [], 'the consumer itself did nothing wrong');
  t.match(judged.harnessErrors, [
    {
      code: UNTESTED,
      text: /^untested: the reorganisation after block 16 \(blocks 14–16 abandoned\) reached no consumer: .*\(fault "reorganisation after block 16"\)/,
    },
  ]);
  const before = coverageRows([met]).find((r) => r.kind === 'reorg');
  const after = coverageRows([judged.coverage ?? []]).find((r) => r.kind === 'reorg');
  t.match(before, { drawn: 1, tookEffect: 1, runsDrawn: 1, runsMet: 1 }, 'the run as it was: met');
  t.match(after, { drawn: 1, tookEffect: 0, runsDrawn: 1, runsMet: 0 }, 'without its revokes: the row falls');
});
