// A scene's verdict carries its coverage, and a fault whose effect is removed makes the run an
// ERROR, never a PASS: the golden feed-server-two-instances run re-judged as recorded (the
// handover took effect: probes 1 and 2 were subscribed to instance 1 when it was killed and
// resumed on instance 2), then with the probes' resumes on instance 2 taken out of its journal
// (their stores as recorded): the handover met no probe, the run is `fault-without-effect`, and
// the chaos coverage row of the two runs falls to one in two.
import t from 'tap';
import { coverageRows, metShare, UNTESTED, withCoverage } from '../../../../../../harness/findings/coverage.js';
import type { Verdict } from '../../../../../../harness/findings/verdict.js';
import type { FeedStoreSnapshot } from '../../../../../../harness/labs/feed/check/store-reader.js';
import type { FeedPlan } from '../../../../../../harness/labs/feed/scenario/plan.js';
import { checkSceneRun } from '../../../../../../harness/labs/feed/server/scene/check-scene.js';
import type { JournalEntry } from '../../../../../../harness/record/journal.js';
import type { Scenario } from '../../../../../../harness/scenario/types.js';
import { golden } from '../../../../../helpers/journals.js';

/** The run re-judged as execute.ts judges it: the scene's checker, then its coverage. */
function rejudge(journal: JournalEntry[]): Verdict {
  const plan = (journal.find((e) => e.type === 'scenario') as { plan: Scenario<FeedPlan> }).plan;
  const stores = new Map<string, FeedStoreSnapshot>();
  for (const e of journal) if (e.type === 'store-read' && e.when === 'final') stores.set(e.db, e.store as FeedStoreSnapshot);
  return withCoverage(checkSceneRun({ journal, plan, under: plan.lab.serverUnderTest!, read: (db) => stores.get(db)! }));
}

t.test('the handover as recorded took effect; without the resumes on instance 2 the run is untested', async (t) => {
  const journal = golden('feed-server-two-instances-pass');
  const recorded = rejudge(journal);
  t.equal(recorded.status, 'pass', recorded.headline);
  t.match(recorded.coverage, [
    { kind: 'handover', took: true, how: /ended server instance 1 while probe \d was subscribed to it .* resumed from \S+ on instance 2/ },
  ]);
  t.equal(recorded.coverage?.length, 1, 'one fault: the repoints and the kill are one handover');
  t.ok(
    recorded.tables.some((x) => x.id === 'coverage'),
    'the faults table',
  );

  const resumed = new Set(
    journal.flatMap((e) => (e.type === 'wire' && e.kind === 'open' && e.tag === 'instance 2' && e.stream !== 'probe-3' ? [`${e.stream}#${e.conn}`] : [])),
  );
  t.equal(resumed.size, 2, 'probes 1 and 2 resumed on instance 2');
  const stripped = journal.filter((e) => !(e.type === 'wire' && resumed.has(`${e.stream}#${e.conn}`)));
  const untested = rejudge(stripped);
  t.equal(untested.status, 'error');
  t.same(untested.findings, [], 'nothing else is wrong: the stores are as recorded');
  t.same(
    untested.harnessErrors.map((f) => f.code),
    [UNTESTED],
  );
  t.match(
    untested.headline,
    /^untested: the SIGKILL at \S+ s ended server instance 1 while probes? .* was subscribed to it, but no resume from its cursor on instance 2 was answered afterwards \(fault "before block 14: probes 1 and 2 repointed to instance 2, instance 1 killed \(SIGKILL\)"\), so this run proves nothing about a handover/,
  );

  const [row] = coverageRows([recorded.coverage!, untested.coverage!]);
  t.same(row, { kind: 'handover', drawn: 2, tookEffect: 1, runsDrawn: 2, runsMet: 1 });
  t.equal(metShare(row!), 0.5);
});
