// The smallest diff that shows a failure, one fact per line: how the consumer's store departs
// from the chain's end (missing, extra and changed events, balances, cursor), the findings that
// explain it, and the control's state when the harness itself is in doubt.

import type { Finding } from '../../../findings/verdict.js';
import type { Judgement } from './state.js';
import { cursorList, shortAmount } from '../report/words.js';

const MAX_FINDINGS = 6;

/** `label` names the judged store ("consumer", or a server run's "probe"); a server run has no control. */
export function smallestDiff(x: {
  consumer: Judgement;
  control?: Judgement;
  findings: readonly Finding[];
  harnessErrors: readonly Finding[];
  label?: string;
}): string[] {
  const diff: string[] = [];
  const label = x.label ?? 'consumer';
  const s = x.consumer.summary;
  if (s.differs) {
    diff.push(`${label}: ${s.line}`);
    if (s.missing.length) diff.push(`missing from its activity list: ${cursorList(s.missing)}`);
    for (const [why, cursors] of groupExtra(s.extra)) diff.push(`in its activity list but ${why}: ${cursorList(cursors)}`);
    if (s.wrongContent.length) diff.push(`stored with other content than the chain's: ${cursorList(s.wrongContent)}`);
    for (const d of s.balanceDiffs.slice(0, 3))
      diff.push(`balance of ${d.account}: ${shortAmount(d.got)}, the chain says ${shortAmount(d.want)}${d.hint ? ` (${d.hint})` : ''}`);
    if (s.cursor !== s.wantCursor) diff.push(`cursor ${s.cursor ?? 'NULL'}, expected ${s.wantCursor ?? 'NULL'}`);
  }
  const storeCodes = new Set(x.consumer.problems.map((p) => p.code));
  const others = x.findings.filter((f) => !storeCodes.has(f.code));
  diff.push(...others.slice(0, MAX_FINDINGS).map((f) => f.text));
  if (others.length > MAX_FINDINGS) diff.push(`… and ${others.length - MAX_FINDINGS} more findings`);
  const c = x.control?.summary;
  if (c?.differs) diff.push(`control: ${c.line}`);
  if (!s.differs) diff.push(`${label}: its store ${s.line}`);
  return diff;
}

function groupExtra(extra: readonly { cursor: string; why: string }[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const e of extra) groups.set(e.why, [...(groups.get(e.why) ?? []), e.cursor]);
  return groups;
}
