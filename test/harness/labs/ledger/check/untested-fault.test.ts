// A fault whose effect is taken away, end to end: `duplicate-delivery` run for real with the
// reference consumer, once as written and once with its duplicate moved to a connection the
// consumer never opens (so the publisher never sends it). The second run is an ERROR naming the
// duplicate, never a PASS, and the duplicate's coverage row falls.
import t from 'tap';
import { coverageRows, UNTESTED } from '../../../../../harness/findings/coverage.js';
import { resolveScenario } from '../../../../../harness/catalogue/catalogue.js';
import { loadScenario } from '../../../../../harness/catalogue/load.js';
import { scenariosDir } from '../../../../../harness/base/paths.js';
import type { LedgerPlan } from '../../../../../harness/labs/ledger/scenario/load.js';
import { runScenario } from '../../../../../harness/run/runner.js';
import type { Scenario } from '../../../../../harness/scenario/types.js';

t.setTimeout(120_000);

const run = (scenario: Scenario, reportsDir: string) => runScenario({ scenario, cwd: process.cwd(), reportsDir, seal: 'off' });

t.test('a duplicate that never reaches the consumer leaves duplicate-delivery untested', async (t) => {
  const written = loadScenario(resolveScenario('duplicate-delivery', scenariosDir)) as Scenario<LedgerPlan>;
  const met = await run(written, t.testdir());
  t.equal(met.status, 'pass', `as written it passes: ${met.verdict?.headline ?? met.error}`);
  t.match(met.verdict?.coverage, [{ kind: 'duplicate', took: true, how: /^EVENT 3 reached process 1 on connection 1 twice/ }]);

  // The same duplicate on connection 2, and no ACK list that would miss its second ACK: only the
  // duplicate's effect is gone, the consumer does everything right.
  const lab = written.lab;
  const removed: Scenario<LedgerPlan> = {
    ...written,
    lab: { ...lab, publisher: { ...lab.publisher, misbehaviour: [{ action: 'duplicate', seq: 3, connection: 2 }] }, expect: {} },
  };
  const unmet = await run(removed, t.testdir());
  t.equal(unmet.status, 'error', `without its effect it is an ERROR: ${unmet.verdict?.headline ?? unmet.error}`);
  t.same(unmet.verdict?.findings, [], 'the consumer itself did nothing wrong');
  t.match(unmet.verdict?.harnessErrors, [
    {
      code: UNTESTED,
      text: /^untested: the duplicate of EVENT 3 reached no consumer: connection 2 never opened .* \(fault "duplicate at EVENT 3 on connection 2"\)/,
    },
  ]);
  t.match(unmet.verdict?.headline, /^untested: the duplicate of EVENT 3 reached no consumer/);

  const [row] = coverageRows([met.verdict?.coverage ?? [], unmet.verdict?.coverage ?? []]);
  t.same(row, { kind: 'duplicate', drawn: 2, tookEffect: 1, runsDrawn: 2, runsMet: 1 }, 'the row counts the run whose duplicate reached nobody');
});
