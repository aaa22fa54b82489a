// The feed contract's CHAOSLAB_FAULT grammar (section 7): comma-separated `<action>@<point>:<n>`,
// no spaces, no empty items, n >= 1 without a leading zero. Parsed here exactly as a consumer
// must parse it, with the reason when it does not parse (the grammar both labs share:
// harness/faults/plan-grammar.ts).

import { faultPlanParser, type ParsedPlan } from '../../../faults/plan-grammar.js';
import { FAULT_ACTIONS, FAULT_PLAN_PATTERN, FAULT_POINTS } from './schema.js';

export type FaultAction = (typeof FAULT_ACTIONS)[number];
export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface FaultStep {
  action: FaultAction;
  point: FaultPoint;
  n: number;
}

const grammar = faultPlanParser({
  actions: FAULT_ACTIONS,
  points: FAULT_POINTS,
  pattern: FAULT_PLAN_PATTERN,
  count: {
    name: 'n',
    problem: (n) => (/^[1-9][0-9]*$/.test(n) ? undefined : `n must be a number >= 1 without sign or leading zeros (got "${n}"): hooks count from 1`),
  },
  empty: 'the plan is empty (leave `fault` out for none)',
});

export const FAULT_SHAPE = grammar.shape;

export function parseFaultPlan(plan: string): ParsedPlan<FaultStep> {
  const parsed = grammar.parse(plan);
  return parsed.ok ? { ok: true, steps: parsed.steps.map(({ action, point, count }) => ({ action, point, n: count })) } : parsed;
}

/** The steps of a plan known to be valid (the scenario's schema checked it); [] for none. */
export const faultSteps = (plan: string | undefined): FaultStep[] => {
  if (plan === undefined) return [];
  const parsed = parseFaultPlan(plan);
  return parsed.ok ? parsed.steps : [];
};
