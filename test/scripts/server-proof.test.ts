// scripts/server-proof.mjs (make server-proof): each reference's batch counted per scenario, the
// table and the failures it prints, when the proof holds, and its variables refused by name.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const SCRIPT = resolve('scripts/server-proof.mjs');
const proof = await import(new URL('../../scripts/server-proof.mjs', import.meta.url).href);
const run = promisify(execFile);

const results = {
  runs: [
    { label: 'feed-server-reorg #1', scenario: 'feed-server-reorg', status: 'pass', runDir: 'r1', headline: '' },
    { label: 'feed-server-reorg #2', scenario: 'feed-server-reorg', status: 'pass', runDir: 'r2', headline: '' },
    { label: 'feed-server-slow-reader #1', scenario: 'feed-server-slow-reader', status: 'pass', runDir: 's1', headline: '' },
    { label: 'feed-server-slow-reader #2', scenario: 'feed-server-slow-reader', status: 'fail', runDir: 's2', headline: 'the probe: 15 events missing' },
  ],
  notStarted: [],
};

t.test('a batch is counted per scenario; each run that did not pass keeps its headline and report', async (t) => {
  const cells = proof.tally(results, 'reports/b');
  t.same([...cells.keys()].sort(), ['feed-server-reorg', 'feed-server-slow-reader']);
  t.same(cells.get('feed-server-reorg'), { runs: 2, passed: 2, failures: [] });
  t.same(cells.get('feed-server-slow-reader'), {
    runs: 2,
    passed: 1,
    failures: [{ label: 'feed-server-slow-reader #2', status: 'fail', headline: 'the probe: 15 events missing', report: 'reports/b/s2/report.html' }],
  });
  const interrupted = proof.tally({ runs: [], notStarted: [{ label: 'feed-server-reorg #2', scenario: 'feed-server-reorg' }] }, 'b');
  t.same(interrupted.get('feed-server-reorg'), {
    runs: 1,
    passed: 0,
    failures: [{ label: 'feed-server-reorg #2', status: 'not started', headline: 'an interrupt kept it from starting' }],
  });
});

t.test('the table: scenario x reference, a cell short of its runs in bold, then the failures with their reports', async (t) => {
  const rows = [
    { reference: 'typescript', cells: proof.tally({ runs: results.runs.slice(0, 3) }, 'ts') },
    { reference: 'python', cells: proof.tally(results, 'py') },
  ];
  const text: string = proof.renderProof({ rows, runs: 2, title: 'server-proof x', setup: 'setup line' });
  t.match(text, '| scenario | typescript | python |');
  t.match(text, '| feed-server-reorg | 2/2 | 2/2 |');
  t.match(text, '| feed-server-slow-reader | **1/1** | **1/2** |', 'TS ran it once of 2, Python passed it once of 2');
  t.match(text, '- python, feed-server-slow-reader #2: FAIL — the probe: 15 events missing\n  report: py/s2/report.html');
  t.notMatch(text, '- typescript', 'no failure listed for the reference whose runs all passed');
  t.equal(proof.allPassed(rows, 2), false);
  const green = [{ reference: 'typescript', cells: proof.tally({ runs: results.runs.slice(0, 2) }, 'ts') }];
  t.equal(proof.allPassed(green, 2), true, 'every scenario had its runs and passed them all');
  t.equal(proof.allPassed(green, 3), false, 'two runs are not the three owed');
  t.equal(proof.allPassed([], 2), false, 'no reference ran: nothing is proved');
  t.notMatch(proof.renderProof({ rows: green, runs: 2, title: 't', setup: 's' }), 'did not pass');
});

t.test('ONLY names scenarios with or without their prefix; the default is every feed-server-* scenario', async (t) => {
  t.same(proof.scenarioArgs(undefined), ['feed-server-*']);
  t.same(proof.scenarioArgs(['slow-reader', 'feed-server-reorg', 'two-*']), ['feed-server-slow-reader', 'feed-server-reorg', 'feed-server-two-*']);
  t.throws(() => proof.scenarioArgs(['x; rm -rf /']), /ONLY: "x; rm -rf \/" is not a server scenario/);
  t.same(proof.listOf(' a, ,b ', undefined), ['a', 'b']);
  t.equal(proof.listOf('', undefined), undefined);
  t.equal(proof.wholeOf('RUNS', undefined, 20, 1), 20);
  t.equal(proof.wholeOf('RUNS', '7', 20, 1), 7);
  t.throws(() => proof.wholeOf('RUNS', '0', 20, 1), /RUNS must be a whole number >= 1, not "0"/);
  t.throws(() => proof.wholeOf('HOG', '1.5', 0, 0), /HOG must be a whole number >= 0, not "1.5"/);
});

t.test('a mutant on its killer: caught only by a FAIL with a finding of its reason', async (t) => {
  const reason = /never sent reset slow-consumer/;
  const runs = [
    { label: 'k #1', status: 'fail', runDir: 'r1', headline: 'h', findings: [{ text: 'the client `slow` was never sent reset slow-consumer' }] },
    { label: 'k #2', status: 'fail', runDir: 'r2', headline: 'the probe lost 3', findings: [{ text: 'the probe lost 3' }] },
    { label: 'k #3', status: 'pass', runDir: 'r3', headline: 'delivered', findings: [] },
    { label: 'k #4', status: 'error', runDir: 'r4', headline: 'toxiproxy gone', findings: [], harnessErrors: ['never sent reset slow-consumer'] },
  ];
  const cell = proof.tallyCaught({ runs, notStarted: [{ label: 'k #5', scenario: 'k' }] }, reason, 'b');
  t.equal(cell.runs, 5);
  t.equal(cell.caught, 1, 'a FAIL for another reason, a PASS, an ERROR and a run not started are not caught');
  t.same(
    cell.missed.map((m: { label: string; status: string }) => [m.label, m.status]),
    [
      ['k #2', 'fail, for another reason'],
      ['k #3', 'pass'],
      ['k #4', 'error'],
      ['k #5', 'not started'],
    ],
  );
  const mutants = [
    { label: 'm (python)', killer: 'feed-server-k', cell },
    { label: 'n (typescript)', killer: 'feed-server-j', cell: { runs: 5, caught: 5, missed: [] } },
  ];
  const text: string = proof.renderCaught({ mutants, runs: 5 });
  t.match(text, '| m (python) | feed-server-k | **1/5** |');
  t.match(text, '| n (typescript) | feed-server-j | 5/5 |');
  t.match(text, '- m (python), k #3: PASS — delivered\n  report: b/r3/report.html');
  t.equal(proof.allCaught(mutants, 5), false);
  t.equal(proof.allCaught(mutants.slice(1), 5), true);
  t.equal(proof.allCaught(mutants.slice(1), 6), false, 'five runs are not the six owed');
  t.equal(proof.allCaught([{ label: 'x', killer: 'k' }], 5), false, 'a mutant whose batch was never read is not caught');
});

t.test('MUTANTS picks mutants by name, in the languages SERVERS names, once per killer ONLY names', async (t) => {
  const all = [
    {
      label: 'race (typescript)',
      language: 'typescript',
      command: 'ts-race',
      killer: 'feed-server-snapshot-race',
      reason: /a/,
      alsoCaughtBy: [{ killer: 'feed-server-snapshot-storm', reason: /b/ }],
    },
    {
      label: 'race (python)',
      language: 'python',
      command: 'py-race',
      killer: 'feed-server-snapshot-race',
      reason: /a/,
      alsoCaughtBy: [{ killer: 'feed-server-snapshot-storm', reason: /b/ }],
    },
    { label: 'deaf (python)', language: 'python', command: 'py-deaf', killer: 'feed-server-heartbeats', reason: /c/ },
  ];
  const python = [{ label: 'python' }];
  const both = [{ label: 'typescript' }, ...python];
  const pairs = (list: { label: string; killer: string }[]) => list.map((m) => `${m.label} on ${m.killer}`);
  t.same(proof.mutantsOf(all, undefined, both, ['feed-server-*']), [], 'no MUTANTS: no mutant');
  t.same(pairs(proof.mutantsOf(all, ['all'], python, ['feed-server-*'])), [
    'race (python) on feed-server-snapshot-race',
    'race (python) on feed-server-snapshot-storm',
    'deaf (python) on feed-server-heartbeats',
  ]);
  const storm = proof.mutantsOf(all, ['race'], both, ['feed-server-snapshot-storm']);
  t.same(pairs(storm), ['race (typescript) on feed-server-snapshot-storm', 'race (python) on feed-server-snapshot-storm']);
  t.same(storm[1].reason, /b/, 'the storm with its own reason');
  t.equal(storm[1].command, 'py-race');
  t.throws(() => proof.mutantsOf(all, ['race', 'sleepy'], both, ['feed-server-*']), /MUTANTS: no server mutant named sleepy \(the index has race, deaf\)/);
});

t.test('a bad variable: exit 2, named, before any run', async (t) => {
  for (const [env, named] of [
    [{ RUNS: 'many' }, /RUNS must be a whole number/],
    [{ SERVERS: 'go' }, /SERVERS: no reference named go \(the index has typescript, python\)/],
    [{ MUTANTS: 'no-such' }, /MUTANTS: no server mutant named no-such/],
    [{ MUTANTS: 'no-heartbeat', ONLY: 'reorg' }, /MUTANTS=no-heartbeat: no mutant left/],
    [{ REFERENCES: 'no' }, /REFERENCES=no without MUTANTS: nothing to prove/],
    [{ REFERENCES: 'maybe' }, /REFERENCES must be yes or no/],
  ] as const) {
    const out = t.testdir();
    const failed = await run(process.execPath, [SCRIPT], { env: { ...process.env, ...env, OUT: out } }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    t.equal(failed?.code, 2, `${JSON.stringify(env)}: exit 2`);
    t.match(failed?.stderr ?? '', named, `${JSON.stringify(env)}: named`);
  }
});
