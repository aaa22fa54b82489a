// Issue 3's proof, in `make test`, for each lab: the references pass, and every mutant passes
// the happy path (a near miss) and is caught by its designated killer for the reason
// consumer/<lab>/mutants/index.yaml names; and for every one of those runs, the console line,
// summary.md, junit.xml and report.html agree with the verdict.
// - ledger: the quick matrix, both languages (references against every scenario; its runs take
//   a second or two);
// - feed: the killers-only matrix, TypeScript (the references against the happy path and the
//   killers): a feed run is seconds of real time, scripted, so the whole feed matrix belongs to
//   `make mutants`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { labNamed } from '../../harness/labs/registry.js';
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
    rows: { consumer: string; kind: string; ok: boolean; note: string; cells: { scenario: string; status: string }[] }[];
    agreement: { runs: number; disagreements: { label: string; problems: string[] }[] };
  };
  const rows = matrix.rows;
  t.equal(matrix.lab, lab);
  const index = parse(readFileSync(labNamed(lab)!.mutantIndex, 'utf8')) as Index;
  const mutants = (index.mutants ?? []).flatMap((m) => m.languages.filter((l) => !language || l === language).map((l) => ({ ...m, language: l })));
  t.equal(rows.filter((r) => r.kind === 'mutant').length, mutants.length, `every mutant${language ? ` in ${language}` : ' in every language'}`);
  t.ok(mutants.length > 0, 'the lab has mutants');
  const scenarios = readdirSync(labNamed(lab)!.scenariosDir).filter((f) => f.endsWith('.yaml')).length;
  const judged = new Set([labNamed(lab)!.happyPath, ...mutants.map((m) => m.killer)]).size;
  const referenceRuns = args.includes('--killers') ? judged : scenarios;
  for (const row of rows) {
    t.ok(row.ok, `${row.consumer}: ${row.note}`);
    // Packet-loss scenarios are skipped where runs cannot be sealed (not root): never failed.
    if (row.kind === 'reference')
      t.equal(
        row.cells.filter((c) => c.status === 'pass' || c.status === 'skipped').length,
        referenceRuns,
        `${row.consumer} passes all ${referenceRuns} scenarios`,
      );
    else t.match(row.note, /^caught by /, `${row.consumer} is caught, not just failing`);
  }
  const runs = rows.reduce((n, r) => n + r.cells.length, 0);
  t.equal(matrix.agreement.runs, runs, 'agreement was checked for every run');
  t.same(matrix.agreement.disagreements, [], 'console, summary.md, junit.xml and report.html agree with every verdict');
  t.match(result.stdout, new RegExp(`${lab}: reports agree with the verdict in ${runs} of ${runs} runs`));
  t.equal(result.exitCode, 0, `exit 0\n${result.stdout.slice(-3000)}`);
  t.match(result.stdout, /\n\d+ passed, 0 failed$/);
}

t.test('ledger: quick mutant matrix, both languages', (t) => matrix(t, 'ledger', ['--quick', '--jobs', '2'], 'ledger-mutants-quick'));

// Feed runs mostly wait on their script's real time, so three at a time cost little CPU.
t.test('feed: killers-only mutant matrix, TypeScript', (t) =>
  matrix(t, 'feed', ['--killers', '--language', 'typescript', '--jobs', '3'], 'feed-mutants-killers-typescript', 'typescript'),
);
