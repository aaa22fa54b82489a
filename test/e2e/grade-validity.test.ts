// The validity proof's comparison on a real class (`make grade-validity` does the same for every
// consumer of a lab against its full mutant matrix, which takes hours): three ledger submissions
// made by the proof's own class builder (the Python reference, no-dedupe in Python, gap-skip in
// TypeScript; YAML and JSON manifests), graded twice through the real CLI with a two-scenario
// rubric (one repeated twice, one shown after the due date), then judged against a small matrix: valid as the
// matrix says; with one cell flipped, not valid, naming that cell.
import { join } from 'node:path';
import t from 'tap';
import { validitySubmissions, writeValidityClass } from '../../harness/grade/validity/class-folder.js';
import { exitStatusOf, type MatrixFile } from '../../harness/grade/validity/compare.js';
import { judge } from '../../harness/grade/validity/proof.js';
import { renderTable } from '../../harness/grade/validity/render.js';
import { loadRubric } from '../../harness/grade/rubric.js';
import { labNamed } from '../../harness/labs/registry.js';
import { consumersNamed, loadMatrixConsumers } from '../../harness/run/mutants.js';
import { probeSealing } from '../../harness/sandbox/probe.js';
import { chaoslab, root } from '../helpers/cli.js';
import { fileTestdir, processesNamingSettled } from '../helpers/fixture.js';

t.setTimeout(300_000);
const probe = await probeSealing();
const sealFlags = probe.available ? [] : ['--unsealed'];

const dir = fileTestdir(t, import.meta.url, {
  'rubric.yaml': `lab: ledger
scenarios:
  - { name: duplicate-delivery, points: 2, repeat: 2, feedback: "§3: a duplicate is acknowledged, not applied" }
  - { name: gap, points: 1.5, visibility: after_due_date, feedback: "§3: a gap ends the session" }
`,
  out: {},
});
const rubric = loadRubric(join(dir, 'rubric.yaml'), ['ledger']);
const submissions = validitySubmissions(consumersNamed(loadMatrixConsumers(labNamed('ledger')!), ['gap-skip', 'no-dedupe']), root).filter((s) =>
  ['ref-python', 'gap-skip-ts', 'no-dedupe-py'].includes(s.name),
);
// What `chaoslab mutants` finds for these cells: each mutant fails its killer only.
const cells = (dup: string, gap: string) => [
  { scenario: 'duplicate-delivery', status: dup, reason: '' },
  { scenario: 'gap', status: gap, reason: '' },
];
const matrix: MatrixFile = {
  lab: 'ledger',
  rows: [
    { consumer: 'python', kind: 'reference', cells: cells('pass', 'pass') },
    { consumer: 'gap-skip (typescript)', kind: 'mutant', cells: cells('pass', 'fail') },
    { consumer: 'no-dedupe (python)', kind: 'mutant', cells: cells('fail', 'pass') },
  ],
};

t.test('graded twice, judged against the matrix: valid; one matrix cell flipped: not valid, naming it', async (t) => {
  t.same(
    submissions.map((s) => [s.name, s.manifest]),
    [
      ['ref-python', 'chaoslab.yaml'],
      ['no-dedupe-py', 'chaoslab.yaml'],
      ['gap-skip-ts', 'chaoslab.json'],
    ],
  );
  const classDir = join(dir, 'class');
  writeValidityClass(classDir, 'ledger', submissions);
  const dirs = [1, 2].map((i) => join(dir, `grade-${i}`));
  for (const out of dirs) {
    const r = await chaoslab(['grade', classDir, '--rubric', join(dir, 'rubric.yaml'), '--jobs', '2', '--out', out, ...sealFlags]);
    t.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
  }
  const valid = judge({ matrix, rubric, submissions, dirs, out: join(dir, 'out') });
  t.equal(valid.verdict, 'valid', renderTable(valid));
  t.same(
    valid.rows.map((r) => [r.submission, r.expected, r.totals]),
    [
      ['ref-python', 3.5, [3.5, 3.5]],
      ['no-dedupe-py', 1.5, [1.5, 1.5]],
      ['gap-skip-ts', 2, [2, 2]],
    ],
  );
  t.equal(exitStatusOf(valid), 0);

  // The matrix now says no-dedupe passed duplicate-delivery: the gradings' 0 no longer agrees.
  matrix.rows[2]!.cells[0]!.status = 'pass';
  const flipped = judge({ matrix, rubric, submissions, dirs, out: join(dir, 'out') });
  t.equal(flipped.verdict, 'not valid');
  t.equal(exitStatusOf(flipped), 1);
  t.equal(flipped.mismatches, 1);
  t.match(
    renderTable(flipped),
    /\nDIFFERS no-dedupe-py × duplicate-delivery: grading 1 gave 0 \(0 of 4 runs passed\), the matrix says 2; grading 2 gave 0 \(0 of 4 runs passed\), the matrix says 2\n/,
  );
  t.same(await processesNamingSettled(dir), [], 'nothing of the gradings is left running');
});
