// The feed lab's tables, as data every report draws: the final state (expected from the chain,
// the consumer's store, the control's store, each judged against the chain above its own
// snapshot), one row per process, and one row per connection of the consumer under test (the
// cut, the replay and the resends show there).

import type { Table, TableRow } from '../../../findings/verdict.js';
import type { ActivityRow } from '../check/activity.js';
import type { ConnFacts, ProcessFacts } from '../check/facts.js';
import type { FeedPlan } from '../scenario/plan.js';
import { describeView, type Expected, type StoreSummary, viewOf } from '../check/state.js';
import { plural, seconds, shortAccount, shortAmount, shortCursor } from './words.js';

export function stateTable(expected: Expected, consumer: StoreSummary, control: StoreSummary): Table {
  return storesStateTable(
    expected,
    [
      ['consumer under test', consumer],
      ['control consumer', control, 'reference'],
    ],
    "Final state: the chain's end vs consumer vs control",
  );
}

/**
 * The chain's end against each store, one row per store (`[label, summary]`); a `reference` store
 * (the control) is drawn neutral when it is right, and wrong only when it is.
 */
export function storesStateTable(expected: Expected, stores: readonly (readonly [string, StoreSummary, 'reference'?])[], title: string): Table {
  const last = expected.events.at(-1);
  const balances = expected.topics.map((a) => `${shortAccount(a)} ${shortAmount((expected.balances.get(a) ?? 0n).toString())}`).join(', ');
  const row = (label: string, s: StoreSummary, reference?: 'reference') => ({
    label,
    cells: [
      shortCursor(s.cursor),
      shortCursor(s.snapshotCursor),
      s.exists && !s.error ? `${s.events} (expected ${s.expectedEvents} above its snapshot)` : '—',
      s.exists && !s.error ? (s.balanceDiffs.length ? `${plural(s.balanceDiffs.length, 'balance')} wrong` : 'as the chain says') : '—',
      firstDifference(s),
      s.differs ? s.line : 'none',
    ],
    ...(reference && !s.differs ? {} : { ok: !s.differs }),
  });
  return {
    id: 'state',
    title,
    columns: ['cursor', 'snapshot at', 'activity list (events)', 'balances', 'first difference in the activity list', 'differences from what was expected'],
    rows: [
      {
        label: 'expected (from the chain)',
        cells: [last ? shortCursor(last.cursor) : '—', '—', `${expected.events.length} on the chain for the followed accounts`, balances, '', ''],
      },
      ...stores.map(([label, summary, reference]) => row(label, summary, reference)),
    ],
    note: "Cursors are block:log index. Each store is judged against the chain's events above its own snapshot: a snapshot is taken at the safe height whenever a consumer needs one, so the two stores' snapshots differ with timing and are never compared with each other.",
  };
}

/** "#12: 23:1 Transfer …, expected 22:0 Transfer …": where a store's activity list first parts from the expected one. */
function firstDifference(s: StoreSummary): string {
  const a = s.activity;
  if (!a) return '—';
  if (a.firstDifference === undefined) return 'none';
  const row = a.rows.find((r) => r.index === a.firstDifference)!;
  const held = row.held ? `holds ${row.held.text}` : 'ends here';
  return `#${row.index}: ${held}, ${row.expected ? `expected ${row.expected.text}` : 'expected nothing more'}`;
}

const activityRow = (r: ActivityRow, first: number | undefined): TableRow => ({
  label: `#${r.index}`,
  ...(r.index === first ? { aside: '◀ first difference' } : {}),
  cells: [r.expected?.text ?? '— (the list ends)', r.held?.text ?? '— (the list ends)'],
  ok: r.same,
});

/**
 * The consumer's activity list against the expected one (the chain's events above its
 * snapshot), side by side around the first entry where they part; that row is marked.
 */
export function activityTable(s: StoreSummary): Table {
  const a = s.activity;
  const first = a?.firstDifference;
  const around = a && (a.before || a.after) ? ` Shown: entries ${a.before + 1} to ${a.before + a.rows.length} (${a.before} before, ${a.after} after).` : '';
  return {
    id: 'activity',
    title: 'Activity list: the consumer vs the chain',
    columns: ['expected (the chain above its snapshot)', 'the consumer holds'],
    empty: s.exists && !s.error ? 'Both lists are empty.' : 'The consumer has no readable store.',
    rows: a ? a.rows.map((r) => activityRow(r, first)) : [],
    note:
      first === undefined
        ? `The two lists agree entry by entry (${plural(s.events, 'event')}).${around}`
        : `The lists part at entry ${first}, marked; entries before it agree.${around}`,
  };
}

/**
 * Every followed account's balance: the chain's, the consumer's and the control's; only a wrong
 * value is marked (the expected one and a right one beside it stay neutral), the consumer's first
 * wrong account named.
 */
export function balancesTable(consumer: StoreSummary, control: StoreSummary): Table {
  const controlOf = new Map(control.balances.map((b) => [b.account, b]));
  const firstWrong = consumer.balances.find((b) => !b.ok)?.account;
  return {
    id: 'balances',
    title: 'Balances: the consumer vs the chain',
    columns: ['expected (the chain)', 'consumer under test', 'control consumer'],
    empty: 'No balance to compare (no readable store).',
    rows: consumer.balances.map((b) => {
      const c = controlOf.get(b.account);
      const hint = consumer.balanceDiffs.find((d) => d.account === b.account)?.hint;
      return {
        label: shortAccount(b.account),
        ...(b.account === firstWrong ? { aside: '◀ first difference' } : {}),
        cells: [shortAmount(b.want), `${shortAmount(b.got)}${hint ? ` (${hint})` : ''}`, c ? shortAmount(c.got) : '—'],
        ...(b.ok && (c?.ok ?? true) ? {} : { ok: false, wrong: [...(b.ok ? [] : [1]), ...(c && !c.ok ? [2] : [])] }),
      };
    }),
    note: 'An account with no row counts as 0. Amounts are decimal text; long ones show their first and last digits and their length.',
  };
}

const exitWords = (p: ProcessFacts): string => {
  const e = p.exit;
  if (!e) return p.startedAt === undefined ? 'never started' : 'no exit recorded';
  const how = e.killedBy ? `killed (${e.killedBy})` : e.signal ? `killed by ${e.signal}` : `exit ${e.code}`;
  const when = p.sigtermAt !== undefined ? `${seconds(e.t - p.sigtermAt)} after SIGTERM` : `at ${seconds(e.t)}, before the end`;
  return `${how} ${when}`;
};

export function processesTable(processes: readonly ProcessFacts[], lab: FeedPlan): Table {
  return {
    id: 'processes',
    title: 'Consumer processes',
    columns: ['fault plan', 'started', 'connections', 'subscribed from', 'snapshots received', 'ended', 'its file then'],
    empty: 'No process in the journal.',
    rows: processes.map((p) => {
      const subs = p.conns.flatMap((c) => (c.subscribe?.frame ? [shortCursor(c.subscribe.frame.cursor)] : []));
      const snapshots = p.conns.reduce((n, c) => n + c.sent.filter((s) => s.frame?.op === 'snapshot').length, 0);
      const lastRead = p.reads.filter((r) => r.when !== 'at-subscribe').at(-1) ?? p.reads.at(-1);
      return {
        label: p.role === 'control' ? 'control' : `#${p.incarnation}`,
        cells: [
          p.role === 'control' ? '(trusted, direct)' : (p.fault ?? (lab.consumer.applyDelayMs ? `apply delay ${lab.consumer.applyDelayMs} ms` : '')),
          p.startedAt === undefined ? '—' : `${seconds(p.startedAt)}${p.pid ? `, pid ${p.pid}` : ''}`,
          String(p.conns.length),
          subs.length <= 6 ? subs.join(', ') || '—' : `${subs.slice(0, 5).join(', ')}, … (${subs.length})`,
          String(snapshots),
          exitWords(p),
          lastRead ? `${describeView(viewOf(lastRead.store))} (${lastRead.when})` : '—',
        ],
      };
    }),
  };
}

/** What the server answered a subscribe with first: a snapshot, a revoke, a reset, a replay, or nothing yet. */
function answer(c: ConnFacts): string {
  const first = c.sent.find((s) => s.frame?.op !== 'ping' && s.frame?.op !== 'pong');
  if (!first) return c.subscribe ? 'nothing (live, no new event)' : '—';
  if (first.invalid !== undefined) return `an invalid frame (${first.note ?? first.invalid})`;
  const f = first.frame;
  if (!f) return first.unknownOp ? `unknown op ${first.unknownOp}` : '?';
  switch (f.op) {
    case 'snapshot':
      return `snapshot at ${shortCursor(f.cursor)}`;
    case 'revoke':
      return `revoke from ${shortCursor(f.fromCursor)}`;
    case 'reset':
      return `reset ${f.reason}`;
    case 'event':
      return `events from ${shortCursor(f.cursor)}`;
    default:
      return f.op;
  }
}

export function connectionsTable(conns: readonly ConnFacts[]): Table {
  const seen = new Set<string>();
  return {
    id: 'connections',
    title: 'Connections of the consumer under test',
    columns: ['process', 'opened', 'subscribe', 'answered with', 'events sent (first time / again)', 'pings answered', 'slowest pong', 'closed'],
    empty: 'The consumer under test never connected.',
    rows: conns.map((c) => {
      let fresh = 0;
      let again = 0;
      for (const s of c.sent) {
        if (s.frame?.op !== 'event') continue;
        if (seen.has(s.frame.cursor)) again++;
        else fresh++;
        seen.add(s.frame.cursor);
      }
      const answered = c.pings.filter((p) => c.pongs.has(p.id));
      const slowest = answered.reduce((ms, p) => Math.max(ms, c.pongs.get(p.id)! - p.t), 0);
      const sub = c.subscribe?.frame;
      return {
        label: `conn ${c.conn}`,
        cells: [
          c.owner ? `#${c.owner.incarnation}` : '—',
          seconds(c.openedAt),
          sub ? (sub.cursor === null ? 'cursor null (snapshot)' : `from ${shortCursor(sub.cursor)}`) : c.subscribe ? 'invalid' : 'none',
          answer(c),
          `${fresh} / ${again}`,
          `${answered.length} of ${c.pings.length}`,
          answered.length ? seconds(slowest) : '—',
          c.closedAt === undefined ? 'open at the end' : `${seconds(c.closedAt)} by ${c.closedBy}: ${c.closeReason}`,
        ],
      };
    }),
  };
}
