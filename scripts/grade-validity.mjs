// `make grade-validity [LAB=ledger|feed] [JOBS=N] [MATRIX=<matrix.json>] [ONLY=a,b] [RUBRIC=<file>] [OUT=<dir>]`:
// the validity proof of `chaoslab grade` (harness/grade/validity/proof.ts). A class of the lab's
// references and mutants, graded twice with the lab's rubric, against the full mutant matrix
// (run here, or MATRIX=). Prints a table and a one-line verdict.
// Exit 0 valid, 1 not valid, 2 not judged or could not run.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { exitStatusOf } from '../dist/harness/grade/validity/compare.js';
import { ProofError, proveValidity } from '../dist/harness/grade/validity/proof.js';

const USAGE =
  'usage: node scripts/grade-validity.mjs [--lab ledger|feed] [--jobs N] [--matrix <matrix.json>] [--only mutant,mutant] [--rubric <file>] [--reruns N] [--out <dir>] [--quiet]';
let values;
try {
  ({ values } = parseArgs({
    options: {
      lab: { type: 'string', default: 'ledger' },
      jobs: { type: 'string', default: '2' },
      matrix: { type: 'string' },
      only: { type: 'string' },
      rubric: { type: 'string' },
      reruns: { type: 'string', default: '10' },
      out: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    },
  }));
} catch (error) {
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const jobs = Number(values.jobs);
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error(`--jobs must be a whole number >= 1, not ${values.jobs}\n${USAGE}`);
  process.exit(2);
}
const reruns = Number(values.reruns);
if (!Number.isInteger(reruns) || reruns < 0) {
  console.error(`--reruns must be a whole number >= 0, not ${values.reruns}\n${USAGE}`);
  process.exit(2);
}
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
const out = values.out || join('reports', `grade-validity-${values.lab}-${stamp}`);
const only = values.only
  ? values.only
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean)
  : undefined;
console.log(`grade validity: lab ${values.lab}, ${jobs} jobs, into ${out}${only ? `, mutants ${only.join(', ')} only` : ''}`);
try {
  const validity = await proveValidity({
    lab: values.lab,
    jobs,
    out,
    reruns,
    ...(values.matrix ? { matrix: values.matrix } : {}),
    ...(only ? { only } : {}),
    ...(values.rubric ? { rubric: values.rubric } : {}),
    echo: !values.quiet,
    log: (line) => console.log(line),
  });
  console.log(`details: ${join(out, 'validity.md')}`);
  process.exitCode = exitStatusOf(validity);
} catch (error) {
  console.error(`grade validity: COULD NOT RUN — ${error instanceof ProofError ? error.message : (error?.stack ?? error)}`);
  process.exitCode = 2;
}
