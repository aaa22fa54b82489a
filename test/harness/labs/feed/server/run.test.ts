// The server run (feed-server-snapshot-race), in this process so that its process model and its
// checker count for coverage: the reference server as a process passes; the snapshot-then-subscribe
// mutant is caught with the events it lost named; a server that exits at once, or never listens,
// is a prompt failure naming it; --server and --consumer on the wrong kind of scenario are refused;
// nothing the runs started is left running.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import type { JournalEntry } from '../../../../../harness/record/journal.js';
import { programsUnderTest, runScenario } from '../../../../../harness/run/runner.js';
import { loadScenario } from '../../../../../harness/catalogue/load.js';
import { survivors } from '../../../../helpers/cli.js';

t.setTimeout(600_000);
// Two at a time: the mutant waits out its converge_ms and the silent server the contract's 10 s;
// each run has its own server, probes, proxy and ports (unsealed: no uid slot is shared).
t.jobs = 2;

const ROOT = join(import.meta.dirname, '../../../../..');
const scenario = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-server-snapshot-race.yaml'));
const MUTANT = 'node dist/publisher/feed/mutants/snapshot-then-subscribe.js';

const run = async (t: Test, server?: string) => {
  const journal: JournalEntry[] = [];
  const result = await runScenario({
    scenario,
    cwd: ROOT,
    reportsDir: t.testdir(),
    seal: 'off',
    ...(server ? { serverCommand: server } : {}),
    onJournal: (entry) => journal.push(entry),
  });
  t.same(survivors(journal), [], 'no server, probe or toxiproxy process left');
  t.notOk(
    journal.some((e) => e.type === 'proxy' && e.action === 'create') && !journal.some((e) => e.type === 'proxy' && e.action === 'remove'),
    'the probe proxy was removed',
  );
  return { result, journal };
};

t.test('the reference server, as a process, passes the snapshot race', async (t) => {
  const { result, journal } = await run(t);
  t.equal(result.status, 'pass', `${result.verdict?.headline ?? result.error}\n${JSON.stringify(result.verdict?.findings, null, 1)}`);
  const start = journal.find((e) => e.type === 'run-start');
  t.match(start, { serverCommand: /dist\/publisher\/feed\/server\/main\.js/ }, 'the run-start names the server under test');
  const server = journal.find((e) => e.type === 'process-start' && e.role === 'server');
  t.match(server, { env: { CHAOSLAB_FAULT: 'stop@snapshot:1', CHAOSLAB_OUTBOX_DB: /outbox\.db$/ } });
  t.ok(
    journal.some((e) => e.type === 'process-stopped' && e.role === 'server'),
    'the server stopped itself at its snapshot hook',
  );
  t.ok(
    journal.some((e) => e.type === 'fault' && e.name === 'commit-while-stopped'),
    'blocks were committed while it was stopped',
  );
  t.match(
    journal.find((e) => e.type === 'process-exit' && e.role === 'server'),
    { code: 0, stderrTail: /feed server listening/ },
    'exit 0 on SIGTERM, its stderr captured',
  );
  t.match(result.verdict?.headline, /blocks 11\.\.13 \(committed while the server was stopped after the snapshot\) included/);
  // Its store, written on a tmpfs while the run went on (harness/sandbox/scratch-stores.ts), is kept in the run folder.
  const probeStart = journal.find((e) => e.type === 'process-start' && e.role === 'control');
  const written = probeStart?.type === 'process-start' ? probeStart.env.CHAOSLAB_DB : undefined;
  t.type(written, 'string', 'the probe was started with a store');
  t.not(written, join(result.runDir, 'probe.db'), 'the probe wrote its store elsewhere');
  t.match(
    journal.find((e) => e.type === 'stream' && e.stream === 'probe'),
    { db: join(result.runDir, 'probe.db') },
    'the journal names the kept store',
  );
  t.ok(existsSync(join(result.runDir, 'probe.db')), 'the probe’s store is in the run folder');
  t.notOk(existsSync(dirname(written ?? '')), 'its scratch folder is gone');
  const summary = readFileSync(join(result.runDir, 'summary.md'), 'utf8');
  t.match(summary, /- server under test: `node .*main\.js'?`/);
  t.match(summary, /- probes: `node .*client\.js'?`/);
});

t.test('the snapshot-then-subscribe mutant loses the events committed in the race', async (t) => {
  const { result } = await run(t, MUTANT);
  t.equal(result.status, 'fail');
  const first = result.verdict?.findings[0];
  t.equal(first?.code, 'lost-in-snapshot-race');
  t.match(
    first?.text,
    /the probe's store misses \d+ events? committed while the server was stopped after the snapshot \(blocks 11\.\.13\): 1:00000000000011:0000/,
  );
  t.ok(
    first?.subject?.cursors?.every((c) => /^1:0000000000001[1-3]:/.test(c)),
    'its subject is the lost cursors',
  );
  t.ok(
    result.verdict?.findings.some((f) => f.code === 'wrong-balance'),
    'the balances show it too',
  );
  const summary = readFileSync(join(result.runDir, 'summary.md'), 'utf8');
  t.match(summary, /re-run by hand: .*chaoslab run feed-server-snapshot-race --server 'node dist\/publisher\/feed\/mutants\/snapshot-then-subscribe\.js'/);
});

t.test('a server that exits at once is a prompt failure naming it', async (t) => {
  const from = Date.now();
  const { result } = await run(t, 'echo "no outbox for me" >&2; exit 3');
  t.equal(result.status, 'fail');
  t.match(
    result.verdict?.headline,
    /the server under test \(`echo .*exit 3`\) exited with status 3 .* before the run was over; nothing asked it to end \(its stderr: "no outbox for me"\)/,
  );
  t.ok(Date.now() - from < 60_000, 'no wait for the listen limit or the deadline');
});

t.test("a server that never listens is killed after the contract's 10 s and named", async (t) => {
  const { result } = await run(t, 'sleep 600');
  t.equal(result.status, 'fail');
  t.equal(result.verdict?.findings[0]?.code, 'server-not-listening');
  t.match(result.verdict?.headline, /did not listen on its CHAOSLAB_HOST:CHAOSLAB_PORT within 10 s/);
});

t.test('--server on a consumer scenario and --consumer on a server scenario are refused', async (t) => {
  const consumerScenario = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-happy-path.yaml'));
  t.throws(() => programsUnderTest(consumerScenario, { serverCommand: 'x' }), /feed-happy-path tests a consumer, not a push server/);
  t.throws(() => programsUnderTest(scenario, { consumerCommand: 'x' }), /tests a push server .* give the server with --server, not --consumer/);
  t.equal(programsUnderTest(consumerScenario, {}), undefined);
  t.match(programsUnderTest(scenario, {}), /main\.js/);
  await t.rejects(runScenario({ scenario, cwd: ROOT, reportsDir: t.testdir(), seal: 'off', consumerCommand: 'x' }), /give the server with --server/);
});
