// The feed lab's part of a scenario file: the shipped scenarios load into the plan the run uses,
// a minimal file gets every default, and every mistake is reported at its line with its field.
// Also the chain script itself: the run and the checker drive two chains through the same steps
// and must get the same chain.
import path from 'node:path';
import { FEED_SCENARIO_HEAD as HEAD } from '../../../helpers/feed-lab.js';
import t, { type Test } from 'tap';
import { SimChain } from '../../../../publisher/feed/chain/chain.js';
import { ChainScript, chainConfig, confirmationBlocks, lastEventOf, simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import { parseFaultPlan } from '../../../../harness/labs/feed/scenario/fault-plan.js';
import { HALF_OPEN_SLACK_MS } from '../../../../harness/labs/feed/check/half-open.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import { feedLab } from '../../../../harness/labs/feed/index.js';
import { labNamed } from '../../../../harness/labs/registry.js';
import { listScenarios } from '../../../../harness/catalogue/catalogue.js';
import { loadScenario as loadAny, type Scenario, ScenarioError, type ScenarioProblem } from '../../../../harness/catalogue/load.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const SCENARIOS = path.join(ROOT, 'scenarios', 'feed');
const load = (file: string): Scenario<FeedPlan> => loadAny(file) as Scenario<FeedPlan>;

const fileText = (name: string, lines: string[]) => [`name: ${name}`, ...lines, ''].join('\n');

function write(t: Test, name: string, lines: string[]): string {
  const dir = t.testdir({ [`${name}.yaml`]: fileText(name, lines) });
  return path.join(dir, `${name}.yaml`);
}

function problemsOf(t: Test, file: string): ScenarioProblem[] {
  try {
    load(file);
  } catch (error) {
    if (error instanceof ScenarioError) return error.problems;
    throw error;
  }
  t.fail(`${file} loaded, but it should not have`);
  return [];
}

interface Want {
  line: number;
  field: string;
  message: RegExp;
}

/** Writes a bad file and checks exactly these problems, each at its line and field. */
function bad(t: Test, name: string, lines: string[], want: Want[]): void {
  const problems = problemsOf(t, write(t, name, lines));
  t.equal(problems.length, want.length, `${want.length} problem(s): ${JSON.stringify(problems, null, 1)}`);
  for (const [i, w] of want.entries()) {
    const p = problems[i];
    if (!p) continue;
    t.equal(p.line, w.line, `line of ${w.field}`);
    t.equal(p.field, w.field, 'names the field');
    t.match(p.message, w.message);
  }
}

t.test('the feed lab is registered, after the ledger lab', async (t) => {
  t.equal(labNamed('feed'), feedLab);
  t.equal(feedLab.happyPath, 'feed-happy-path');
  t.match(feedLab.referenceCommand, /^node '.*\/dist\/consumer\/feed\/typescript\/client\.js'$/);
  t.match(feedLab.mutantIndex, /consumer\/feed\/mutants\/index\.yaml$/);
});

t.test('the shipped feed scenarios load and are listed under the feed lab', async (t) => {
  const listed = listScenarios(path.join(ROOT, 'scenarios')).filter((s) => s.lab === 'feed');
  t.same(
    listed.map((s) => s.name),
    [
      'feed-acceptance',
      'feed-acceptance-loss',
      'feed-bad-environment-backoff',
      'feed-bad-environment-no-client',
      'feed-bad-environment-port',
      'feed-bad-environment-topics',
      'feed-bad-frame-malformed-cursor',
      'feed-bad-frame-missing-field',
      'feed-bad-frame-noncanonical-amount',
      'feed-bad-frame-not-json',
      'feed-bad-frame-number-amount',
      'feed-bad-frame-oversized',
      'feed-big-amounts',
      'feed-canonical-while-away',
      'feed-crash-apply',
      'feed-crash-commit',
      'feed-crash-revoke',
      'feed-crash-snapshot',
      'feed-cut-30s',
      'feed-deep-reorg',
      'feed-half-open',
      'feed-happy-path',
      'feed-mid-transaction-visibility',
      'feed-quiet-account',
      'feed-reorg',
      'feed-reorg-while-away',
      'feed-resend-after-reconnect',
      'feed-restart-storm',
      'feed-server-bad-clients',
      'feed-server-fanout',
      'feed-server-happy-path',
      'feed-server-heartbeats',
      'feed-server-reorg',
      'feed-server-restart',
      'feed-server-sigterm',
      'feed-server-slow-reader',
      'feed-server-snapshot-race',
      'feed-server-snapshot-storm',
      'feed-server-stale-cursor',
      'feed-server-two-instances',
      'feed-slow-reader',
      'feed-stale-cursor',
      'feed-unknown-op',
    ],
  );
  for (const s of listed) {
    const scenario = load(s.file);
    t.equal(scenario.protocol, 'feed', `${s.name} speaks feed`);
    t.match(scenario.description, /[Vv]irtual time runs/, `${s.name} says what its virtual time stands for`);
    // Every shipped scenario fits in about 30 s of real time, convergence and SIGTERM included.
    t.ok(scenario.lab.time.scriptMs <= 20_000, `${s.name}: the script takes ${scenario.lab.time.scriptMs} ms`);
  }
});

t.test('feed-cut-30s: a 30 s cut of virtual time with 12 events in it', async (t) => {
  const s = load(path.join(SCENARIOS, 'feed-cut-30s.yaml'));
  const cut = s.faults.find((f) => f.name === 'cut-30s')!;
  t.same(cut.effect, { kind: 'proxy-down' });
  t.same(cut.start, { kind: 'point', point: 'before_block', value: 22 });
  t.same(cut.end, { kind: 'point', point: 'before_block', value: 34 });
  const blocks = 34 - 22;
  t.equal(blocks * s.lab.chain.blockIntervalMs, 30_000, '12 blocks of 2.5 s: 30 s of virtual time');
  t.equal(blocks * s.lab.time.blockPeriodMs, 600, 'which is 600 ms of real time at time_scale 0.02');
  const sim = simulate(s.lab.chain, s.lab.topicIndexes);
  const during = sim.events.filter((e) => {
    const block = Number(e.cursor.split(':')[1]);
    return block >= 22 && block < 34;
  });
  t.equal(during.length, 12, 'the followed accounts have 12 events in the blocks mined during the cut');
});

/** Blocks of the simulated events for the scenario's followed accounts. */
const eventBlocks = (s: Scenario<FeedPlan>): number[] => simulate(s.lab.chain, s.lab.topicIndexes).events.map((e) => Number(e.cursor.split(':')[1]));

t.test('expect.quiet_ping: only the acceptance scenes wait for the closing ping (never-pongs must pass the happy path)', async (t) => {
  const quiet = listScenarios(path.join(ROOT, 'scenarios'))
    .filter((s) => s.lab === 'feed')
    .filter((s) => (load(s.file).lab as FeedPlan).expect.quietPing)
    .map((s) => s.name);
  t.same(quiet, ['feed-acceptance', 'feed-acceptance-loss']);
});

t.test('feed-stale-cursor and feed-quiet-account: 3 h away, a 1 h window, an active and a quiet account', async (t) => {
  for (const name of ['feed-stale-cursor', 'feed-quiet-account']) {
    const s = load(path.join(SCENARIOS, `${name}.yaml`));
    const away = s.faults.find((f) => f.name === 'away-3h')!;
    t.same(away.effect, { kind: 'proxy-down' }, name);
    t.same(
      [away.start, away.end],
      [
        { kind: 'point', point: 'before_block', value: 13 },
        { kind: 'point', point: 'before_block', value: 49 },
      ],
    );
    t.equal((49 - 13) * s.lab.chain.blockIntervalMs, 3 * 3_600_000, `${name}: 36 blocks of 5 min, 3 h of virtual time`);
    t.equal(s.lab.chain.retentionMs, 3_600_000, `${name}: a 1 h window`);
  }
  // Stale: its accounts have events inside the away stretch that retention deletes before it is back.
  const stale = eventBlocks(load(path.join(SCENARIOS, 'feed-stale-cursor.yaml')));
  t.ok(
    stale.some((b) => b >= 13 && b <= 48 - 12),
    'events of the followed accounts more than 1 h behind the head on return',
  );
  // Quiet: what its description says of account 9 of seed 192.
  const quiet = eventBlocks(load(path.join(SCENARIOS, 'feed-quiet-account.yaml')));
  const between = (lo: number, hi: number) => quiet.filter((b) => b >= lo && b <= hi).length;
  t.same([between(8, 12), between(13, 48), between(49, 55)], [2, 0, 3], '2 logs in blocks 8..12, none in 13..48, 3 in 49..55');
});

t.test('feed-half-open: timeout toxics both ways, longer than the consumer needs to notice', async (t) => {
  const s = load(path.join(SCENARIOS, 'feed-half-open.yaml'));
  const toxics = s.faults.filter((f) => f.effect.kind === 'toxic');
  t.same(
    toxics.map((f) => f.effect),
    [
      { kind: 'toxic', toxic: 'timeout', stream: 'downstream', attributes: { timeout: 0 } },
      { kind: 'toxic', toxic: 'timeout', stream: 'upstream', attributes: { timeout: 0 } },
    ],
  );
  const realMs = (40 - 16) * s.lab.time.blockPeriodMs;
  t.equal(realMs, 6000, '24 blocks of 250 ms');
  const { idleMs, backoffCapMs } = s.lab.consumer;
  t.ok(realMs > idleMs + 1.5 * backoffCapMs + HALF_OPEN_SLACK_MS, 'long enough for the checker to expect a new connection');
  t.ok(s.lab.server.idleMs > realMs, "the server's own idle timeout does not end the stretch for the consumer");
});

t.test('feed-acceptance: latency, a starved link, the cut and resends, resolved', async (t) => {
  const s = load(path.join(SCENARIOS, 'feed-acceptance.yaml'));
  const effects = Object.fromEntries(s.faults.map((f) => [f.name, f.effect]));
  t.same(effects['latency-down'], { kind: 'toxic', toxic: 'latency', stream: 'downstream', attributes: { latency: 500, jitter: 50 } });
  t.same(effects['latency-up'], { kind: 'toxic', toxic: 'latency', stream: 'upstream', attributes: { latency: 500, jitter: 50 } });
  t.same(effects.starved, { kind: 'toxic', toxic: 'bandwidth', stream: 'downstream', attributes: { rate: 2 } });
  t.equal(s.lab.time.latencyMs, 1100, 'the worst round trip the toxics add');
  const sim = simulate(s.lab.chain, s.lab.topicIndexes);
  const firstAt = (block: number) => sim.produced.find((e) => Number(e.cursor.split(':')[1]) >= block)!.cursor;
  t.same(s.lab.server.misbehaviour, [
    { at: firstAt(15), action: 'resend', count: 3 },
    { at: firstAt(22), connection: 2, action: 'resend', count: 3 },
  ]);
  t.same(s.lab.server.anchors, ['block 15', 'block 22']);
});

t.test('feed-crash-apply: three processes, two crash hooks and a stop hook', async (t) => {
  const s = load(path.join(SCENARIOS, 'feed-crash-apply.yaml'));
  t.same(s.lab.consumer.processes, [{ fault: 'exit@apply:5' }, { fault: 'exit@commit:3' }, { fault: 'stop@apply:2' }]);
  t.same(s.lab.expect, { processes: 3, quietPing: false });
});

t.test('a minimal file gets every default', async (t) => {
  const s = load(write(t, 'minimal', HEAD));
  const sim = simulate(s.lab.chain, [0, 2]);
  t.same(s.lab, {
    chain: {
      seed: 17,
      chainId: 1,
      accounts: 6,
      confirmations: 3,
      blockIntervalMs: 2500,
      logsPerBlock: { min: 0, max: 4 },
      approvalShare: 0.1,
      initialBlocks: 8,
      lastBlock: 28,
      reorgs: [],
    },
    topics: sim.topics,
    topicIndexes: [0, 2],
    server: { queueLimit: 1000, pingMs: 1000, idleMs: 5000, misbehaviour: [], anchors: [] },
    consumer: {
      clientId: 'c1',
      pingMs: 2000,
      idleMs: 4000,
      backoffBaseMs: 100,
      backoffCapMs: 2000,
      applyDelayMs: 0,
      processes: [{}],
      restart: { max: 10, delayMs: 0 },
    },
    time: { durationMs: 50_000, blockPeriodMs: 250, scriptMs: 5750, convergeMs: 20_000, startMs: 20_000, latencyMs: 0 },
    expect: { quietPing: false },
  });
  t.equal(sim.topics.length, 2);
  for (const topic of sim.topics) t.match(topic, /^0x[0-9a-f]{40}$/);
});

t.test('mistakes name their line and field', async (t) => {
  t.test('unknown keys, missing keys, wrong types', async (t) => {
    bad(t, 'typo', [...HEAD, 'servr: {}'], [{ line: 12, field: 'servr', message: /unknown key.*server/ }]);
    bad(t, 'no-topics', [...HEAD.slice(0, -1), '  client_id: c9'], [{ line: 10, field: 'consumer.topics', message: /required/ }]);
    bad(
      t,
      'bad-fault',
      [...HEAD, '  processes:', '    - fault: "exit@apply:0"'],
      [{ line: 13, field: 'consumer.processes[0].fault', message: /n must be a number >= 1/ }],
    );
    bad(
      t,
      'bad-point',
      [...HEAD, '  processes:', '    - fault: "exit@ack:1"'],
      [{ line: 13, field: 'consumer.processes[0].fault', message: /point must be apply\|commit\|revoke\|snapshot/ }],
    );
  });

  t.test('the description must say what virtual time stands for', async (t) => {
    bad(t, 'no-virtual', ['description: A cut.', ...HEAD.slice(1)], [{ line: 2, field: 'description', message: /virtual time stands for/ }]);
  });

  t.test('the chain', async (t) => {
    bad(
      t,
      'logs',
      [...HEAD.slice(0, 6), '  logs_per_block: { min: 3, max: 1 }', ...HEAD.slice(6)],
      [{ line: 8, field: 'chain.logs_per_block.min', message: /must be <= max \(got min 3, max 1\)/ }],
    );
    bad(
      t,
      'topic',
      [...HEAD.slice(0, -1), '  topics: [0, 6]'],
      [{ line: 11, field: 'consumer.topics[1]', message: /the chain has accounts 0\.\.5 \(got 6\)/ }],
    );
    bad(
      t,
      'short',
      [...HEAD.slice(0, 7), '  duration_ms: 2000', ...HEAD.slice(8)],
      [{ line: 9, field: 'time.duration_ms', message: /at least one block interval/ }],
    );
    bad(
      t,
      'shallow',
      [...HEAD.slice(0, 6), '  reorgs:', '    - { after_block: 20, depth: 5 }', ...HEAD.slice(6)],
      [{ line: 9, field: 'chain.reorgs[0].depth', message: /depth 5 reaches the safe height \(confirmations: 3\).*deep: true/ }],
    );
    bad(
      t,
      'initial',
      [...HEAD.slice(0, 6), '  reorgs:', '    - { after_block: 5, depth: 2 }', ...HEAD.slice(6)],
      [{ line: 9, field: 'chain.reorgs[0].after_block', message: /the script mines blocks 9\.\.28 \(got 5\)/ }],
    );
    // Reorganisation 1 abandons 19..20 for 19..23: block 21 is never mined one by one.
    bad(
      t,
      'skipped',
      [...HEAD.slice(0, 6), '  reorgs:', '    - { after_block: 20, depth: 2, length: 5 }', '    - { after_block: 21, depth: 1 }', ...HEAD.slice(6)],
      [{ line: 10, field: 'chain.reorgs[1].after_block', message: /block 21 is never mined one by one.*mined blocks 19\.\.23/ }],
    );
    const deep = load(write(t, 'deep', [...HEAD.slice(0, 6), '  reorgs:', '    - { after_block: 20, depth: 6, deep: true }', ...HEAD.slice(6)]));
    t.same(deep.lab.chain.reorgs, [{ afterBlock: 20, depth: 6, length: 6, deep: true }], 'a deep reorganisation loads');
  });

  t.test('fault points and misbehaviour anchors the script reaches', async (t) => {
    bad(
      t,
      'points',
      [
        ...HEAD,
        'faults:',
        '  - { name: a, network: { down: true }, start: { before_block: 4 }, end: { before_block: 12 } }',
        '  - { name: b, network: { down: true }, start: { before_block: 40 } }',
        '  - { name: c, network: { down: true }, start: { before_reorg: 1 } }',
      ],
      [
        { line: 13, field: 'faults[0].start.before_block', message: /block 4 is an initial block/ },
        { line: 14, field: 'faults[1].start.before_block', message: /seq 40 is beyond the script/ },
        { line: 15, field: 'faults[2].start.before_reorg', message: /the script has 0 reorganisations \(got 1\)/ },
      ],
    );
    bad(
      t,
      'anchors',
      [
        ...HEAD.slice(0, 8),
        'server:',
        '  misbehave:',
        '    - { action: resend, event: 999 }',
        '    - { action: malformed, block: 3 }',
        '    - { action: stall, block: 12, count: 2 }',
        ...HEAD.slice(8),
      ],
      [
        { line: 12, field: 'server.misbehave[0].event', message: /the script produces \d+ events for the followed accounts \(got event 999\)/ },
        { line: 13, field: 'server.misbehave[1].block', message: /must be above initial_blocks \(8\)/ },
        { line: 14, field: 'server.misbehave[2].count', message: /only a resend takes `count`/ },
      ],
    );
  });

  t.test('misbehaviour from a connection on: from_connection, never beside connection', async (t) => {
    const server = (rules: string[]) => [...HEAD.slice(0, 8), 'server:', '  misbehave:', ...rules, ...HEAD.slice(8)];
    const good = load(write(t, 'from', server(['    - { action: stall, event: 2, from_connection: 2 }', '    - { action: resend, event: 2, connection: 3 }'])));
    t.same(
      good.lab.server.misbehaviour.map((r) => r.connection),
      [{ from: 2 }, 3],
      "from_connection becomes the publisher's { from }, connection stays a number",
    );
    bad(t, 'from-both', server(['    - { action: stall, event: 2, connection: 2, from_connection: 2 }']), [
      { line: 12, field: 'server.misbehave[0].from_connection', message: /give `connection` \(exactly that connection\) or `from_connection` .*not both/ },
    ]);
    bad(t, 'from-bad', server(['    - { action: stall, event: 2, from_connection: 0 }', '    - { action: stall, event: 2, from_connection: two }']), [
      { line: 12, field: 'server.misbehave[0].from_connection', message: /must be >= 1 \(got 0\)/ },
      { line: 13, field: 'server.misbehave[1].from_connection', message: /must be an integer/ },
    ]);
  });

  t.test('heartbeats, backoff and the deadline must fit together', async (t) => {
    bad(
      t,
      'idle',
      [...HEAD, '  idle_ms: 2000', 'faults:', '  - { name: slow, network: { toxic: latency, attributes: { latency: 500 } }, start: { incarnation: 1 } }'],
      [
        {
          line: 12,
          field: 'consumer.idle_ms',
          message: /idle_ms \(2000\) must be at least twice the server's ping_ms \(1000\) plus the worst downstream latency \(500 ms\)/,
        },
      ],
    );
    bad(
      t,
      'server-idle',
      [...HEAD, 'server:', '  idle_ms: 3000'],
      [{ line: 13, field: 'server.idle_ms', message: /server's idle_ms \(3000\) must be at least twice the consumer's ping_ms \(2000\)/ }],
    );
    bad(
      t,
      'backoff',
      [...HEAD, '  backoff_base_ms: 500', '  backoff_cap_ms: 400'],
      [{ line: 13, field: 'consumer.backoff_cap_ms', message: /must be at least backoff_base_ms \(500\)/ }],
    );
    bad(
      t,
      'restarts',
      [...HEAD, '  processes: [{}, {}, {}]', '  restart: { max: 2 }'],
      [{ line: 13, field: 'consumer.restart.max', message: /at least the number of listed processes, 3/ }],
    );
    bad(t, 'deadline', [...HEAD, 'deadline_ms: 10000'], [{ line: 12, field: 'deadline_ms', message: /killed at deadline_ms \(10000 ms\).*at least 30750/ }]);
  });
});

t.test('the CHAOSLAB_FAULT grammar, with its reasons', async (t) => {
  t.same(parseFaultPlan('exit@apply:3,stop@snapshot:1'), {
    ok: true,
    steps: [
      { action: 'exit', point: 'apply', n: 3 },
      { action: 'stop', point: 'snapshot', n: 1 },
    ],
  });
  const reasons: [string, RegExp][] = [
    ['', /empty/],
    ['exit@apply:1 ', /no spaces/],
    ['exit@apply:1,', /empty item/],
    ['exit@apply', /missing ":<n>"/],
    ['quit@apply:1', /action must be exit\|raise\|stop/],
    ['exit@ack:1', /point must be/],
    ['exit@apply:01', /leading zeros/],
  ];
  for (const [plan, reason] of reasons) {
    const r = parseFaultPlan(plan);
    t.notOk(r.ok, `${JSON.stringify(plan)} is refused`);
    if (!r.ok) t.match(r.reason, reason);
  }
});

t.test('the chain script: the run and the checker get the same chain', async (t) => {
  const s = load(path.join(SCENARIOS, 'feed-cut-30s.yaml'));
  const plan = { ...s.lab.chain, reorgs: [{ afterBlock: 30, depth: 2, length: 3, deep: false }] };
  // Drive a chain as the run does: the initial blocks, then step by step.
  const chain = new SimChain(chainConfig(plan));
  const script = new ChainScript(chain, plan);
  script.mineInitial();
  const steps: string[] = [];
  for (let step = script.next(); step; step = script.next()) {
    steps.push(step.kind === 'block' ? `b${step.number}` : `r${step.ordinal}`);
    script.perform(step);
  }
  t.same(steps.slice(18, 23), ['b29', 'b30', 'r1', 'b32', 'b33'], 'the reorganisation comes right after its block; its new branch moved the head to 31');
  const sim = simulate(plan, s.lab.topicIndexes);
  t.equal(sim.chain.head.hash, chain.head.hash, 'same head');
  t.equal(sim.headNumber, chain.head.number + plan.confirmations, 'confirmation blocks on top');
  const confirmations = confirmationBlocks(chain, chain.head, plan.confirmations);
  t.equal(sim.canonicalHash(chain.head.number + 1), confirmations[0]!.hash);
  t.same(confirmations[0]!.logs, [], 'confirmation blocks are empty');
  t.same(sim.reorgs, [{ ordinal: 1, afterBlock: 30, forkNumber: 29, headAfter: 31, deep: false }]);
  t.ok(
    sim.produced.some((e) => sim.events.every((c) => c.cursor !== e.cursor || c.payload.blockHash !== e.payload.blockHash)),
    'events of the abandoned blocks were produced but are not on the final chain',
  );
});

t.test("lastEventOf: the cursor of a commit's last event for the topics (the crowd's pace waits for it)", async (t) => {
  const chain = new SimChain({ seed: 7, accounts: 4 });
  let change = chain.mine();
  while (change.kind !== 'block' || change.block.logs.length < 2) change = chain.mine();
  const { block } = change;
  const cursorOf = (logIndex: number) => `${chain.chainId}:${String(block.number).padStart(14, '0')}:${String(logIndex).padStart(4, '0')}`;
  t.equal(lastEventOf(chain.chainId, change, chain.accounts), cursorOf(block.logs.at(-1)!.logIndex), 'every account followed: the last log');
  for (const account of chain.accounts) {
    const mine = block.logs.filter((l) => l.from === account || l.to === account);
    t.equal(lastEventOf(chain.chainId, change, [account]), mine.length ? cursorOf(mine.at(-1)!.logIndex) : undefined, `only ${account.slice(0, 8)}… followed`);
  }
  t.equal(lastEventOf(chain.chainId, change, ['0x' + '00'.repeat(20)]), undefined, 'none when the block holds no event of the topics');
});
