// The `storm` key of a feed scenario: its plan, and the checks the schema cannot express.

import type { RawProblem } from '../../../scenario/problems.js';
import type { CoreFile } from '../../../scenario/schema.js';
import type { StormPlan } from '../scenario/plan.js';
import { DEFAULTS, type FeedFile, STORM_DEFAULTS } from '../scenario/schema.js';

/** Start-up and the end of the run, around the rounds (20 processes start slowly on a loaded machine). */
export const STORM_OVERHEAD_MS = 30_000;

export function stormPlanOf(storm: NonNullable<FeedFile['storm']>): StormPlan {
  const roundMs = storm.round_ms ?? STORM_DEFAULTS.roundMs;
  return {
    processes: storm.processes ?? STORM_DEFAULTS.processes,
    rounds: storm.rounds ?? STORM_DEFAULTS.rounds,
    roundMs,
    roundMaxMs: 2 * roundMs,
    minAtCap: storm.min_at_cap ?? STORM_DEFAULTS.minAtCap,
    maxAttempts: storm.max_attempts ?? STORM_DEFAULTS.maxAttempts,
  };
}

export function stormProblems(file: FeedFile & CoreFile, deadline: number): RawProblem[] {
  if (!file.storm) return [];
  const out: RawProblem[] = [];
  const plan = stormPlanOf(file.storm);
  if ((file.faults ?? []).length > 0)
    out.push({ segments: ['faults'], at: 'key', message: 'a storm scenario takes no faults: the storm server itself goes down and comes back' });
  const base = file.consumer.backoff_base_ms ?? DEFAULTS.backoffBaseMs;
  const cap = file.consumer.backoff_cap_ms ?? DEFAULTS.backoffCapMs;
  const atCapFrom = preCapSteps(base, cap);
  if (plan.maxAttempts < atCapFrom + plan.minAtCap)
    out.push({
      segments: ['storm', 'max_attempts'],
      at: 'value',
      message: `must leave room for the ${atCapFrom} attempts before the cap and min_at_cap (${plan.minAtCap}) at it: at least ${atCapFrom + plan.minAtCap}`,
    });
  const need = plan.rounds * (plan.roundMaxMs + 2 * cap) + STORM_OVERHEAD_MS;
  if (deadline < need)
    out.push({
      segments: file.deadline_ms === undefined ? ['storm'] : ['deadline_ms'],
      at: file.deadline_ms === undefined ? 'key' : 'value',
      message: `consumer processes are killed at deadline_ms (${deadline} ms), but ${plan.rounds} rounds may take up to ${plan.roundMaxMs} ms each: deadline_ms must be at least ${need}`,
    });
  return out;
}

/** Attempts whose nominal step is below the cap: n = 0 .. preCapSteps - 1. */
export const preCapSteps = (base: number, cap: number): number => {
  let n = 0;
  while (base * 2 ** n < cap) n++;
  return n;
};
