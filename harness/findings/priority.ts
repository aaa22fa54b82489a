// Which finding leads a verdict. A checker finds problems in the order it looks for them, and
// the first is often a consequence ("the store differs from the control's") of a cause found
// later ("seq 3 applied twice"). Each lab ranks its finding codes in one table (data, not
// re-derived by any renderer); the checker orders its findings by it, and the headline is the
// first of them. Every renderer, results.json and chaos repros take that order and headline.

import type { Finding } from './verdict.js';

/** A mistake named in the student's words, with the contract line it breaks: it leads. */
export const CAUSE = 30;
/** What was seen (a read, an exit, a line), not yet why: the default for a code a table does not list. */
export const SYMPTOM = 20;
/** What follows from the others (a final state, a missing ACK of an event already acknowledged): last. */
export const CONSEQUENCE = 10;

/** A lab's table: finding code → priority (higher leads; `CAUSE + 1` outranks other causes). */
export type FindingPriorities = Readonly<Record<string, number>>;

export const priorityOf = (code: string, priorities: FindingPriorities): number => priorities[code] ?? SYMPTOM;

/** `findings` ordered by priority, highest first; equal priorities keep the checker's order. */
export function rankFindings(findings: readonly Finding[], priorities: FindingPriorities): Finding[] {
  return findings
    .map((f, i) => ({ f, i, p: priorityOf(f.code, priorities) }))
    .sort((a, b) => b.p - a.p || a.i - b.i)
    .map((x) => x.f);
}

/** A failing verdict's headline: the harness's own error first, else the leading finding. */
export function failHeadline(v: { findings: readonly Finding[]; harnessErrors: readonly Finding[] }): string {
  const lead = v.harnessErrors[0] ?? v.findings[0];
  if (!lead) throw new Error('a failing verdict needs a finding or a harness error for its headline');
  return lead.text;
}
