// The push server's finding priorities (harness/labs/feed/server-priorities.ts): for each server
// mutant's killer, the findings it produced (recorded from real runs), the server author's
// mistake leads over what it left in a probe's store; every code the table names is one the
// server's checkers emit; and on real runs (the golden journals of the reference server, re-judged
// with one thing broken) the verdict's headline is the cause, though the checker finds the
// probe's store first.
import t from 'tap';
import { type CausePairs, causesLead, codesAreEmitted } from '../../../helpers/priorities.js';
import type { Verdict } from '../../../../harness/findings/verdict.js';
import type { FeedStoreSnapshot } from '../../../../harness/labs/feed/check/store-reader.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import { checkServerRun } from '../../../../harness/labs/feed/server/check.js';
import { checkSceneRun } from '../../../../harness/labs/feed/server/scene/check-scene.js';
import { SERVER_PRIORITIES } from '../../../../harness/labs/feed/server-priorities.js';
import type { JournalEntry } from '../../../../harness/record/journal.js';
import type { Scenario } from '../../../../harness/scenario/types.js';
import { golden } from '../../../helpers/journals.js';

/** Server mutant → [its cause, the generic findings its killer also reported]. */
const PAIRS: CausePairs = {
  'snapshot-then-subscribe': ['lost-in-snapshot-race', ['missing-events', 'wrong-balance']],
  'drop-oldest-silently': ['dropped-silently', ['missing-events', 'wrong-balance']],
  'unbounded-queue': ['no-slow-consumer-reset', ['server-memory-grew', 'missing-events']],
  'bad-client-crashes': ['bad-client-crashed-server', ['no-snapshot', 'missing-events', 'wrong-balance', 'wrong-cursor', 'client-no-snapshot']],
  'no-reset-on-stale': ['partial-history', ['missing-events', 'wrong-balance']],
  'revoke-wrong-point': ['revoke-wrong-point', ['missing-events', 'wrong-content', 'wrong-balance', 'applied-twice']],
  'insertion-order': ['event-order', ['missing-events', 'wrong-balance']],
};

t.test('each server mutant: its cause leads, in whatever order the checker found them', async (t) => causesLead(t, PAIRS, SERVER_PRIORITIES));

t.test("every code in the table is one the server's checkers emit (a probe's store: the consumer run's judgeStore)", async (t) => {
  codesAreEmitted(t, SERVER_PRIORITIES, ['harness/labs/feed/server', 'harness/labs/feed/check/state.ts']);
});

/** A golden server run re-judged: its plan from the journal, each probe's store as its final read recorded it. */
function rejudge(journal: JournalEntry[], check: typeof checkServerRun): Verdict {
  const plan = (journal.find((e) => e.type === 'scenario') as { plan: Scenario<FeedPlan> }).plan;
  const stores = new Map<string, FeedStoreSnapshot>();
  for (const e of journal) if (e.type === 'store-read' && e.when === 'final') stores.set(e.db, e.store as FeedStoreSnapshot);
  const under = plan.lab.serverUnderTest;
  if (!under) throw new Error('not a server run');
  return check({
    journal,
    plan,
    under,
    read: (db) => {
      const store = stores.get(db);
      if (!store) throw new Error(`no final read of ${db} in the journal`);
      return store;
    },
  });
}

t.test('slow reader: frames dropped without a reset lead over the probe’s store that missed events', async (t) => {
  const journal = golden('feed-server-slow-reader');
  // As recorded (the reference server, the probe reset as slow under load): only what the probe's store lacks.
  const asRecorded = rejudge(journal, checkServerRun);
  t.equal(asRecorded.findings[0]?.code, 'missing-events', 'the store first when nothing explains it');
  t.notOk(
    asRecorded.findings.some((f) => f.code === 'dropped-silently'),
    'the slow client read every frame in order',
  );

  // The slow client's 3rd to 6th events never sent, with no reset before the gap: drop-oldest-silently.
  const events = journal.filter((e) => e.type === 'wire' && e.stream === 'client:slow' && e.kind === 'send' && e.line.includes('"op":"event"'));
  const dropped = events.slice(2, 6);
  const verdict = rejudge(
    journal.filter((e) => !dropped.includes(e)),
    checkServerRun,
  );
  t.equal(verdict.status, 'fail');
  t.equal(verdict.findings[0]?.code, 'dropped-silently', 'the cause leads');
  t.equal(verdict.headline, verdict.findings[0]?.text, 'and is the headline');
  t.match(verdict.headline, /^a frame dropped without a reset: the slow-reader client `slow` read \S+ then \S+: 4 events .* \(server contract §4\)$/);
  t.ok(
    verdict.findings.some((f) => f.code === 'missing-events'),
    'the probe’s store is still named, after it',
  );
  const codes = verdict.findings.map((f) => f.code);
  t.ok(codes.indexOf('dropped-silently') < codes.indexOf('missing-events'));
});

t.test('a scene: a server instance’s wrong exit on SIGTERM leads over a probe’s store that lacks its last event', async (t) => {
  const journal = golden('feed-server-two-instances-pass');
  t.equal(rejudge(journal, checkSceneRun).status, 'pass', 'as recorded, it passes');
  // Probe 1's last event gone from its store, and instance 2 exiting 1 on SIGTERM.
  const broken = journal.map((e): JournalEntry => {
    if (e.type === 'store-read' && e.when === 'final' && e.incarnation === 1) {
      const store = e.store as FeedStoreSnapshot;
      return { ...e, store: { ...store, events: store.events.slice(0, -1) } };
    }
    return e;
  });
  const lastServerExit = broken.map((e) => e.type === 'process-exit' && e.role === 'server').lastIndexOf(true);
  const exit = broken[lastServerExit] as Extract<JournalEntry, { type: 'process-exit' }>;
  broken[lastServerExit] = { ...exit, code: 1 };
  const verdict = rejudge(broken, checkSceneRun);
  t.equal(verdict.status, 'fail');
  t.equal(verdict.findings[0]?.code, 'server-sigterm-status', 'the server’s own breach leads');
  t.equal(verdict.headline, verdict.findings[0]?.text);
  t.ok(
    verdict.findings.some((f) => f.code === 'missing-events'),
    'the probe’s store comes after it',
  );
});
