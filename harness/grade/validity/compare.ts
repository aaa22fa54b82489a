// The validity proof's judgement, cell by cell: what the mutant matrix says each submission's
// rubric scenario is worth (its points when the matrix's run passed, 0 when it failed) against
// what each grading gave it (it scores only if all k of its runs passed). A matrix cell that
// neither passed nor failed (a harness error, a skip) judges nothing: the proof then cannot
// conclude. Data in, data out: the proof (./proof.ts) reads the files, ./render.ts prints.

import type { ClassReport } from '../class/class-data.js';
import type { ScenarioScore } from '../score.js';
import type { ValiditySubmission } from './class-folder.js';

/** What `chaoslab mutants` wrote (matrix.json), as far as the proof reads it. */
export interface MatrixFile {
  lab: string;
  /** `program` (since the server matrix): `server` rows are the lab's push servers; a row without it is a consumer's. */
  rows: { consumer: string; kind: string; program?: string; cells: { scenario: string; status: string; reason: string }[] }[];
}

/** The matrix's row of a consumer (or, with `program: 'server'`, of a server: the two share labels such as `typescript`). */
export const matrixRow = (matrix: MatrixFile, label: string, program: 'consumer' | 'server' = 'consumer'): MatrixFile['rows'][number] | undefined =>
  matrix.rows.find((r) => r.consumer === label && (r.program ?? 'consumer') === program);

/** A cell's worth by the matrix: points, or why the matrix cannot say. */
export type Expected = { points: number } | { none: string };

export interface CellComparison {
  scenario: string;
  expected: Expected;
  /** Per grading, in order: its score and runs, or undefined when the grading lacks it. */
  got: (Pick<ScenarioScore, 'score' | 'passed' | 'runs' | 'harnessError'> | undefined)[];
  /** undefined: nothing to judge by (the matrix's cell or a grading's run did not conclude). */
  agrees: boolean | undefined;
  /** What is wrong, in one line, when it does not agree or cannot be judged. */
  problem?: string;
  /** A differing cell run again outside the grader (`chaoslab run --repeat`): how many of its runs failed. */
  rerun?: Rerun;
  /** The reruns gave the gradings' outcome too: the mutant passes it some runs and fails it others. No fault of the grader, and not counted as a mismatch. */
  intermittent?: true;
}

export interface Rerun {
  runs: number;
  failed: number;
}

export interface SubmissionComparison {
  submission: string;
  consumer: string;
  kind: ValiditySubmission['kind'];
  /** The matrix's total, when every cell is judged. */
  expected?: number;
  /** Each grading's total (undefined: not in that grading). */
  totals: (number | undefined)[];
  cells: CellComparison[];
}

export interface Validity {
  lab: string;
  /** `server`: the class is the lab's push servers (graded with its server rubric); undefined: its consumers. */
  program?: 'server';
  scenarios: string[];
  gradings: number;
  rows: SubmissionComparison[];
  /** Cells where a grading gave other points than the matrix says, and reruns do not show the gradings' outcome. */
  mismatches: number;
  /** Differing cells whose reruns show both outcomes: the mutant is caught only some of the time. */
  intermittent: number;
  /** Cells nothing can judge. */
  unjudged: number;
  /** Where a grading's outputs disagree with its class.json, or two gradings' outputs differ. */
  outputProblems: string[];
  verdict: 'valid' | 'not valid' | 'not judged';
}

export function expectedCell(matrix: MatrixFile, consumer: string, test: { name: string; points: number }, program?: 'consumer' | 'server'): Expected {
  const row = matrixRow(matrix, consumer, program);
  if (!row) return { none: `the matrix has no row ${consumer}` };
  const cell = row.cells.find((c) => c.scenario === test.name);
  if (!cell) return { none: `the matrix did not run ${consumer} × ${test.name}` };
  if (cell.status === 'pass') return { points: test.points };
  if (cell.status === 'fail') return { points: 0 };
  return { none: `the matrix's run ended ${cell.status}${cell.reason ? `: ${cell.reason}` : ''}` };
}

const runsWord = (g: NonNullable<CellComparison['got'][number]>) => (g.runs > 1 ? ` (${g.passed} of ${g.runs} runs passed)` : '');

function compareCell(expected: Expected, got: CellComparison['got'], scenario: string): CellComparison {
  const base = { scenario, expected, got };
  if ('none' in expected) return { ...base, agrees: undefined, problem: expected.none };
  const problems: string[] = [];
  let unjudged = false;
  got.forEach((g, i) => {
    if (!g) problems.push(`grading ${i + 1} has no such cell`);
    else if (g.harnessError) {
      unjudged = true;
      problems.push(`grading ${i + 1}: a run ended in a harness error`);
    } else if (g.score !== expected.points) problems.push(`grading ${i + 1} gave ${g.score}${runsWord(g)}, the matrix says ${expected.points}`);
  });
  if (problems.length === 0) return { ...base, agrees: true };
  const mismatch = got.some((g) => !g || (!g.harnessError && g.score !== expected.points));
  return { ...base, agrees: mismatch ? false : unjudged ? undefined : false, problem: problems.join('; ') };
}

/** Every submission's cells against the matrix, over the rubric's scenarios. */
export function compareGradings(input: {
  matrix: MatrixFile;
  rubric: readonly { name: string; points: number }[];
  submissions: readonly Pick<ValiditySubmission, 'name' | 'consumer' | 'kind' | 'program'>[];
  gradings: readonly ClassReport[];
  outputProblems?: readonly string[];
}): Validity {
  const { matrix, rubric, gradings } = input;
  const rows = input.submissions.map((s): SubmissionComparison => {
    const graded = gradings.map((g) => g.submissions.find((x) => x.submission === s.name));
    const cells = rubric.map((test) =>
      compareCell(
        expectedCell(matrix, s.consumer, test, s.program),
        graded.map((g) => g?.scenarios.find((x) => x.name === test.name)),
        test.name,
      ),
    );
    const judged = cells.every((c) => !('none' in c.expected));
    const expected = judged ? round(cells.reduce((sum, c) => sum + (c.expected as { points: number }).points, 0)) : undefined;
    return {
      submission: s.name,
      consumer: s.consumer,
      kind: s.kind,
      ...(expected === undefined ? {} : { expected }),
      totals: graded.map((g) => g?.score),
      cells,
    };
  });
  const outputProblems = [...(input.outputProblems ?? []), ...repeatProblems(gradings)];
  const servers = input.submissions.length > 0 && input.submissions.every((s) => s.program === 'server');
  return counted({
    lab: matrix.lab,
    ...(servers ? { program: 'server' as const } : {}),
    scenarios: rubric.map((t) => t.name),
    gradings: gradings.length,
    rows,
    outputProblems,
  });
}

/** The counts and the verdict of the cells as they stand. */
function counted(v: Pick<Validity, 'lab' | 'program' | 'scenarios' | 'gradings' | 'rows' | 'outputProblems'>): Validity {
  const all = v.rows.flatMap((r) => r.cells);
  const mismatches = all.filter((c) => c.agrees === false && !c.intermittent).length;
  const intermittent = all.filter((c) => c.intermittent).length;
  const unjudged = all.filter((c) => c.agrees === undefined).length;
  const verdict = mismatches > 0 || v.outputProblems.length > 0 ? 'not valid' : unjudged > 0 ? 'not judged' : 'valid';
  return { ...v, mismatches, intermittent, unjudged, verdict };
}

export const cellKey = (submission: string, scenario: string): string => `${submission} × ${scenario}`;

/** The cells where a grading gave other points than the matrix says: each to be run again, outside the grader. */
export const differingCells = (v: Validity): { submission: string; consumer: string; scenario: string }[] =>
  v.rows.flatMap((r) => r.cells.filter((c) => c.agrees === false).map((c) => ({ submission: r.submission, consumer: r.consumer, scenario: c.scenario })));

/**
 * The differing cells judged again with their reruns: a cell whose reruns show the outcome
 * each differing grading gave (a failure, when it scored 0; a pass, when it scored) is one the
 * mutant passes some runs and fails others — the matrix's one run and the grader's saw the two
 * sides, and neither is wrong. Reruns that never show the gradings' outcome leave it a mismatch.
 */
export function withReruns(v: Validity, reruns: ReadonlyMap<string, Rerun>): Validity {
  const rows = v.rows.map((r) => ({
    ...r,
    cells: r.cells.map((c): CellComparison => {
      const rerun = c.agrees === false ? reruns.get(cellKey(r.submission, c.scenario)) : undefined;
      if (!rerun || !('points' in c.expected)) return c;
      const want = c.expected.points;
      const seen = c.got.every((g) => !g || g.harnessError || g.score === want || (g.score === 0 ? rerun.failed > 0 : rerun.failed < rerun.runs));
      return { ...c, rerun, ...(seen ? { intermittent: true as const } : {}) };
    }),
  }));
  return counted({ ...v, rows });
}

/** The same class graded again must give the same scores, cell for cell. */
function repeatProblems(gradings: readonly ClassReport[]): string[] {
  const [first, ...others] = gradings;
  if (!first) return [];
  const cells = (g: ClassReport) => new Map(g.submissions.flatMap((s) => s.scenarios.map((x) => [`${s.submission} × ${x.name}`, x.score] as const)));
  const want = cells(first);
  return others.flatMap((g, i) => {
    const have = cells(g);
    const keys = new Set([...want.keys(), ...have.keys()]);
    const differ = [...keys].filter((k) => want.get(k) !== have.get(k)).map((k) => `${k}: ${want.get(k) ?? '–'} then ${have.get(k) ?? '–'}`);
    return differ.length
      ? [`grading ${i + 2} gave other scores than grading 1 in ${differ.length} cells: ${differ.slice(0, 5).join('; ')}${differ.length > 5 ? '; …' : ''}`]
      : [];
  });
}

const round = (n: number): number => Math.round(n * 1e6) / 1e6;

/** The process's exit status for a verdict: 0 valid, 1 not valid, 2 not judged. */
export const exitStatusOf = (v: Pick<Validity, 'verdict'>): number => (v.verdict === 'valid' ? 0 : v.verdict === 'not valid' ? 1 : 2);
