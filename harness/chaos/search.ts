// `chaoslab chaos`: seeded random fault schedules against one consumer, through the ordinary
// runner and checker. fast-check draws the schedules (the same seed, the same schedules) and
// shrinks a failure; real processes make a run's outcome noisy, so a failure counts only when a
// second run of the same schedule fails too — in the search and for every shrink candidate — and
// the shrink runs are capped. The smallest confirmed schedule then runs a few times more: a
// failure that turns on a race (SIGKILL as an ACK arrives, against a COMMIT a millisecond later)
// can fail twice under load and pass on a quiet laptop, so a steadier, larger confirmed schedule
// is preferred to it. The one chosen is written as an ordinary scenario file, repro.yaml, that
// `chaoslab run` replays, with how often it failed.
//
// Paths are fast-check's: run i of the search is path "i" (0-based); "i:j:k" is the schedule
// reached from it by taking shrink candidates j, then k. `fc.sample` and `fc.check` draw the same
// values from one seed, so the search samples its schedules up front and the shrink replays from
// "i" with `fc.check`.

import fc from 'fast-check';
import type { Lab } from '../lab-api/lab.js';
import type { SealMode } from '../run/sealing.js';
import type { ChaosModel, ChaosWhere } from '../lab-api/chaos-model.js';
import { type Trial, runTrial } from './trial.js';

export interface ChaosOptions {
  lab: Lab;
  model: ChaosModel;
  /** Sealed-only layers run (elsewhere they are left out of the scenarios). */
  where: ChaosWhere;
  consumerCommand: string;
  /** `chaos --server`: the push server under test. */
  serverCommand?: string;
  seed: number;
  runs: number;
  budgetMs: number;
  keepGoing: boolean;
  /** Most runs a shrink may take (each candidate takes one, or two when it fails). */
  shrinkRuns: number;
  /** Runs more of the smallest confirmed schedule (and, if one passes, of larger ones) before it is written. */
  steadyRuns: number;
  batchDir: string;
  cwd: string;
  seal?: SealMode;
  toxiproxyUrl?: string;
  storeLimitBytes?: number;
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
  /** The confirmed schedule written (the smallest, unless a larger one failed more steadily), its fast-check path and steps. */
  schedule: unknown;
  path: string;
  steps: string[];
  originalSteps: string[];
  /** Every run of that schedule: the two that confirmed it, then its steadiness runs. */
  smallest: Trial[];
  /** How many of those failed. */
  failedRuns: number;
  shrinkRuns: number;
  /** Runs spent telling a steady failure from a racy one. */
  steadyRuns: number;
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
  /** Runs that passed but met a drawn fault that took no effect (the generator's miss, not the consumer's nor the harness's). */
  untested: Trial[];
  /** The first run of each schedule drawn: what the coverage table counts (confirmations and shrinks repeat a draw). */
  searchRuns: Trial[];
  trials: LabelledTrial[];
}

type RunSchedule = (schedule: unknown, name: string, label: string) => Promise<Trial>;

/** Confirmed schedules given steadiness runs at most, from the smallest up. */
const STEADY_LADDER = 3;

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
    untested: [],
    searchRuns: [],
    trials: [],
  };
  const run = trialRunner(o, outcome);
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
    outcome.searchRuns.push(first);
    o.log(
      `[${n}/${o.runs}] ${first.untested ? 'UNTESTED' : first.status.toUpperCase()}  ${steps.length} step${steps.length === 1 ? '' : 's'}${steps.length ? `: ${steps.join('; ')}` : ''}`,
    );
    if (first.untested) o.log(`  ${first.headline}`);
    if (first.status !== 'fail') continue;
    o.log(`  ${first.headline}`);
    const again = await run(schedule, `run-${n}-again`, `run ${n} again`);
    if (again.status !== 'fail') {
      o.log(`  not confirmed: the same schedule ${again.status === 'pass' ? 'passed' : `ended ${again.status}`} on its second run`);
      outcome.unconfirmed.push({ index, trials: [first, again], steps });
      continue;
    }
    o.log(`  confirmed (failed twice); shrinking, at most ${o.shrinkRuns} runs`);
    const { confirmed, shrinkRuns } = await shrink(o, arbitrary, index, schedule, [first, again], run, deadline);
    const smallest = confirmed.at(-1)!;
    o.log(`  shrunk from ${steps.length} to ${smallest.size} fault step${smallest.size === 1 ? '' : 's'} in ${shrinkRuns} runs (path ${smallest.path})`);
    const { chosen, failedRuns, steadyRuns } = await steadiest(o, confirmed, index, run, deadline);
    const failure: Omit<Failure, 'repro'> = {
      index,
      found: [first, again],
      originalSteps: steps,
      schedule: chosen.schedule,
      path: chosen.path,
      steps: o.model.steps(chosen.schedule, o.where),
      smallest: chosen.trials,
      failedRuns,
      shrinkRuns,
      steadyRuns,
    };
    const repro = o.onFailure(failure);
    outcome.failures.push({ ...failure, repro });
    o.log(
      `  written: ${failure.steps.length} fault step${failure.steps.length === 1 ? '' : 's'}, failed ${failedRuns} of ${chosen.trials.length} runs (path ${chosen.path}): ${failure.steps.join('; ') || 'no fault step'}`,
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

/** Runs one schedule as a trial, kept in the outcome (and among its harness errors when the run could not be judged, or its untested runs). */
function trialRunner(o: ChaosOptions, outcome: ChaosOutcome): RunSchedule {
  const runOne = o.trial ?? runTrial;
  return async (schedule, name, label) => {
    const trial = await runOne({
      lab: o.lab,
      model: o.model,
      schedule,
      where: o.where,
      name,
      description: `chaoslab chaos, seed ${o.seed}: ${label}. Fault steps: ${o.model.steps(schedule, o.where).join('; ') || 'none'}.`,
      batchDir: o.batchDir,
      consumerCommand: o.consumerCommand,
      ...(o.serverCommand === undefined ? {} : { serverCommand: o.serverCommand }),
      cwd: o.cwd,
      ...(o.seal ? { seal: o.seal } : {}),
      ...(o.toxiproxyUrl ? { toxiproxyUrl: o.toxiproxyUrl } : {}),
      ...(o.storeLimitBytes ? { storeLimitBytes: o.storeLimitBytes } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.invokedAs ? { invokedAs: o.invokedAs } : {}),
    });
    outcome.trials.push({ label, trial });
    if (trial.untested) outcome.untested.push(trial);
    else if (trial.status === 'error') outcome.harnessErrors.push(trial);
    return trial;
  };
}

/** A schedule that failed twice: the search's failure or a shrink candidate, with its fast-check path. */
interface Confirmed {
  schedule: unknown;
  path: string;
  size: number;
  trials: Trial[];
}

/**
 * Shrinks the confirmed failure at search run `index`, in two passes over fast-check's own
 * shrink tree. The first runs only candidates with fewer fault steps than the smallest confirmed
 * so far; the second goes on from the smallest and runs any candidate no larger (smaller numbers:
 * fewer events, shorter faults). fast-check shrinks an array to shorter suffixes, then makes each
 * item smaller, and only then drops an item from the middle; with real runs, a single pass spent
 * the cap on smaller numbers and kept every step (a 5-step ledger repro stayed at 5). A candidate
 * fails only when it fails twice; past the cap (or the budget, or an interrupt) every candidate
 * counts as passing, so fast-check ends with the smallest schedule confirmed so far. Returns
 * every confirmed schedule, largest first.
 */
async function shrink(
  o: ChaosOptions,
  arbitrary: fc.Arbitrary<unknown>,
  index: number,
  failing: unknown,
  found: [Trial, Trial],
  run: RunSchedule,
  deadline: number,
): Promise<{ confirmed: Confirmed[]; shrinkRuns: number }> {
  const n = index + 1;
  const confirmed: Confirmed[] = [{ schedule: failing, path: String(index), size: o.model.steps(failing, o.where).length, trials: [...found] }];
  let used = 0;
  let candidate = 0;
  // Every schedule run, confirmed or not, runs once: the second pass starts where the first
  // ended, and fast-check proposes that schedule's shrinks again; it may also propose a schedule
  // equal to the one it shrinks (seen with a filtered array), which would only confirm it again.
  const known = new Set([keyOf(failing)]);
  const left = () => o.shrinkRuns - used > 0 && !o.signal?.aborted && Date.now() < deadline;
  for (const fewerStepsOnly of [true, false]) {
    if (fewerStepsOnly === false && !left()) break;
    const start = confirmed.at(-1)!;
    let first = true;
    // fast-check's path: the failing candidate's place among the shrinks of the one before it.
    let tried = 0;
    // An error inside the property would read to fast-check as a failing candidate: kept, rethrown after.
    let thrown: unknown;
    const property = fc.asyncProperty(arbitrary, async (schedule) => {
      // The first value at the start path is the failure already confirmed: not run again.
      if (first) {
        first = false;
        return false;
      }
      const size = o.model.steps(schedule, o.where).length;
      const smallest = confirmed.at(-1)!;
      const place = tried++;
      if (!left() || thrown !== undefined) return true;
      // A candidate as large as the smallest (in the first pass) or larger (in either: a chained
      // arbitrary draws its part anew when its source shrinks) counts as passing and costs no run.
      if (fewerStepsOnly ? size >= smallest.size : size > smallest.size) return true;
      const key = keyOf(schedule);
      if (known.has(key)) return true;
      const c = ++candidate;
      try {
        used++;
        const a = await run(schedule, `run-${n}-shrink-${c}`, `run ${n} shrink ${c}`);
        known.add(key);
        if (!sameKind(found[0], a) || !left()) return true;
        used++;
        const b = await run(schedule, `run-${n}-shrink-${c}-again`, `run ${n} shrink ${c} again`);
        if (!sameKind(found[0], b)) return true;
        confirmed.push({ schedule, path: `${smallest.path}:${place}`, size, trials: [a, b] });
        tried = 0;
      } catch (error) {
        thrown = error;
        return true;
      }
      o.log(`    shrink ${c}: failed twice with ${size} fault steps`);
      return false;
    });
    const details = await fc.check(property, { seed: o.seed, path: start.path, numRuns: 1 });
    if (thrown !== undefined) throw thrown;
    const last = confirmed.at(-1)!;
    if (!details.failed || details.counterexamplePath !== last.path)
      throw new Error(
        `chaos: the shrink of run ${n} lost track of its failure (fast-check ended at path ${details.counterexamplePath ?? 'none'}, the smallest confirmed is at ${last.path})`,
      );
  }
  return { confirmed, shrinkRuns: used };
}

/**
 * A shrink candidate fails as the search's failure did: it fails, with the same kind of finding
 * (the found run's leading code among its own), so that a shrink does not slide from one bug to
 * another (a kill's lost rows to the restart's slow start). Trials without codes (a test's own)
 * match on their status alone.
 */
export function sameKind(found: Trial, candidate: Trial): boolean {
  if (candidate.status !== 'fail') return false;
  const kind = found.codes?.[0];
  return kind === undefined || candidate.codes === undefined || candidate.codes.includes(kind);
}

/** A schedule as text, to know it again (a bigint, which JSON lacks, as its digits and n). */
const keyOf = (schedule: unknown) => JSON.stringify(schedule, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value));

/**
 * Runs the smallest confirmed schedule `steadyRuns` times more. If one of them passes, the
 * failure turns on timing; the next larger confirmed schedules (at most STEADY_LADDER in all) get
 * the same runs, and the first that fails every run is chosen, else the one that failed most
 * often (the smaller, on a tie). The budget and an interrupt end it early.
 */
async function steadiest(
  o: ChaosOptions,
  confirmed: Confirmed[],
  index: number,
  run: RunSchedule,
  deadline: number,
): Promise<{ chosen: Confirmed; failedRuns: number; steadyRuns: number }> {
  const failedOf = (c: Confirmed) => c.trials.filter((t) => t.status === 'fail').length;
  const checked: Confirmed[] = [];
  let runs = 0;
  for (const c of [...confirmed].reverse().slice(0, STEADY_LADDER)) {
    if (o.steadyRuns === 0 || o.signal?.aborted || Date.now() >= deadline) break;
    const name = c.trials[0]!.name;
    for (let k = 1; k <= o.steadyRuns; k++) {
      runs++;
      c.trials.push(await run(c.schedule, `${name}-steady-${k}`, `${name.replaceAll('-', ' ')} steady ${k}`));
    }
    checked.push(c);
    o.log(`    ${c.size} fault step${c.size === 1 ? '' : 's'} (path ${c.path}): failed ${failedOf(c)} of ${c.trials.length} runs`);
    if (failedOf(c) === c.trials.length) break;
  }
  const chosen =
    checked.reduce<Confirmed | undefined>((best, c) => (!best || failedOf(c) / c.trials.length > failedOf(best) / best.trials.length ? c : best), undefined) ??
    confirmed.at(-1)!;
  if (chosen !== confirmed.at(-1)) o.log(`  run ${index + 1}: the ${chosen.size}-step schedule failed more steadily than the smallest; it is the one written`);
  return { chosen, failedRuns: failedOf(chosen), steadyRuns: runs };
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
