// Issue 3's proof, in `make test`, for each lab: the references pass the happy path and every
// killer, and every mutant is caught by its designated killer for the reason
// consumer/<lab>/mutants/index.yaml names; and for every one of those runs, the console line,
// summary.md, junit.xml and report.html agree with the verdict. One run per mutant (--catches):
// that each mutant passes the happy path (a near miss) is its unit test's half
// (test/consumer/<lab>/mutants.test.ts), and the references against every scenario and every
// mutant against every scenario are `make mutants`.
// - ledger: both languages;
// - feed: TypeScript, consumers and servers (publisher/feed/mutants/index.yaml against the
//   feed-server-* scenarios): a feed run is seconds of real time, scripted.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { loadLabScenarios } from '../../harness/catalogue/catalogue.js';
import { labNamed, testsServer } from '../../harness/labs/registry.js';
import { chaoslab } from '../helpers/cli.js';

// Six minutes each on a quiet CI machine; a loaded one (another suite, a CPU hog) can take twice that or more.
t.setTimeout(3_000_000);

interface Index {
  references: { name: string }[];
  mutants: { name: string; languages: string[]; killer: string }[] | null;
}

async function matrix(t: Test, lab: string, args: string[], folder: string, language?: string): Promise<void> {
  const reports = t.testdir();
  const result = await chaoslab(['mutants', '--lab', lab, ...args, '--reports', reports], { timeout: 1_480_000 });
  const batch = readdirSync(reports).find((d) => d.includes(folder));
  t.ok(batch, `a matrix folder ${folder} was written`);
  const matrix = JSON.parse(readFileSync(join(reports, batch!, 'matrix.json'), 'utf8')) as {
    lab: string;
    rows: { consumer: string; kind: string; program?: string; ok: boolean; note: string; cells: { scenario: string; status: string }[] }[];
    agreement: { runs: number; disagreements: { label: string; problems: string[] }[] };
  };
  const rows = matrix.rows;
  t.equal(matrix.lab, lab);
  const theLab = labNamed(lab)!;
  const every = loadLabScenarios(theLab.scenariosDir);
  // The consumer matrix, and the server matrix of a lab with a push server under test (rows marked `program: server`).
  const programs = [
    { program: 'consumer', index: theLab.mutantIndex, happyPath: theLab.happyPath, scenarios: every.filter((s) => !testsServer(s)).length },
    ...(theLab.server
      ? [{ program: 'server', index: theLab.server.mutantIndex, happyPath: theLab.server.happyPath, scenarios: every.filter((s) => testsServer(s)).length }]
      : []),
  ];
  for (const p of programs) {
    const mine = rows.filter((r) => (r.program ?? 'consumer') === p.program);
    const index = parse(readFileSync(p.index, 'utf8')) as Index;
    const mutants = (index.mutants ?? []).flatMap((m) => m.languages.filter((l) => !language || l === language).map((l) => ({ ...m, language: l })));
    t.equal(mine.filter((r) => r.kind === 'mutant').length, mutants.length, `every ${p.program} mutant${language ? ` in ${language}` : ' in every language'}`);
    t.ok(mutants.length > 0, `the lab has ${p.program} mutants`);
    const judged = new Set([p.happyPath, ...mutants.map((m) => m.killer)]).size;
    const referenceRuns = judged;
    for (const row of mine) {
      t.ok(row.ok, `${p.program} ${row.consumer}: ${row.note}`);
      // Packet-loss scenarios are skipped where runs cannot be sealed (not root): never failed.
      if (row.kind === 'reference')
        t.equal(
          row.cells.filter((c) => c.status === 'pass' || c.status === 'skipped').length,
          referenceRuns,
          `${p.program} ${row.consumer} passes all ${referenceRuns} scenarios`,
        );
      else {
        t.match(row.note, /^caught by /, `${p.program} ${row.consumer} is caught, not just failing`);
        t.same(
          row.cells.map((c) => c.scenario),
          [mutants.find((m) => row.consumer === `${m.name} (${m.language})`)?.killer],
          `${p.program} ${row.consumer}: its killer only`,
        );
      }
    }
  }
  const runs = rows.reduce((n, r) => n + r.cells.length, 0);
  t.equal(matrix.agreement.runs, runs, 'agreement was checked for every run');
  t.same(matrix.agreement.disagreements, [], 'console, summary.md, junit.xml and report.html agree with every verdict');
  t.match(result.stdout, new RegExp(`${lab}: reports agree with the verdict in ${runs} of ${runs} runs`));
  t.equal(result.exitCode, 0, `exit 0\n${result.stdout.slice(-3000)}`);
  t.match(result.stdout, /\n\d+ passed, 0 failed$/);
}

t.test('ledger: every mutant caught, both languages', (t) => matrix(t, 'ledger', ['--catches', '--jobs', '2'], 'ledger-mutants-catches'));

// Feed runs mostly wait on their script's real time, so three at a time cost little CPU.
t.test('feed: every mutant caught, TypeScript', (t) =>
  matrix(t, 'feed', ['--catches', '--language', 'typescript', '--jobs', '3'], 'feed-mutants-catches-typescript', 'typescript'),
);
