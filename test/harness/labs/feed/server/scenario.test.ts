// The `server.under_test` key: the shipped scenario loads into a server plan, and each mistake
// is named at its field: blocks the script does not mine, blocks without the probe's events,
// keys a server scenario does not take, a fault the server contract's grammar refuses, subscribers
// that would go on subscribing after the script.
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
    { name: 'silent', kind: 'half-open', quiet: true, instance: 1 },
    { name: 'pinger', kind: 'pinger', quiet: true, instance: 1 },
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

t.test('a scene (instances, probes, steps) loads into its plan; the shipped ones load', async (t) => {
  const s = loadScenario(path.join(ROOT, 'scenarios', 'feed', 'feed-server-two-instances.yaml'));
  t.same((s.lab as FeedPlan).serverUnderTest?.scene, {
    instances: 2,
    probes: [
      { instance: 1, store: 'empty' },
      { instance: 1, store: 'empty' },
      { instance: 2, store: 'empty' },
    ],
    steps: [
      { beforeBlock: 14, action: { kind: 'repoint', probe: 1, to: 2 } },
      { beforeBlock: 14, action: { kind: 'repoint', probe: 2, to: 2 } },
      { beforeBlock: 14, action: { kind: 'kill', instance: 1 } },
    ],
  });
  for (const name of ['stale-cursor', 'reorg', 'restart', 'sigterm']) {
    const scene = (loadScenario(path.join(ROOT, 'scenarios', 'feed', `feed-server-${name}.yaml`)).lab as FeedPlan).serverUnderTest?.scene;
    t.ok(scene && scene.steps.length > 0, `feed-server-${name} has its steps`);
  }
  t.same(
    (loadScenario(path.join(ROOT, 'scenarios', 'feed', 'feed-server-stale-cursor.yaml')).lab as FeedPlan).serverUnderTest?.scene?.probes.map((p) => p.store),
    ['empty', 'other-chain'],
  );
});

t.test('scene mistakes are named at their field', async (t) => {
  const under = (...lines: string[]) => [...HEAD, 'server:', '  under_test:', ...lines.map((l) => `    ${l}`)];
  const fields = (p: ScenarioProblem[]) => p.map((x) => `${x.field}: ${x.message}`).join('\n');
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12 }]'))),
    /server\.under_test\.steps\[0\]: a step needs one action: kill, sigterm, start, stop, cont, away, back, repoint/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12, kill: 1, away: 1 }]'))),
    /server\.under_test\.steps\[0\]\.away: one action per step \(this one has kill and away\)/,
  );
  t.match(fields(problemsOf(t, under('steps: [{ before_block: 12, repoint: 1 }]'))), /server\.under_test\.steps\[0\]\.repoint: `repoint` needs `to`/);
  t.match(fields(problemsOf(t, under('steps: [{ before_block: 12, kill: 1, to: 1 }]'))), /server\.under_test\.steps\[0\]\.to: `to` goes only with `repoint`/);
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12, kill: 2 }]'))),
    /server\.under_test\.steps\[0\]\.kill: there is 1 instance \(instances: 1\); got 2/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 5, kill: 1 }]'))),
    /server\.under_test\.steps\[0\]\.before_block: the script mines blocks 9\.\.28; got 5/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 14, kill: 1 }, { before_block: 12, start: 1 }]'))),
    /server\.under_test\.steps\[1\]\.before_block: steps go in block order: this one is before block 12, the one above before block 14/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12, start: 1 }]'))),
    /server\.under_test\.steps\[0\]\.start: instance 1 is already running at this point/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12, kill: 1 }, { before_block: 13, sigterm: 1 }]'))),
    /server\.under_test\.steps\[1\]\.sigterm: instance 1 is not running at this point: start it first/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12, stop: 1 }, { before_block: 13, stop: 1 }]'))),
    /server\.under_test\.steps\[1\]\.stop: instance 1 is already stopped at this point: `cont` it first/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12, cont: 1 }]'))),
    /server\.under_test\.steps\[0\]\.cont: instance 1 is not stopped at this point/,
  );
  t.match(
    fields(problemsOf(t, under('instances: 2', 'clients: [{ name: a, kind: garbage, instance: 3 }]'))),
    /server\.under_test\.clients\[0\]\.instance: there are 2 server instances; got 3/,
  );
  t.match(fields(problemsOf(t, under('steps: [{ before_block: 12, back: 1 }]'))), /server\.under_test\.steps\[0\]\.back: probe 1 is not away at this point/);
  t.match(fields(problemsOf(t, under('probes: [{ instance: 2 }]'))), /server\.under_test\.probes\[0\]\.instance: there is 1 instance; got 2/);
  t.match(fields(problemsOf(t, under('probes: [{ store: other }]'))), /server\.under_test\.probes\[0\]\.store/);
  t.match(
    fields(problemsOf(t, under('fault: stop@snapshot:1', 'instances: 2'))),
    /server\.under_test\.fault: a scene \(instances, probes, steps\) takes no `fault` hook yet/,
  );
  t.match(
    fields(problemsOf(t, under('steps: [{ before_block: 12, repoint: 3, to: 1 }]'))),
    /server\.under_test\.steps\[0\]\.repoint: there are 1 probes \(1\.\.1\); got 3/,
  );
});

t.test('subscribers: the storm loads with them; too many, too slow, or none counted is named at its field', async (t) => {
  const storm = loadScenario(path.join(ROOT, 'scenarios', 'feed', 'feed-server-snapshot-storm.yaml'));
  t.same((storm.lab as FeedPlan).serverUnderTest?.subscribers, { count: 80, everyMs: 40 });
  t.equal(storm.socketBufferBytes, 4096);
  const under = (...lines: string[]) => [...HEAD, 'server:', '  under_test:', ...lines.map((l) => `    ${l}`)];
  const fields = (p: ScenarioProblem[]) => p.map((x) => `${x.field}: ${x.message}`).join('\n');
  // HEAD's script: 20 blocks of 250 ms, 5 s of real time.
  t.same(
    (loadScenario(path.join(t.testdir({ 's.yaml': ['name: s', ...under('subscribers: { count: 3 }'), ''].join('\n') }), 's.yaml')).lab as FeedPlan)
      .serverUnderTest?.subscribers,
    {
      count: 3,
      everyMs: 50,
    },
  );
  t.match(
    fields(problemsOf(t, under('subscribers: { count: 11, every_ms: 500 }'))),
    /server\.under_test\.subscribers\.every_ms: 11 subscribers 500 ms apart would go on subscribing after the script is over \(it takes 5000 ms of real time\)/,
  );
  t.match(fields(problemsOf(t, under('subscribers: { every_ms: 5 }'))), /server\.under_test\.subscribers.*count/);
  t.match(fields(problemsOf(t, under('subscribers: { count: 0 }'))), /server\.under_test\.subscribers\.count/);
});
