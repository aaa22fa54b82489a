// The contract's duty "exit 64 on a bad environment": a consumer given a missing or invalid
// CHAOSLAB_* variable names it on stderr and exits with 64 before connecting anything (so it
// never writes its store either). A scenario with `consumer.env` / `consumer.unset` grades
// exactly that; this module says which values are bad and what the consumer did instead.

import { type BadEnvironment, describeBadEnvironment, environmentDutyDiff, environmentDutyProblems } from '../../../judge/environment-duty.js';
import type { JournalEntry } from '../../../record/journal.js';
import type { Finding } from '../../../findings/verdict.js';
import type { IncarnationFacts } from './incarnations.js';
import { badValue } from '../scenario/environment-values.js';
import type { StoreSnapshot } from './store-reader.js';

export { badValue, describeBadEnvironment };

/** The connections the publisher saw from consumer process `incarnation`. */
const connectionsOf = (journal: readonly JournalEntry[], stream: string, incarnation: number): number =>
  journal.filter((e) => e.type === 'wire' && e.stream === stream && e.kind === 'open' && e.owner?.role === 'consumer' && e.owner.incarnation === incarnation)
    .length;

/** Whether the store holds anything a consumer wrote: a missing file, or tables with no event and last -1, is untouched. */
export function storeWritten(store: StoreSnapshot): boolean {
  if (!store.exists || store.error) return false;
  const last = store.checkpoint[0]?.last;
  return store.ledger.length > 0 || (last !== undefined && last !== -1);
}

/**
 * The findings of a bad-environment run (harness/judge/environment-duty.ts), in the ledger's words:
 * what a connection carried (RESUME, ACKs), what a written store holds.
 */
export function environmentProblems(
  journal: readonly JournalEntry[],
  stream: string,
  bad: BadEnvironment,
  incarnations: IncarnationFacts[],
  store: StoreSnapshot,
  deadlineMs: number,
): Finding[] {
  const f = incarnations[0];
  const c = store.checkpoint[0];
  return environmentDutyProblems({
    bad,
    ...(f?.exit ? { exit: f.exit } : {}),
    connections: connectionsOf(journal, stream, 1),
    connectedDetail: `${f?.resumes.length ? `, RESUME ${f.resumes[0]}` : ''}${f?.acks.length ? `, ${f.acks.length} ACKs` : ''}`,
    ...(storeWritten(store) ? { written: `last ${c?.last ?? '—'}, total ${c?.total ?? '—'}, ${store.ledger.length} ledger rows` } : {}),
    deadlineMs,
  });
}

/** One fact per line, for the report's smallest diff. */
export const environmentDiff = (problems: readonly Finding[], incarnations: IncarnationFacts[]): string[] =>
  environmentDutyDiff(problems, incarnations[0]?.exit);
