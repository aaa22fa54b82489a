// The contract's CHAOSLAB_FAULT grammar: comma-separated `<action>@<point>:<seq>`, no spaces, no
// empty items, seq without leading zeros. Parsed here exactly as a consumer must parse it (the
// grammar both labs share: harness/faults/plan-grammar.ts).

import { faultPlanParser, type ParsedPlan } from '../../../faults/plan-grammar.js';
import { FAULT_ACTIONS, FAULT_PLAN_PATTERN, FAULT_POINTS } from './schema.js';

export interface FaultStep {
  action: (typeof FAULT_ACTIONS)[number];
  point: (typeof FAULT_POINTS)[number];
  seq: number;
}

const grammar = faultPlanParser({
  actions: FAULT_ACTIONS,
  points: FAULT_POINTS,
  pattern: FAULT_PLAN_PATTERN,
  count: {
    name: 'seq',
    problem: (seq) => (/^(0|[1-9][0-9]*)$/.test(seq) ? undefined : `seq must be 0 or a number without sign or leading zeros (got "${seq}")`),
  },
  empty: 'the plan is empty',
});

export const FAULT_SHAPE = grammar.shape;

/** The steps of a CHAOSLAB_FAULT plan, or the reason the plan is not valid. */
export function parseFaultPlan(plan: string): ParsedPlan<FaultStep> {
  const parsed = grammar.parse(plan);
  return parsed.ok ? { ok: true, steps: parsed.steps.map(({ action, point, count }) => ({ action, point, seq: count })) } : parsed;
}
