// `chaoslab chaos`: seeded random fault schedules against one consumer, through the ordinary
// runner and checker. fast-check draws the schedules (the same seed, the same schedules) and
// shrinks a failure; real processes make a run's outcome noisy, so a failure counts only when a
// second run of the same schedule fails too — in the search and for every shrink candidate — and
// the shrink runs are capped. The smallest confirmed schedule is written as an ordinary scenario
// file, repro.yaml, that `chaoslab run` replays.
//
// Paths are fast-check's: run i of the search is path "i" (0-based); "i:j:k" is the schedule
// reached from it by taking shrink candidates j, then k. `fc.sample` and `fc.check` draw the same
// values from one seed, so the search samples its schedules up front and the shrink replays from
// "i" with `fc.check`.

import fc from 'fast-check';
import type { Lab } from '../lab.js';
import type { SealMode } from '../sealing.js';
import type { ChaosModel, ChaosWhere } from './model.js';
import { type Trial, runTrial } from './trial.js';

export interface ChaosOptions {
  lab: Lab;
  model: ChaosModel;
  /** Sealed-only layers run (elsewhere they are left out of the scenarios). */
  where: ChaosWhere;
  consumerCommand: string;
  seed: number;
  runs: number;
  budgetMs: number;
  keepGoing: boolean;
  /** Most runs a shrink may take (each candidate takes one, or two when it fails). */
  shrinkRuns: number;
  batchDir: string;
  cwd: string;
  seal?: SealMode;
  toxiproxyUrl?: string;
  signal?: AbortSignal;
  invokedAs?: string;
  log(line: string): void;
  /** A confirmed failure shrunk: write its repro, return the file's path. */
  onFailure(failure: Omit<Failure, 'repro'>): string;
  /** Runs one schedule (default: as a scenario, by the ordinary runner; tests give their own). */
  trial?: typeof runTrial;
}

/** A labelled run of the chaos batch, in the order it ran. */
export interface LabelledTrial {
  label: string;
  trial: Trial;
}

export interface Failure {
  /** The search's run (0-based: path "index"). */
  index: number;
  found: [Trial, Trial];
  /** The smallest confirmed schedule, its fast-check path, its steps and its two failing runs. */
  schedule: unknown;
  path: string;
  steps: string[];
  originalSteps: string[];
  smallest: [Trial, Trial];
  shrinkRuns: number;
  repro: string;
}

export interface ChaosOutcome {
  seed: number;
  runsAsked: number;
  /** Search runs done (each failing one once more to confirm it). */
  runsDone: number;
  stoppedBy: 'runs' | 'budget' | 'failure' | 'interrupted';
  failures: Failure[];
  /** A run that failed once and passed on its second run: a timing accident, or a rare real failure. */
  unconfirmed: { index: number; trials: [Trial, Trial]; steps: string[] }[];
  /** Runs the harness could not judge. */
  harnessErrors: Trial[];
  trials: LabelledTrial[];
}

export async function searchChaos(o: ChaosOptions): Promise<ChaosOutcome> {
  const arbitrary = o.model.schedules();
  const draws = fc.sample(arbitrary, { seed: o.seed, numRuns: o.runs });
  const deadline = Date.now() + o.budgetMs;
  const outcome: ChaosOutcome = {
    seed: o.seed,
    runsAsked: o.runs,
    runsDone: 0,
    stoppedBy: 'runs',
    failures: [],
    unconfirmed: [],
    harnessErrors: [],
    trials: [],
  };
  const runOne = o.trial ?? runTrial;
  const run = async (schedule: unknown, name: string, label: string): Promise<Trial> => {
    const trial = await runOne({
      lab: o.lab,
      model: o.model,
      schedule,
      where: o.where,
      name,
      description: `chaoslab chaos, seed ${o.seed}: ${label}. Fault steps: ${o.model.steps(schedule, o.where).join('; ') || 'none'}.`,
      batchDir: o.batchDir,
      consumerCommand: o.consumerCommand,
      cwd: o.cwd,
      ...(o.seal ? { seal: o.seal } : {}),
      ...(o.toxiproxyUrl ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.invokedAs ? { invokedAs: o.invokedAs } : {}),
    });
    outcome.trials.push({ label, trial });
    if (trial.status === 'error') outcome.harnessErrors.push(trial);
    return trial;
  };
  const stopped = (): ChaosOutcome['stoppedBy'] | undefined => (o.signal?.aborted ? 'interrupted' : Date.now() >= deadline ? 'budget' : undefined);

  for (const [index, schedule] of draws.entries()) {
    const stop = stopped();
    if (stop) {
      outcome.stoppedBy = stop;
      break;
    }
    const n = index + 1;
    const steps = o.model.steps(schedule, o.where);
    const first = await run(schedule, `run-${n}`, `run ${n}`);
    outcome.runsDone = n;
    o.log(`[${n}/${o.runs}] ${first.status.toUpperCase()}  ${steps.length} step${steps.length === 1 ? '' : 's'}${steps.length ? `: ${steps.join('; ')}` : ''}`);
    if (first.status !== 'fail') continue;
    o.log(`  ${first.headline}`);
    const again = await run(schedule, `run-${n}-again`, `run ${n} again`);
    if (again.status !== 'fail') {
      o.log(`  not confirmed: the same schedule ${again.status === 'pass' ? 'passed' : `ended ${again.status}`} on its second run`);
      outcome.unconfirmed.push({ index, trials: [first, again], steps });
      continue;
    }
    o.log(`  confirmed (failed twice); shrinking, at most ${o.shrinkRuns} runs`);
    const shrunk = await shrink(o, arbitrary, index, [first, again], run, deadline);
    const failure = { index, found: [first, again] as [Trial, Trial], originalSteps: steps, ...shrunk, steps: o.model.steps(shrunk.schedule, o.where) };
    const repro = o.onFailure(failure);
    outcome.failures.push({ ...failure, repro });
    o.log(
      `  shrunk from ${steps.length} to ${failure.steps.length} fault step${failure.steps.length === 1 ? '' : 's'} in ${shrunk.shrinkRuns} runs (path ${shrunk.path}): ${failure.steps.join('; ') || 'no fault step'}`,
    );
    o.log(`  repro: ${repro}`);
    if (!o.keepGoing) {
      outcome.stoppedBy = 'failure';
      break;
    }
  }
  if (o.signal?.aborted) outcome.stoppedBy = 'interrupted';
  return outcome;
}

/**
 * Shrinks the confirmed failure at search run `index`. A candidate fails only when it fails
 * twice, and is run only when it has no more fault steps than the smallest so far; past the cap
 * (or the budget, or an interrupt) every candidate counts as passing, so fast-check ends with
 * the smallest schedule confirmed so far.
 */
async function shrink(
  o: ChaosOptions,
  arbitrary: fc.Arbitrary<unknown>,
  index: number,
  found: [Trial, Trial],
  run: (schedule: unknown, name: string, label: string) => Promise<Trial>,
  deadline: number,
): Promise<{ schedule: unknown; path: string; smallest: [Trial, Trial]; shrinkRuns: number }> {
  let smallest = found;
  let smallestSize: number | undefined;
  let used = 0;
  let candidate = 0;
  let replayed = false;
  // An error inside the property would read to fast-check as a failing candidate: kept, rethrown after.
  let thrown: unknown;
  const n = index + 1;
  const left = () => o.shrinkRuns - used > 0 && !o.signal?.aborted && Date.now() < deadline;
  const property = fc.asyncProperty(arbitrary, async (schedule) => {
    // The first value at path "index" is the failure the search confirmed: not run again.
    const size = o.model.steps(schedule, o.where).length;
    if (!replayed) {
      replayed = true;
      smallestSize = size;
      return false;
    }
    if (!left() || thrown !== undefined) return true;
    // fast-check's "smaller" can hold more fault steps (a chained arbitrary draws its part anew
    // when its source shrinks): such a candidate is not what a repro's reader wants, so it counts
    // as passing and costs no run.
    if (smallestSize !== undefined && size > smallestSize) return true;
    const c = ++candidate;
    try {
      used++;
      const a = await run(schedule, `run-${n}-shrink-${c}`, `run ${n} shrink ${c}`);
      if (a.status !== 'fail' || !left()) return true;
      used++;
      const b = await run(schedule, `run-${n}-shrink-${c}-again`, `run ${n} shrink ${c} again`);
      if (b.status !== 'fail') return true;
      smallest = [a, b];
      smallestSize = size;
    } catch (error) {
      thrown = error;
      return true;
    }
    o.log(`    shrink ${c}: failed twice with ${size} fault steps`);
    return false;
  });
  const details = await fc.check(property, { seed: o.seed, path: String(index), numRuns: 1 });
  if (thrown !== undefined) throw thrown;
  const counterexample = details.counterexample?.[0];
  if (!details.failed || counterexample === undefined || !details.counterexamplePath)
    throw new Error(`chaos: the shrink of run ${n} lost its failure (fast-check found no counterexample at path ${index})`);
  return { schedule: counterexample, path: details.counterexamplePath, smallest, shrinkRuns: used };
}

/** The schedule at fast-check `path` of `seed`'s draw: what a repro's seed and path stand for. */
export async function scheduleAt(arbitrary: fc.Arbitrary<unknown>, seed: number, path: string): Promise<unknown> {
  let found: unknown;
  // Fails at once on the value at `path`, and never shrinks: that value is the schedule.
  const details = await fc.check(
    fc.property(arbitrary, (schedule) => {
      found = schedule;
      return false;
    }),
    { seed, path, endOnFailure: true },
  );
  if (!details.failed || found === undefined) throw new Error(`no schedule at path ${path} of seed ${seed}`);
  return found;
}
