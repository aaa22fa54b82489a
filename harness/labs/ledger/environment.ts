// The contract's duty "exit 64 on a bad environment": a consumer given a missing or invalid
// CHAOSLAB_* variable names it on stderr and exits with 64 before connecting anything (so it
// never writes its store either). A scenario with `consumer.env` / `consumer.unset` grades
// exactly that; this module says which values are bad and what the consumer did instead.

import type { JournalEntry } from '../../journal.js';
import type { Finding } from '../../verdict.js';
import type { IncarnationFacts } from './checker.js';
import { FAULT_PLAN_PATTERN } from './scenario-schema.js';
import type { StoreSnapshot } from './store-reader.js';

const FAULT_PLAN = new RegExp(FAULT_PLAN_PATTERN);
const POSITIVE = /^[1-9][0-9]*$/;
/** The contract's status for a missing or invalid environment. */
export const EXIT_ENV = 64;

/** Why `value` is not a valid `name` under the contract (section 1), or undefined when it is valid. */
export function badValue(name: string, value: string): string | undefined {
  switch (name) {
    case 'CHAOSLAB_PORT':
      return POSITIVE.test(value) && Number(value) <= 65535 ? undefined : 'not a TCP port 1..65535';
    case 'CHAOSLAB_TIMEOUT_MS':
      return POSITIVE.test(value) && Number(value) <= 2 ** 31 - 1 ? undefined : 'not a positive number of milliseconds';
    case 'CHAOSLAB_FAULT':
      return FAULT_PLAN.test(value) ? undefined : value === '' ? 'set but empty' : 'not a fault plan';
    default:
      return value === '' ? 'empty' : undefined;
  }
}

/** `CHAOSLAB_PORT was "not-a-port"`, `CHAOSLAB_DB was unset`. */
export function describeBadEnvironment(bad: { set: Record<string, string>; unset: string[] }): string {
  return [...Object.entries(bad.set).map(([name, value]) => `${name} was ${JSON.stringify(value)}`), ...bad.unset.map((name) => `${name} was unset`)].join(
    ' and ',
  );
}

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
 * The findings of a bad-environment run, the exit first (the duty itself), then what the
 * consumer should never have got to: a connection, a write to its store.
 */
export function environmentProblems(
  journal: readonly JournalEntry[],
  stream: string,
  bad: { set: Record<string, string>; unset: string[] },
  incarnations: IncarnationFacts[],
  store: StoreSnapshot,
  deadlineMs: number,
): Finding[] {
  const when = `when ${describeBadEnvironment(bad)}`;
  const duty = `a consumer given a missing or invalid CHAOSLAB_* variable must name it on stderr and exit ${EXIT_ENV} before connecting`;
  const f = incarnations[0];
  const process = { role: 'consumer' as const, incarnation: 1 };
  const problems: Finding[] = [];
  if (!f?.exit)
    problems.push({ code: 'never-ended', text: `the consumer was never started or never ended ${when} (the run was cut short)`, subject: { process } });
  else if (f.exit.killedBy === 'deadline')
    problems.push({
      code: 'env-still-running',
      text: `the consumer was still running after ${(deadlineMs / 1000).toFixed(0)} s ${when}, and was killed at the deadline: ${duty}, at once`,
      subject: { process, t: f.exit.t },
    });
  else if (f.exit.code !== EXIT_ENV)
    problems.push({
      code: 'env-wrong-exit',
      text: `the consumer ${f.exit.signal ? `was killed by ${f.exit.signal}` : `exited ${f.exit.code}`} instead of ${EXIT_ENV} ${when}: ${duty}`,
      subject: { process, t: f.exit.t },
    });
  const connections = connectionsOf(journal, stream, 1);
  if (connections > 0)
    problems.push({
      code: 'env-connected',
      text: `the consumer connected anyway ${when} (${connections === 1 ? 'one connection' : `${connections} connections`}${f?.resumes.length ? `, RESUME ${f.resumes[0]}` : ''}${f?.acks.length ? `, ${f.acks.length} ACKs` : ''}): nothing may be connected before the environment is valid`,
      subject: { process },
    });
  if (storeWritten(store)) {
    const c = store.checkpoint[0];
    problems.push({
      code: 'env-wrote-store',
      text: `the consumer wrote to its store ${when} (last ${c?.last ?? '—'}, total ${c?.total ?? '—'}, ${store.ledger.length} ledger rows): it must exit before opening anything`,
    });
  }
  return problems;
}

/** One fact per line, for the report's smallest diff. */
export function environmentDiff(problems: readonly Finding[], incarnations: IncarnationFacts[]): string[] {
  if (problems.length === 0) return [];
  const exit = incarnations[0]?.exit;
  const ended = !exit ? 'never ended' : exit.killedBy ? `killed at the ${exit.killedBy}` : exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`;
  return [
    `exit: ${ended}, expected ${EXIT_ENV}`,
    ...problems.filter((p) => p.code === 'env-connected').map(() => 'connections: at least one, expected none'),
    ...problems.filter((p) => p.code === 'env-wrote-store').map(() => 'store: written, expected untouched'),
  ];
}
