// The feed contract's CHAOSLAB_FAULT grammar (section 7): comma-separated `<action>@<point>:<n>`,
// no spaces, no empty items, n >= 1 without a leading zero. Parsed here exactly as a consumer
// must parse it, with the reason when it does not parse.

import { FAULT_ACTIONS, FAULT_PLAN_PATTERN, FAULT_POINTS } from './scenario-schema.js';

export type FaultAction = (typeof FAULT_ACTIONS)[number];
export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface FaultStep {
  action: FaultAction;
  point: FaultPoint;
  n: number;
}

const FAULT_PLAN_RE = new RegExp(FAULT_PLAN_PATTERN);
export const FAULT_SHAPE = '<action>@<point>:<n>';

export function parseFaultPlan(plan: string): { ok: true; steps: FaultStep[] } | { ok: false; reason: string } {
  if (FAULT_PLAN_RE.test(plan)) {
    const steps = plan.split(',').map((item) => {
      const [head, n] = item.split(':') as [string, string];
      const [action, point] = head.split('@') as [FaultAction, FaultPoint];
      return { action, point, n: Number(n) };
    });
    return { ok: true, steps };
  }
  return { ok: false, reason: faultPlanReason(plan) };
}

/** The steps of a plan known to be valid (the scenario's schema checked it); [] for none. */
export const faultSteps = (plan: string | undefined): FaultStep[] => {
  if (plan === undefined) return [];
  const parsed = parseFaultPlan(plan);
  return parsed.ok ? parsed.steps : [];
};

function faultPlanReason(plan: string): string {
  if (plan === '') return 'the plan is empty (leave `fault` out for none)';
  if (/\s/.test(plan)) return 'no spaces allowed';
  const items = plan.split(',');
  for (const [i, item] of items.entries()) {
    const where = items.length > 1 ? `item ${i + 1} "${item}": ` : '';
    if (item === '') return `${where}empty item (stray comma)`;
    const m = /^([^@:]*)@([^@:]*):([^@:]*)$/.exec(item);
    if (!m) {
      if (!item.includes('@')) return `${where}missing "@<point>"`;
      if (!item.includes(':')) return `${where}missing ":<n>"`;
      return `${where}not ${FAULT_SHAPE}`;
    }
    const [, action, point, n] = m as unknown as [string, string, string, string];
    if (!(FAULT_ACTIONS as readonly string[]).includes(action)) return `${where}action must be ${FAULT_ACTIONS.join('|')} (got "${action}")`;
    if (!(FAULT_POINTS as readonly string[]).includes(point)) return `${where}point must be ${FAULT_POINTS.join('|')} (got "${point}")`;
    if (!/^[1-9][0-9]*$/.test(n)) return `${where}n must be a number >= 1 without sign or leading zeros (got "${n}"): hooks count from 1`;
  }
  return `not ${FAULT_SHAPE}[,...]`;
}
