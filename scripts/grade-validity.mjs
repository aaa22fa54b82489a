// `make grade-validity [LAB=<lab>] [PROGRAM=consumer|server] [JOBS=N] [MATRIX=<matrix.json>] [ONLY=a,b] [RUBRIC=<file>] [OUT=<dir>]`:
// the validity proof of `chaoslab grade` (harness/grade/validity/proof.ts). A class of the lab's
// references and mutants, graded twice with the lab's rubric, against the full mutant matrix
// (run here, or MATRIX=). For a lab with a push server under test (feed), its servers too, as a
// class of their own graded with its server rubric (harness/grade/validity/lab-proof.ts), each
// in a folder of its own; PROGRAM= proves one of the two. Prints a table and a one-line verdict
// for each. Exit 0 valid, 1 not valid, 2 not judged or could not run.
// `--stability N [--hog n]`: instead, the stability check (harness/grade/validity/stability.ts):
// the same class graded N times (beside n busy processes), every submission's scores compared;
// stability.md and stability.json in the output folder. Exit 0 identical, 1 not, 2 not judged.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { labExitStatus, proveLabValidity } from '../dist/harness/grade/validity/lab-proof.js';
import { ProofError, proveStability } from '../dist/harness/grade/validity/proof.js';
import { stabilityExitStatus } from '../dist/harness/grade/validity/stability.js';
import { labNames } from '../dist/harness/labs/registry.js';

const USAGE =
  'usage: node scripts/grade-validity.mjs [--lab <lab> (default: the first lab)] [--program consumer|server (default: every program the lab has; consumer with --stability)] [--jobs N] [--matrix <matrix.json>] [--only mutant,mutant] [--rubric <file>] [--reruns N] [--stability N [--hog n]] [--out <dir>] [--quiet]';
let values;
try {
  ({ values } = parseArgs({
    options: {
      lab: { type: 'string' },
      program: { type: 'string' },
      jobs: { type: 'string', default: '2' },
      matrix: { type: 'string' },
      only: { type: 'string' },
      rubric: { type: 'string' },
      reruns: { type: 'string', default: '10' },
      stability: { type: 'string' },
      hog: { type: 'string' },
      out: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    },
  }));
} catch (error) {
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
// Without --lab, the registry's first lab (the one a scenario file without `protocol` speaks).
values.lab ??= labNames()[0];
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
const wholeOption = (name, value, min) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be a whole number >= ${min}, not ${value}\n${USAGE}`);
    process.exit(2);
  }
  return n;
};
const attempts = values.stability === undefined ? undefined : wholeOption('stability', values.stability, 2);
const hogs = values.hog === undefined ? 0 : wholeOption('hog', values.hog, 0);
if (hogs && attempts === undefined) {
  console.error(`--hog goes with --stability\n${USAGE}`);
  process.exit(2);
}
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
const out = values.out || join('reports', `grade-${attempts ? 'stability' : 'validity'}-${values.lab}-${stamp}`);
const only = values.only
  ? values.only
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean)
  : undefined;
if (attempts !== undefined) {
  console.log(
    `grade stability: lab ${values.lab}, ${attempts} gradings${hogs ? ` beside ${hogs} CPU hog(s)` : ''}, ${jobs} jobs, into ${out}${only ? `, mutants ${only.join(', ')} only` : ''}`,
  );
  try {
    if (values.program && !['consumer', 'server'].includes(values.program)) throw new ProofError(`--program must be consumer or server, not ${values.program}`);
    const stability = await proveStability({
      lab: values.lab,
      ...(values.program ? { program: values.program } : {}),
      jobs,
      out,
      attempts,
      hogs,
      ...(only ? { only } : {}),
      ...(values.rubric ? { rubric: values.rubric } : {}),
      echo: !values.quiet,
      log: (line) => console.log(line),
    });
    console.log(`details: ${join(out, 'stability.md')}`);
    process.exitCode = stabilityExitStatus(stability);
  } catch (error) {
    console.error(`grade stability: COULD NOT RUN — ${error instanceof ProofError ? error.message : (error?.stack ?? error)}`);
    process.exitCode = 2;
  }
  process.exit();
}
console.log(
  `grade validity: lab ${values.lab}${values.program ? `, ${values.program}s` : ''}, ${jobs} jobs, into ${out}${only ? `, mutants ${only.join(', ')} only` : ''}`,
);
try {
  const proofs = await proveLabValidity({
    lab: values.lab,
    ...(values.program ? { program: values.program } : {}),
    jobs,
    out,
    reruns,
    ...(values.matrix ? { matrix: values.matrix } : {}),
    ...(only ? { only } : {}),
    ...(values.rubric ? { rubric: values.rubric } : {}),
    echo: !values.quiet,
    log: (line) => console.log(line),
  });
  console.log(`details: ${proofs.map((p) => join(p.out, 'validity.md')).join(', ')}`);
  // Each program's verdict once more, together, when there were two.
  if (proofs.length > 1) for (const p of proofs) console.log(`${p.program}s: ${p.validity.verdict}`);
  process.exitCode = labExitStatus(proofs);
} catch (error) {
  console.error(`grade validity: COULD NOT RUN — ${error instanceof ProofError ? error.message : (error?.stack ?? error)}`);
  process.exitCode = 2;
}
