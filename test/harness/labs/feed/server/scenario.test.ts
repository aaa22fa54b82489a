// The `server.under_test` key: the shipped scenario loads into a server plan, and each mistake
// is named at its field: blocks the script does not mine, blocks without the probe's events,
// keys a server scenario does not take, a fault the server contract's grammar refuses.
import path from 'node:path';
import t, { type Test } from 'tap';
import { FEED_SCENARIO_HEAD as HEAD } from '../../../../helpers/feed-lab.js';
import { loadScenario, ScenarioError, type ScenarioProblem } from '../../../../../harness/catalogue/load.js';
import type { FeedPlan } from '../../../../../harness/labs/feed/scenario/plan.js';
import { testsServer } from '../../../../../harness/labs/registry.js';

const ROOT = path.resolve(import.meta.dirname, '../../../../..');

function problemsOf(t: Test, lines: string[]): ScenarioProblem[] {
  const dir = t.testdir({ 's.yaml': ['name: s', ...lines, ''].join('\n') });
  try {
    loadScenario(path.join(dir, 's.yaml'));
  } catch (error) {
    if (error instanceof ScenarioError) return error.problems;
    throw error;
  }
  t.fail('loaded, but it should not have');
  return [];
}

t.test('feed-server-snapshot-race is a server scenario with its defaults filled', async (t) => {
  const s = loadScenario(path.join(ROOT, 'scenarios', 'feed', 'feed-server-snapshot-race.yaml'));
  t.same((s.lab as FeedPlan).serverUnderTest, { fault: 'stop@snapshot:1', blocksWhileStopped: 3, pollMs: 50, clients: [] });
  t.ok(testsServer(s));
  t.notOk(testsServer(loadScenario(path.join(ROOT, 'scenarios', 'feed', 'feed-happy-path.yaml'))));
});

t.test('mistakes are named at their field', async (t) => {
  const under = (...lines: string[]) => [...HEAD, 'server:', '  under_test:', ...lines.map((l) => `    ${l}`)];
  const fields = (p: ScenarioProblem[]) => p.map((x) => `${x.field}: ${x.message}`).join('\n');
  t.match(
    fields(problemsOf(t, under('fault: stop@snapshot:1', 'blocks_while_stopped: 40'))),
    /server\.under_test\.blocks_while_stopped: the script mines blocks 9\.\.28: at most 20/,
  );
  t.match(fields(problemsOf(t, under('fault: stop@snapshot:0'))), /server\.under_test\.fault: must look like <exit\|stop>@<snapshot\|event\|revoke>:<n>/);
  t.match(fields(problemsOf(t, under('fault: exit@snapshot:1'))), /server\.under_test\.fault: only `stop@` hooks are run so far/);
  t.match(fields(problemsOf(t, under('blocks_while_stopped: 2'))), /server\.under_test\.blocks_while_stopped: needs a `stop@` hook/);
  t.match(fields(problemsOf(t, [...under('fault: stop@snapshot:1'), 'faults: []', 'expect: { processes: 1 }'])), /expect: leave it out/);
  // Seed 17 with 0..4 logs a block and two of six accounts followed: some script blocks hold none of theirs.
  t.match(fields(problemsOf(t, under('fault: stop@snapshot:1', 'blocks_while_stopped: 20'))), /holds? no event for the followed accounts/);
});

t.test('clients and the memory bound: planned with their defaults, mistakes named at their field', async (t) => {
  const s = loadScenario(path.join(ROOT, 'scenarios', 'feed', 'feed-server-heartbeats.yaml'));
  t.same((s.lab as FeedPlan).serverUnderTest?.clients, [
    { name: 'silent', kind: 'half-open', quiet: true },
    { name: 'pinger', kind: 'pinger', quiet: true },
  ]);
  const slow = loadScenario(path.join(ROOT, 'scenarios', 'feed', 'feed-server-slow-reader.yaml'));
  t.equal((slow.lab as FeedPlan).serverUnderTest?.maxRssGrowthBytes, 32 * 1024 * 1024);
  t.equal(slow.socketBufferBytes, 4096);
  const under = (...lines: string[]) => [...HEAD, 'server:', '  under_test:', ...lines.map((l) => `    ${l}`)];
  const fields = (p: ScenarioProblem[]) => p.map((x) => `${x.field}: ${x.message}`).join('\n');
  t.match(
    fields(problemsOf(t, under('clients:', '  - { name: a, kind: garbage }', '  - { name: a, kind: pinger }'))),
    /server\.under_test\.clients\[1\]\.name: client name "a" is taken by clients\[0\]/,
  );
  t.match(
    fields(problemsOf(t, under('clients:', '  - { name: a, kind: pinger, reads_per_second: 5 }'))),
    /server\.under_test\.clients\[0\]\.reads_per_second: only a slow-reader takes reads_per_second \(this client is pinger\)/,
  );
  t.match(fields(problemsOf(t, under('clients:', '  - { name: a, kind: sleepy }'))), /server\.under_test\.clients\[0\]\.kind/);
  t.match(fields(problemsOf(t, under('clients:', '  - { name: A, kind: pinger }'))), /server\.under_test\.clients\[0\]\.name/);
  t.match(fields(problemsOf(t, under('max_rss_growth_mib: 0'))), /server\.under_test\.max_rss_growth_mib/);
});
