// Each lab's process model, run in this process (unsealed) so its code counts for coverage:
// the end-to-end files (test/e2e/) drive the CLI as a child and count for nothing. A crash
// scenario per lab walks the paths a happy path never takes (crash hooks, restarts, the
// independent mid-run reads), and the reference consumer must pass it.
import t from 'tap';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { runScenario } from '../../../harness/run/runner.js';
import { resolveScenario } from '../../../harness/catalogue/catalogue.js';
import { loadScenario } from '../../../harness/catalogue/load.js';
import { scenariosDir } from '../../../harness/base/paths.js';

t.setTimeout(600_000);

const exits = (journal: readonly JournalEntry[]) => journal.filter((e) => e.type === 'process-exit');

for (const [name, crashes] of [
  ['ack-crash', 1],
  ['feed-crash-apply', 2],
] as const) {
  t.test(`${name}: the reference consumer passes, run in process`, async (t) => {
    const journal: JournalEntry[] = [];
    const result = await runScenario({
      scenario: loadScenario(resolveScenario(name, scenariosDir)),
      cwd: process.cwd(),
      reportsDir: t.testdir(),
      seal: 'off',
      onJournal: (entry) => journal.push(entry),
    });
    t.equal(result.status, 'pass', `${name} passes: ${result.verdict?.headline ?? result.error}`);
    t.same(result.verdict?.findings, [], 'no finding');
    t.same(result.verdict?.harnessErrors, [], 'no harness error');
    t.match(journal.at(-1), { type: 'run-end', status: 'pass' }, 'the journal ends with the run');
    const incarnations = new Set(exits(journal).flatMap((e) => (e.type === 'process-exit' && e.role === 'consumer' ? [e.incarnation] : [])));
    t.ok(incarnations.size > crashes, `the consumer was crashed ${crashes} time(s) and restarted each time (${incarnations.size} processes)`);
  });
}
