// The feed contract's duty "exit 64 on a bad environment" (section 1): which values are bad, and
// the verdict of a run that gives the consumer one. The duty itself is judged by the core
// (harness/judge/environment-duty.ts); this module knows the feed's variables and its store.

import { type BadEnvironment, describeBadEnvironment, environmentDutyDiff, environmentDutyProblems } from '../../../judge/environment-duty.js';
import { statusOf, type Verdict } from '../../../findings/verdict.js';
import type { RunFacts } from './facts.js';
import { FAULT_PLAN_PATTERN } from '../scenario/schema.js';
import type { FeedStoreSnapshot } from './store-reader.js';

const FAULT_PLAN = new RegExp(FAULT_PLAN_PATTERN);
const MAX_MS = 2 ** 31 - 1;
const ACCOUNT = /^0x[0-9a-f]{40}$/;
const time = (value: string, min: 0 | 1): boolean => (min === 0 ? /^(0|[1-9][0-9]*)$/ : /^[1-9][0-9]*$/).test(value) && Number(value) <= MAX_MS;

/** Why `value` is not a valid `name` under the contract (section 1), or undefined when it is valid on its own. */
export function badValue(name: string, value: string): string | undefined {
  switch (name) {
    case 'CHAOSLAB_PORT':
      return /^[1-9][0-9]*$/.test(value) && Number(value) <= 65535 ? undefined : 'not a TCP port 1..65535';
    case 'CHAOSLAB_TOPICS': {
      const topics = value.split(',');
      if (!topics.every((t) => ACCOUNT.test(t))) return 'not a comma-separated list of accounts (0x + 40 lowercase hex digits)';
      return new Set(topics).size === topics.length ? undefined : 'an account listed twice';
    }
    case 'CHAOSLAB_PING_MS':
    case 'CHAOSLAB_IDLE_MS':
    case 'CHAOSLAB_BACKOFF_BASE_MS':
    case 'CHAOSLAB_BACKOFF_CAP_MS':
      return time(value, 1) ? undefined : 'not a number of milliseconds 1..2147483647';
    case 'CHAOSLAB_APPLY_DELAY_MS':
      return time(value, 0) ? undefined : 'not a number of milliseconds 0..2147483647';
    case 'CHAOSLAB_FAULT':
      return FAULT_PLAN.test(value) ? undefined : value === '' ? 'set but empty' : 'not a fault plan';
    default:
      return value === '' ? 'empty' : undefined;
  }
}

/** Why the backoff pair is invalid together (CAP below BASE), given the values the consumer will see. */
export function badBackoff(base: string, cap: string): string | undefined {
  return time(base, 1) && time(cap, 1) && Number(cap) < Number(base) ? `CHAOSLAB_BACKOFF_CAP_MS ${cap} is below CHAOSLAB_BACKOFF_BASE_MS ${base}` : undefined;
}

/** The consumer's store holds anything at all: the contract asks it not even to create the file. */
function written(store: FeedStoreSnapshot): string | undefined {
  if (!store.exists) return undefined;
  if (store.error) return `the file exists (${store.error})`;
  const cursor = store.state[0]?.cursor;
  return `the file exists: ${store.events.length} events, ${store.balances.length} balances, cursor ${typeof cursor === 'string' ? cursor : 'NULL'}`;
}

const exitWords = (exit: { code: number | null; signal: string | null; killedBy?: string } | undefined): string =>
  !exit ? 'never ended' : exit.killedBy ? `killed (${exit.killedBy})` : exit.signal ? `killed by ${exit.signal}` : String(exit.code);

/** The verdict of a bad-environment run: one plain process, which must exit 64 before connecting or creating its store. */
export function environmentVerdict(facts: RunFacts, bad: BadEnvironment, store: FeedStoreSnapshot, deadlineMs: number): Verdict {
  const process = facts.consumers[0];
  const conns = process?.conns ?? [];
  const subscribe = conns.find((c) => c.subscribe?.frame)?.subscribe?.frame;
  const problems = environmentDutyProblems({
    bad,
    ...(process?.exit ? { exit: process.exit } : {}),
    connections: conns.length,
    ...(subscribe ? { connectedDetail: `, subscribed with cursor ${subscribe.cursor ?? 'null'}` } : {}),
    ...(written(store) === undefined ? {} : { written: written(store)! }),
    deadlineMs,
  });
  const status = statusOf(problems, []);
  return {
    status,
    headline: status === 'pass' ? `the consumer exited 64 when ${describeBadEnvironment(bad)}, without connecting or creating its store` : problems[0]!.text,
    findings: problems,
    harnessErrors: [],
    diff: environmentDutyDiff(problems, process?.exit),
    state: {
      id: 'state',
      title: 'A bad environment: the consumer must leave no trace',
      columns: ['exit', 'connections', 'store'],
      rows: [
        { label: 'expected', cells: ['64', '0', 'no file'] },
        { label: 'consumer under test', cells: [exitWords(process?.exit), String(conns.length), written(store) ?? 'no file'], ok: status === 'pass' },
      ],
    },
    tables: [],
  };
}
