// Issue 3's proof, in `make test`, for each lab: the references pass the happy path and every
// killer, and each killer catches a mutant built for it, for the reason
// consumer/<lab>/mutants/index.yaml names; and for every one of those runs, the console line,
// summary.md, junit.xml and report.html agree with the verdict. One mutant per killer (the first
// the index lists for it), one run each (--catches): a second mutant of the same killer proves the
// same scenario again at the cost of a whole run (four restart storms, two reorganisations). That
// each mutant misbehaves as its index says is its direct test's half
// (test/consumer/<lab>/mutants.test.ts); every mutant on its killer, the references against every
// scenario and every mutant against every scenario are `make mutants`.
// Both labs with their TypeScript consumers only: a killer judges what crossed the wire and what
// the store holds, not the language that wrote it. That each Python mutant misbehaves as its
// TypeScript twin does is its direct test's (both languages); the Python references run end to
// end in ack-crash, sealed, chaos and feed.test.ts, and against every scenario in `make mutants`.
// (Both languages cost the ledger 46 runs here instead of 23: 79 s of a chain's 459 s on a slow
// machine.) The feed's push servers are not run here: every server mutant is caught by its
// killer, with the reference passing it, in the server scenes' own tests (SERVER_SCENE_TESTS
// below), which check what each run did and not only its verdict.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { labNamed } from '../../harness/labs/registry.js';
import { chaoslab } from '../helpers/cli.js';

// Six minutes each on a quiet CI machine; a loaded one (another suite, a CPU hog) can take twice that or more.
t.setTimeout(3_000_000);

interface Mutant {
  name: string;
  languages: string[];
  killer: string;
}
const mutantsOf = (indexFile: string): Mutant[] => (parse(readFileSync(indexFile, 'utf8')) as { mutants: Mutant[] | null }).mutants ?? [];

/** The first mutant the index lists for each killer. */
const onePerKiller = (mutants: Mutant[]): Mutant[] => mutants.filter((m, i) => mutants.findIndex((o) => o.killer === m.killer) === i);

async function matrix(t: Test, lab: string, args: string[], folder: string, language?: string): Promise<void> {
  const reports = t.testdir();
  const theLab = labNamed(lab)!;
  const all = mutantsOf(theLab.mutantIndex);
  const chosen = onePerKiller(all);
  const names = chosen.map((m) => m.name).join(',');
  const result = await chaoslab(['mutants', '--lab', lab, '--program', 'consumer', '--mutant', names, ...args, '--reports', reports], { timeout: 1_480_000 });
  const batch = readdirSync(reports).find((d) => d.includes(folder));
  t.ok(batch, `a matrix folder ${folder} was written`);
  const matrix = JSON.parse(readFileSync(join(reports, batch!, 'matrix.json'), 'utf8')) as {
    lab: string;
    rows: { consumer: string; kind: string; program?: string; ok: boolean; note: string; cells: { scenario: string; status: string }[] }[];
    agreement: { runs: number; disagreements: { label: string; problems: string[] }[] };
  };
  const rows = matrix.rows;
  t.equal(matrix.lab, lab);
  t.same(
    rows.filter((r) => (r.program ?? 'consumer') !== 'consumer').map((r) => r.consumer),
    [],
    'consumers only',
  );
  const mutants = chosen.flatMap((m) => m.languages.filter((l) => !language || l === language).map((l) => ({ ...m, language: l })));
  t.equal(rows.filter((r) => r.kind === 'mutant').length, mutants.length, `one mutant per killer${language ? ` in ${language}` : ' in every language'}`);
  t.equal(new Set(chosen.map((m) => m.killer)).size, new Set(all.map((m) => m.killer)).size, `all ${chosen.length} killers`);
  const referenceRuns = new Set([theLab.happyPath, ...chosen.map((m) => m.killer)]).size;
  for (const row of rows) {
    t.ok(row.ok, `${row.consumer}: ${row.note}`);
    // Packet-loss scenarios are skipped where runs cannot be sealed (not root): never failed.
    if (row.kind === 'reference')
      t.equal(
        row.cells.filter((c) => c.status === 'pass' || c.status === 'skipped').length,
        referenceRuns,
        `${row.consumer} passes all ${referenceRuns} scenarios`,
      );
    else {
      t.match(row.note, /^caught by /, `${row.consumer} is caught, not just failing`);
      t.same(
        row.cells.map((c) => c.scenario),
        [mutants.find((m) => row.consumer === `${m.name} (${m.language})`)?.killer],
        `${row.consumer}: its killer only`,
      );
    }
  }
  const runs = rows.reduce((n, r) => n + r.cells.length, 0);
  t.equal(matrix.agreement.runs, runs, 'agreement was checked for every run');
  t.same(matrix.agreement.disagreements, [], 'console, summary.md, junit.xml and report.html agree with every verdict');
  t.match(result.stdout, new RegExp(`${lab}: reports agree with the verdict in ${runs} of ${runs} runs`));
  t.equal(result.exitCode, 0, `exit 0\n${result.stdout.slice(-3000)}`);
  t.match(result.stdout, /\n\d+ passed, 0 failed$/);
}

t.test('ledger: every killer catches its mutant, TypeScript', (t) =>
  matrix(t, 'ledger', ['--catches', '--language', 'typescript', '--jobs', '2'], 'ledger-mutants-catches-typescript-some', 'typescript'),
);

// Feed runs mostly wait on their script's real time, so three at a time cost little CPU.
t.test('feed: every killer catches its mutant, TypeScript', (t) =>
  matrix(t, 'feed', ['--catches', '--language', 'typescript', '--jobs', '3'], 'feed-mutants-catches-typescript-some', 'typescript'),
);

// The files where each server mutant is caught by its killer, the reference passing the same scene.
const SERVER_SCENE_TESTS = ['test/harness/labs/feed/server/scenes.test.ts', 'test/e2e/feed-server-clients.test.ts', 'test/e2e/feed-server.test.ts'];

t.test('feed: every server mutant is caught by its killer in a server scene test', async (t) => {
  const root = join(import.meta.dirname, '../..');
  const texts = SERVER_SCENE_TESTS.map((file) => readFileSync(join(root, file), 'utf8'));
  for (const m of mutantsOf(labNamed('feed')!.server!.mutantIndex)) {
    const where = texts.findIndex((text) => (text.includes(`mutants/${m.name}.js`) || text.includes(`'${m.name}'`)) && text.includes(`'${m.killer}`));
    t.ok(where >= 0, `${m.name} is run on ${m.killer}${where >= 0 ? ` in ${SERVER_SCENE_TESTS[where]}` : ''}`);
  }
});
