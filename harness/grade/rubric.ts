// A rubric (rubrics/<lab>.yaml, or --rubric <file>): which scenarios grade a class, what each is
// worth, who may see it (Gradescope's visibility values), the feedback that points at the
// contract section at stake, how many times it runs, and how the pass rate of its runs becomes
// points (`rate`, with `reruns` of a failing scenario: score.ts). A mistake names the file and
// the field.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';

export const VISIBILITIES = ['visible', 'hidden', 'after_due_date', 'after_published'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/**
 * How a scenario's pass rate becomes points (score.ts):
 * - reproducible: a failure is re-run; the scenario costs its points only when the failing runs
 *   are more than half of its counted runs (a failure that does not repeat is not charged);
 * - all: every run must pass; a failure is not re-run;
 * - proportional: a failure is re-run; the points × passing runs / counted runs.
 */
export const RATES = ['reproducible', 'all', 'proportional'] as const;
export type Rate = (typeof RATES)[number];
export const DEFAULT_RATE: Rate = 'reproducible';
/** Runs added to a scenario whose run failed (rate reproducible or proportional). */
export const DEFAULT_RERUNS = 2;

export interface RubricTest {
  /** The scenario's name (as the catalogue knows it). */
  name: string;
  /** A scenario file outside the catalogue (a staff-only hidden scenario), absolute. */
  file?: string;
  points: number;
  visibility: Visibility;
  /** What a student reads when it fails: the contract section at stake. */
  feedback: string;
  /** Runs k times (counted runs before any re-run). */
  repeat: number;
  /** How the pass rate becomes points. */
  rate: Rate;
  /** Runs added once a run failed (0 with rate all). */
  reruns: number;
}

export interface Rubric {
  file: string;
  /** Rubrics graded together (--rubric twice, or a lab's consumer and server rubrics): every file, `file` first. */
  files?: string[];
  lab: string;
  tests: RubricTest[];
  /**
   * A submission's runs at once per processor when --jobs is not given (default 1). Runs that
   * mostly wait for a script's set pace (the feed lab's consumer scenarios) leave a core idle at 1.
   */
  jobsPerProcessor?: number;
}

/** Every file a rubric was read from. */
export const rubricFiles = (rubric: Pick<Rubric, 'file' | 'files'>): string[] => rubric.files ?? [rubric.file];

/**
 * Rubrics graded together (a consumer rubric and a server rubric): one rubric of their tests, in
 * order; they must be of one lab, and a scenario may be in only one of them.
 */
export function mergeRubrics(rubrics: readonly Rubric[]): Rubric {
  const [first, ...others] = rubrics;
  if (!first) throw new RubricError('no rubric to grade with');
  if (others.length === 0) return first;
  const tests = [...first.tests];
  for (const r of others) {
    if (r.lab !== first.lab) throw new RubricError(`${r.file}: lab: ${r.lab}, but ${first.file} is for ${first.lab}: rubrics graded together are of one lab`);
    for (const test of r.tests) {
      if (tests.some((t) => t.name === test.name)) throw new RubricError(`${r.file}: ${test.name} is graded by another rubric given too`);
      tests.push(test);
    }
  }
  // Graded together, the runs go at the pace of the rubric that allows the fewest.
  const jobsPerProcessor = Math.min(...rubrics.map((r) => r.jobsPerProcessor ?? 1));
  return { file: first.file, files: rubrics.flatMap(rubricFiles), lab: first.lab, tests, ...(jobsPerProcessor === 1 ? {} : { jobsPerProcessor }) };
}

export class RubricError extends Error {
  override name = 'RubricError';
}

const NAME = /^[a-z0-9][a-z0-9-]*$/;

/** Reads and checks a rubric file; `knownLabs` are the labs the registry has. */
export function loadRubric(file: string, knownLabs: readonly string[]): Rubric {
  if (!existsSync(file)) throw new RubricError(`${file}: no such rubric file`);
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new RubricError(`${file}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  return checkRubric(doc, file, knownLabs);
}

/** The checks of loadRubric on an already parsed document. */
export function checkRubric(doc: unknown, file: string, knownLabs: readonly string[]): Rubric {
  const fail = (field: string, what: string): never => {
    throw new RubricError(`${file}: ${field}: ${what}`);
  };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return fail('(top)', 'must be a mapping with lab and scenarios');
  const top = doc as Record<string, unknown>;
  for (const key of Object.keys(top)) if (!TOP_FIELDS.includes(key)) fail(key, `unknown field (${TOP_FIELDS.join(', ')})`);
  const lab = top.lab;
  if (typeof lab !== 'string' || !knownLabs.includes(lab)) fail('lab', `must name a lab (${knownLabs.join(', ')}), not ${JSON.stringify(lab)}`);
  if (!Array.isArray(top.scenarios) || top.scenarios.length === 0) fail('scenarios', 'must be a non-empty list');
  const defaultRate = rateOf(top.rate, DEFAULT_RATE, 'rate', fail);
  const defaultReruns = rerunsOf(top.reruns, DEFAULT_RERUNS, 'reruns', fail);
  const jobsPerProcessor = top.jobs_per_processor;
  if (
    jobsPerProcessor !== undefined &&
    (typeof jobsPerProcessor !== 'number' || !Number.isInteger(jobsPerProcessor) || jobsPerProcessor < 1 || jobsPerProcessor > 8)
  )
    fail('jobs_per_processor', `must be a whole number 1..8 (a submission's runs at once per processor), not ${JSON.stringify(jobsPerProcessor)}`);
  const seen = new Set<string>();
  const tests = (top.scenarios as unknown[]).map((entry, i): RubricTest => {
    const at = `scenarios[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(at, 'must be a mapping (name, points, visibility, feedback, repeat)');
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!TEST_FIELDS.includes(key)) fail(`${at}.${key}`, `unknown field (${TEST_FIELDS.join(', ')})`);
    }
    if (typeof e.name !== 'string' || !NAME.test(e.name))
      fail(`${at}.name`, `must be a scenario name (lower case, digits, dashes), not ${JSON.stringify(e.name)}`);
    const name = e.name as string;
    if (seen.has(name)) fail(`${at}.name`, `${name} is listed twice`);
    seen.add(name);
    if (typeof e.points !== 'number' || !Number.isFinite(e.points) || e.points < 0)
      fail(`${at}.points`, `must be a number >= 0, not ${JSON.stringify(e.points)}`);
    const visibility = e.visibility ?? 'visible';
    if (!VISIBILITIES.includes(visibility as Visibility))
      fail(`${at}.visibility`, `must be one of ${VISIBILITIES.join(', ')}, not ${JSON.stringify(visibility)}`);
    // Gradescope: "hidden" is for tests that carry no points; a point-bearing hidden test moves
    // the total, so the total would reveal it (gradescope/autograder_samples docs/specs.md,
    // "Controlling Test Case Visibility").
    if (visibility === 'hidden' && (e.points as number) > 0)
      fail(
        `${at}.visibility`,
        `${name} gives ${e.points as number} point(s) but is hidden: a hidden test must carry no points (its result would show in the total); use after_due_date or after_published`,
      );
    if (typeof e.feedback !== 'string' || e.feedback.trim() === '')
      fail(`${at}.feedback`, 'must say what failed and point at the contract section (e.g. "§4: ACK only after COMMIT")');
    const repeat = e.repeat ?? 1;
    if (typeof repeat !== 'number' || !Number.isInteger(repeat) || repeat < 1 || repeat > 1000)
      fail(`${at}.repeat`, `must be a whole number 1..1000, not ${JSON.stringify(repeat)}`);
    if (e.file !== undefined && typeof e.file !== 'string') fail(`${at}.file`, 'must be a path to a scenario file');
    const rate = rateOf(e.rate, defaultRate, `${at}.rate`, fail);
    const reruns = rerunsOf(e.reruns, defaultReruns, `${at}.reruns`, fail);
    return {
      name,
      ...(typeof e.file === 'string' ? { file: resolve(dirname(file), e.file) } : {}),
      points: e.points as number,
      visibility: visibility as Visibility,
      feedback: (e.feedback as string).trim(),
      repeat: repeat as number,
      rate,
      reruns: rate === 'all' ? 0 : reruns,
    };
  });
  return { file, lab: lab as string, tests, ...(jobsPerProcessor === undefined ? {} : { jobsPerProcessor: jobsPerProcessor as number }) };
}

const TOP_FIELDS = ['lab', 'rate', 'reruns', 'jobs_per_processor', 'scenarios'];
const TEST_FIELDS = ['name', 'file', 'points', 'visibility', 'feedback', 'repeat', 'rate', 'reruns'];

function rateOf(value: unknown, fallback: Rate, field: string, fail: (field: string, what: string) => never): Rate {
  if (value === undefined) return fallback;
  if (!RATES.includes(value as Rate)) fail(field, `must be one of ${RATES.join(', ')}, not ${JSON.stringify(value)}`);
  return value as Rate;
}

function rerunsOf(value: unknown, fallback: number, field: string, fail: (field: string, what: string) => never): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 100)
    fail(field, `must be a whole number 0..100 (runs added once a run failed), not ${JSON.stringify(value)}`);
  return value as number;
}

/** The rubric's total. */
export const maxScore = (rubric: Pick<Rubric, 'tests'>): number => rubric.tests.reduce((sum, t) => sum + t.points, 0);

/** The name a student sees: a hidden test's name is never shown ("hidden test 2"). */
export function shownName<T extends Pick<RubricTest, 'name' | 'visibility'>>(rubric: { tests: readonly T[] }, test: T): string {
  if (test.visibility !== 'hidden') return test.name;
  return `hidden test ${rubric.tests.filter((t) => t.visibility === 'hidden').indexOf(test) + 1}`;
}
