// The wait for convergence ends once nothing can change the consumer's store: a consumer that
// exits at every start has used up its restarts, and once the control holds the chain's end the
// run goes on to its verdict instead of waiting out converge_ms (here 10 minutes, so a run that
// waited would outlast this test's timeout).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadScenario } from '../../../../harness/catalogue/load.js';
import type { JournalEntry } from '../../../../harness/record/journal.js';
import { runScenario } from '../../../../harness/run/runner.js';
import { survivors } from '../../../helpers/cli.js';

t.setTimeout(180_000);

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
  const dir = t.testdir();
  writeFileSync(join(dir, 'exits-at-every-start.yaml'), SCENARIO);
  const journal: JournalEntry[] = [];
  const result = await runScenario({
    scenario: loadScenario(join(dir, 'exits-at-every-start.yaml')),
    cwd: process.cwd(),
    reportsDir: join(dir, 'reports'),
    seal: 'off',
    consumerCommand: 'node -e "process.exit(3)"',
    onJournal: (e) => journal.push(e),
  });
  t.equal(result.status, 'fail', result.verdict?.headline ?? result.error ?? '');
  t.equal(journal.filter((e) => e.type === 'process-start' && e.role === 'consumer').length, 3, 'three consumer processes, then no more');
  const converging = journal.filter((e) => e.type === 'store-read' && e.when === 'converging');
  t.ok(converging.length > 0, 'the wait for convergence read the stores');
  const waited = converging.at(-1)!.t - converging[0]!.t;
  t.ok(waited < 60_000, `the wait ended long before converge_ms (600 s): it lasted ${Math.round(waited)} ms`);
  t.notOk(
    result.verdict?.findings.some((f) => /control consumer's store did not reach/.test(f.text)),
    'the control reached the chain’s end before the wait ended',
  );
  t.same(survivors(journal), [], 'nothing the run started is left running');
});
