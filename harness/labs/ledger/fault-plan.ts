// The contract's CHAOSLAB_FAULT grammar: comma-separated `<action>@<point>:<seq>`, no spaces, no
// empty items, seq without leading zeros. Parsed here exactly as a consumer must parse it.

import { FAULT_ACTIONS, FAULT_PLAN_PATTERN, FAULT_POINTS } from './scenario-schema.js';

export interface FaultStep {
  action: (typeof FAULT_ACTIONS)[number];
  point: (typeof FAULT_POINTS)[number];
  seq: number;
}

const FAULT_PLAN_RE = new RegExp(FAULT_PLAN_PATTERN);
export const FAULT_SHAPE = '<action>@<point>:<seq>';

/**
 * Parses a CHAOSLAB_FAULT plan exactly as the contract defines it (comma-separated
 * `<action>@<point>:<seq>`, no spaces, no empty items, seq without leading zeros).
 * Returns the steps, or the reason the plan is not valid.
 */
export function parseFaultPlan(plan: string): { ok: true; steps: FaultStep[] } | { ok: false; reason: string } {
  if (FAULT_PLAN_RE.test(plan)) {
    const steps = plan.split(',').map((item) => {
      const [head, seq] = item.split(':') as [string, string];
      const [action, point] = head.split('@') as [FaultStep['action'], FaultStep['point']];
      return { action, point, seq: Number(seq) };
    });
    return { ok: true, steps };
  }
  return { ok: false, reason: faultPlanReason(plan) };
}

function faultPlanReason(plan: string): string {
  if (plan === '') return 'the plan is empty';
  if (/\s/.test(plan)) return 'no spaces allowed';
  const items = plan.split(',');
  for (const [i, item] of items.entries()) {
    const where = items.length > 1 ? `item ${i + 1} "${item}": ` : '';
    if (item === '') return `${where}empty item (stray comma)`;
    const m = /^([^@:]*)@([^@:]*):([^@:]*)$/.exec(item);
    if (!m) {
      if (!item.includes('@')) return `${where}missing "@<point>"`;
      if (!item.includes(':')) return `${where}missing ":<seq>"`;
      return `${where}not ${FAULT_SHAPE}`;
    }
    const [, action, point, seq] = m as unknown as [string, string, string, string];
    if (!(FAULT_ACTIONS as readonly string[]).includes(action)) return `${where}action must be ${FAULT_ACTIONS.join('|')} (got "${action}")`;
    if (!(FAULT_POINTS as readonly string[]).includes(point)) return `${where}point must be ${FAULT_POINTS.join('|')} (got "${point}")`;
    if (!/^(0|[1-9][0-9]*)$/.test(seq)) return `${where}seq must be 0 or a number without sign or leading zeros (got "${seq}")`;
  }
  return `not ${FAULT_SHAPE}[,...]`;
}

// ---------------------------------------------------------------------------------------------
// Schema validation
