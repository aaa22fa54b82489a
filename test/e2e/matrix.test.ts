// Issue 3's proof, in `make test`: both reference consumers pass the whole catalogue, and every
// mutant passes happy-path (a near miss) and is caught by its designated killer for the reason
// consumer/ledger/mutants/index.yaml names; and for every one of those runs, the console line,
// summary.md, junit.xml and report.html agree with the verdict. `make mutants` runs the full matrix.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chaoslab } from '../helpers/cli.js';

// Six minutes on a quiet CI machine; a loaded one (another suite, a CPU hog) can take twice that or more.
t.setTimeout(1_500_000);

t.test('quick mutant matrix: references pass everything, every mutant is caught for its reason', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['mutants', '--quick', '--jobs', '2', '--reports', reports], { timeout: 1_480_000 });
  const batch = readdirSync(reports).find((d) => d.includes('ledger-mutants-quick'));
  t.ok(batch, 'a matrix folder was written');
  const matrix = JSON.parse(readFileSync(join(reports, batch!, 'matrix.json'), 'utf8')) as {
    lab: string;
    rows: { consumer: string; kind: string; ok: boolean; note: string; cells: { scenario: string; status: string }[] }[];
    agreement: { runs: number; disagreements: { label: string; problems: string[] }[] };
  };
  const rows = matrix.rows;
  t.equal(matrix.lab, 'ledger');
  const index = readFileSync(join(process.cwd(), 'consumer', 'ledger', 'mutants', 'index.yaml'), 'utf8');
  const mutantNames = [...index.matchAll(/^ {2}- name: ([a-z-]+)\n {4}languages/gm)].map((m) => m[1]);
  t.equal(rows.filter((r) => r.kind === 'mutant').length, mutantNames.length * 2, 'every mutant in both languages');
  const scenarios = readdirSync(join(process.cwd(), 'scenarios', 'ledger')).filter((f) => f.endsWith('.yaml')).length;
  for (const row of rows) {
    t.ok(row.ok, `${row.consumer}: ${row.note}`);
    // Packet-loss scenarios are skipped where runs cannot be sealed (not root): never failed.
    if (row.kind === 'reference')
      t.equal(row.cells.filter((c) => c.status === 'pass' || c.status === 'skipped').length, scenarios, `${row.consumer} passes all ${scenarios} scenarios`);
    else t.match(row.note, /^caught by /, `${row.consumer} is caught, not just failing`);
  }
  const runs = rows.reduce((n, r) => n + r.cells.length, 0);
  t.equal(matrix.agreement.runs, runs, 'agreement was checked for every run');
  t.same(matrix.agreement.disagreements, [], 'console, summary.md, junit.xml and report.html agree with every verdict');
  t.match(result.stdout, new RegExp(`ledger: reports agree with the verdict in ${runs} of ${runs} runs`));
  t.equal(result.exitCode, 0, `exit 0\n${result.stdout.slice(-3000)}`);
  t.match(result.stdout, /\n\d+ passed, 0 failed$/);
});
