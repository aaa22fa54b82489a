// The CHAOSLAB_FAULT grammar both labs' contracts share: comma-separated
// `<action>@<point>:<count>`, no spaces, no empty items. A lab names its actions, points and
// count (the ledger's seq may be 0; the feed's n counts hooks from 1) and its whole-plan pattern
// (its schema's); this parses a plan exactly as a consumer must, or says why it does not parse.

export interface FaultGrammar<A extends string, P extends string> {
  actions: readonly A[];
  points: readonly P[];
  /** The whole plan as the lab's scenario schema writes it. */
  pattern: string;
  /** What the count is called (`seq`, `n`), and why a given one is not valid (undefined: it is). */
  count: { name: string; problem(count: string): string | undefined };
  /** Why an empty plan is not valid, in the lab's words. */
  empty: string;
}

export interface GrammarStep<A extends string, P extends string> {
  action: A;
  point: P;
  count: number;
}

export type ParsedPlan<S> = { ok: true; steps: S[] } | { ok: false; reason: string };

export interface FaultPlanParser<A extends string, P extends string> {
  /** `<action>@<point>:<seq>` */
  shape: string;
  parse(plan: string): ParsedPlan<GrammarStep<A, P>>;
}

export function faultPlanParser<A extends string, P extends string>(grammar: FaultGrammar<A, P>): FaultPlanParser<A, P> {
  const whole = new RegExp(grammar.pattern);
  const shape = `<action>@<point>:<${grammar.count.name}>`;
  const reason = (plan: string): string => {
    if (plan === '') return grammar.empty;
    if (/\s/.test(plan)) return 'no spaces allowed';
    const items = plan.split(',');
    for (const [i, item] of items.entries()) {
      const where = items.length > 1 ? `item ${i + 1} "${item}": ` : '';
      if (item === '') return `${where}empty item (stray comma)`;
      const m = /^([^@:]*)@([^@:]*):([^@:]*)$/.exec(item);
      if (!m) {
        if (!item.includes('@')) return `${where}missing "@<point>"`;
        if (!item.includes(':')) return `${where}missing ":<${grammar.count.name}>"`;
        return `${where}not ${shape}`;
      }
      const [, action, point, count] = m as unknown as [string, string, string, string];
      if (!(grammar.actions as readonly string[]).includes(action)) return `${where}action must be ${grammar.actions.join('|')} (got "${action}")`;
      if (!(grammar.points as readonly string[]).includes(point)) return `${where}point must be ${grammar.points.join('|')} (got "${point}")`;
      const problem = grammar.count.problem(count);
      if (problem) return `${where}${problem}`;
    }
    return `not ${shape}[,...]`;
  };
  return {
    shape,
    parse(plan) {
      if (!whole.test(plan)) return { ok: false, reason: reason(plan) };
      const steps = plan.split(',').map((item) => {
        const [head, count] = item.split(':') as [string, string];
        const [action, point] = head.split('@') as [A, P];
        return { action, point, count: Number(count) };
      });
      return { ok: true, steps };
    },
  };
}
