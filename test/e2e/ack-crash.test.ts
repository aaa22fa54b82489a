// The walking skeleton end to end: the real CLI, the real Toxiproxy, real consumer processes,
// real SQLite files. ack-crash must pass both reference consumers and catch the mutant.
import { readdirSync } from 'node:fs';
import t from 'tap';
import { chaoslab, onlyRun, survivors } from '../helpers/cli.js';

t.setTimeout(300_000);

const consumers = [
  { name: 'TypeScript reference', args: [] },
  { name: 'Python reference', args: ['--consumer', 'python3 consumer/ledger/python/client.py'] },
];

for (const consumer of consumers) {
  t.test(`ack-crash passes the ${consumer.name}`, async (t) => {
    const reports = t.testdir();
    const result = await chaoslab(['run', 'ack-crash', '--reports', reports, ...consumer.args]);
    t.equal(result.exitCode, 0, `exit 0\n${result.stdout}\n${result.stderr}`);
    t.match(result.stdout, /PASS {2}ack-crash/);
    const { journal } = onlyRun(reports);
    const acks = (conn: number) =>
      journal.filter((e) => e.type === 'wire' && e.stream === 'consumer' && e.conn === conn && e.kind === 'recv').map((e) => (e as { line: string }).line);
    t.same(acks(1), ['RESUME -1\n', 'ACK 0\n'], 'first process: RESUME -1, ACK 0, no ACK 1');
    t.same(acks(2), ['RESUME 1\n', 'ACK 1\n', 'ACK 2\n'], 'second process: RESUME 1, ACK 1, ACK 2');
    const sent2 = journal
      .filter((e) => e.type === 'wire' && e.stream === 'consumer' && e.conn === 2 && e.kind === 'send')
      .map((e) => (e as { line: string }).line);
    t.same(sent2, ['EVENT 1 5\n', 'EVENT 2 -3\n'], 'the publisher resent 1, then sent 2');
    const final = journal.find((e) => e.type === 'store-read' && e.role === 'consumer' && e.when === 'final');
    t.match(final, { db: /\/rooms\/consumer\/consumer\.db$/ }, "the consumer's database is in its own room");
    t.match(final, {
      store: {
        checkpoint: [{ id: 1, last: 2, total: 9 }],
        ledger: [
          [0, 7],
          [1, 5],
          [2, -3],
        ],
      },
    });
    const exits = journal.filter((e) => e.type === 'process-exit' && e.role === 'consumer').map((e) => (e as { code: number }).code);
    t.same(exits, [86, 0]);
    t.same(survivors(journal), [], 'no consumer, control or toxiproxy process left');
  });
}

t.test('ack-crash catches the ack-before-commit mutant and names the seq', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'ack-crash', '--reports', reports, '--consumer', 'node dist/consumer/ledger/mutants/ack-before-commit.js']);
  t.equal(result.exitCode, 1, 'exit 1 = the consumer failed');
  t.match(result.stdout, /FAIL {2}ack-crash/);
  t.match(result.stdout, /incarnation 1 sent ACK 1 .*written before seq 1 was committed/);
  const { journal } = onlyRun(reports);
  t.match(
    journal.find((e) => e.type === 'verdict'),
    { verdict: { status: 'fail', findings: [{ code: 'ack-before-commit', subject: { seqs: [1] } }] } },
  );
  t.same(survivors(journal), []);
});

t.test('usage and scenario errors exit 2 and run nothing', async (t) => {
  const dir = t.testdir({
    reports: {},
    'bad.yaml': 'name: bad\ndescription: x\nevents:\n  deltas: [1, 2]\nconsumer:\n  incarnations:\n    - fault: "exit@ack"\n',
  });
  const reports = `${dir}/reports`;
  const unknown = await chaoslab(['run', 'no-such-scenario', '--reports', reports]);
  t.equal(unknown.exitCode, 2);
  t.equal(unknown.stderr, 'chaoslab: unknown scenario "no-such-scenario" (see `chaoslab list`)', 'one line, not every name');
  const typo = await chaoslab(['run', 'ack-crsh', '--reports', reports]);
  t.equal(typo.stderr, 'chaoslab: unknown scenario "ack-crsh" (did you mean "ack-crash"?)', 'the suggestion only');
  const invalid = await chaoslab(['run', `${dir}/bad.yaml`, '--reports', reports]);
  t.equal(invalid.exitCode, 2);
  t.match(invalid.stderr, /bad\.yaml:7:\d+: consumer\.incarnations\[0\]\.fault/);
  const usage = await chaoslab(['run']);
  t.equal(usage.exitCode, 2);
  t.same(readdirSync(reports), [], 'no run folder was created');
});

t.test('a consumer command that does not exist fails the run with its stderr, not the harness', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'ack-crash', '--no-seal', '--reports', reports, '--consumer', 'no-such-consumer-binary']);
  t.equal(result.exitCode, 1);
  const { journal } = onlyRun(reports);
  const exit = journal.find((e) => e.type === 'process-exit' && e.role === 'consumer');
  t.match(exit, { code: 127, stderrTail: /not found/ });
  t.same(survivors(journal), []);
});
