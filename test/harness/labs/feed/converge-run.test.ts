// The wait for convergence ends once nothing can change the consumer's store and the control
// holds the chain's end: a consumer that exits at every start has used up its restarts; a store at
// the chain's end that does not match it has held still for a second. The run then goes on to its
// verdict instead of waiting out converge_ms (here 10 minutes, so a run that waited would outlast
// this test's timeout).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTLED_MS } from '../../../../harness/labs/feed/run/converge.js';
import t, { type Test } from 'tap';
import { loadScenario } from '../../../../harness/catalogue/load.js';
import type { JournalEntry } from '../../../../harness/record/journal.js';
import { runScenario } from '../../../../harness/run/runner.js';
import { survivors } from '../../../helpers/cli.js';

t.setTimeout(180_000);

/** The scenario's text run unsealed against `consumerCommand`, with every journal entry. */
async function runUnsealed(t: Test, text: string, consumerCommand: string) {
  const dir = t.testdir();
  const file = join(dir, `${/^name: (.+)$/m.exec(text)![1]}.yaml`);
  writeFileSync(file, text);
  const journal: JournalEntry[] = [];
  const result = await runScenario({
    scenario: loadScenario(file),
    cwd: process.cwd(),
    reportsDir: join(dir, 'reports'),
    seal: 'off',
    consumerCommand,
    onJournal: (e) => journal.push(e),
  });
  return { result, journal };
}

/** From the wait's first read to the SIGTERM that ends the run (a read equal to the last journaled is not journaled again). */
function waitLasted(journal: readonly JournalEntry[]): number {
  const first = journal.find((e) => e.type === 'store-read' && e.when === 'converging');
  const end = journal.find((e) => e.type === 'fault' && e.name === 'end-of-run-control');
  return first && end ? end.t - first.t : Number.NaN;
}

const SCENARIO = [
  'name: exits-at-every-start',
  'description: Virtual time runs 10 times faster than real time. A consumer that exits at once, three times, and a wait for convergence far longer than the test.',
  'protocol: feed',
  'deadline_ms: 700000',
  'time_scale: 0.1',
  'chain:',
  '  seed: 17',
  '  block_interval_ms: 2500',
  'time:',
  '  duration_ms: 20000',
  '  converge_ms: 600000',
  'consumer:',
  '  topics: [0, 2]',
  '  restart: { max: 3 }',
  '',
].join('\n');

t.test('a consumer whose restarts are used up: the wait ends when the control holds the chain’s end', async (t) => {
  const { result, journal } = await runUnsealed(t, SCENARIO, 'node -e "process.exit(3)"');
  t.equal(result.status, 'fail', result.verdict?.headline ?? result.error ?? '');
  t.equal(journal.filter((e) => e.type === 'process-start' && e.role === 'consumer').length, 3, 'three consumer processes, then no more');
  t.ok(
    journal.some((e) => e.type === 'store-read' && e.when === 'converging'),
    'the wait for convergence read the stores',
  );
  const waited = waitLasted(journal);
  t.ok(waited < 60_000, `the wait ended long before converge_ms (600 s): it lasted ${Math.round(waited)} ms`);
  t.notOk(
    result.verdict?.findings.some((f) => /control consumer's store did not reach/.test(f.text)),
    'the control reached the chain’s end before the wait ended',
  );
  t.same(survivors(journal), [], 'nothing the run started is left running');
});

// feed-big-amounts with a wait for convergence of 10 minutes: the float-amounts mutant applies
// every event (its cursor reaches the chain's end) with balances rounded through a double.
const BIG_AMOUNTS = [
  'name: big-amounts-long-wait',
  'description: Virtual time runs 50 times faster than real time. Amounts above 2^53 and a wait for convergence far longer than the test.',
  'protocol: feed',
  'deadline_ms: 700000',
  'time_scale: 0.02',
  'chain:',
  '  seed: 17',
  '  accounts: 6',
  '  confirmations: 3',
  '  block_interval_ms: 2500',
  '  logs_per_block: { min: 1, max: 3 }',
  '  initial_blocks: 10',
  'time:',
  '  duration_ms: 40000',
  '  converge_ms: 600000',
  'consumer:',
  '  topics: [0, 2, 3]',
  '',
].join('\n');

t.test('a store at the chain’s end that does not match it: the wait ends once it has held still', async (t) => {
  const { result, journal } = await runUnsealed(t, BIG_AMOUNTS, `node ${join(import.meta.dirname, '../../../../dist/consumer/feed/mutants/float-amounts.js')}`);
  t.equal(result.status, 'fail', result.verdict?.headline ?? result.error ?? '');
  t.equal(result.verdict?.findings[0]?.code, 'imprecise-balance', 'the cause leads, as after a full wait');
  const waited = waitLasted(journal);
  t.ok(
    waited >= SETTLED_MS && waited < 60_000,
    `the wait ended long before converge_ms (600 s), once the store held still: it lasted ${Math.round(waited)} ms`,
  );
  t.match(
    result.verdict?.findings.find((f) => f.code === 'not-converged')?.text,
    /the consumer's store stands at the chain's end \(cursor [0-9:]+\) but does not match the chain/,
  );
  t.same(survivors(journal), [], 'nothing the run started is left running');
});
