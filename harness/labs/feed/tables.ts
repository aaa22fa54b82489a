// The feed lab's tables, as data every report draws: the final state (expected from the chain,
// the consumer's store, the control's store, each judged against the chain above its own
// snapshot), one row per process, and one row per connection of the consumer under test (the
// cut, the replay and the resends show there).

import type { Table } from '../../verdict.js';
import type { ConnFacts, ProcessFacts } from './facts.js';
import type { FeedPlan } from './plan.js';
import { describeView, type Expected, type StoreSummary, viewOf } from './state.js';
import { plural, seconds, shortAccount, shortAmount, shortCursor } from './words.js';

export function stateTable(expected: Expected, consumer: StoreSummary, control: StoreSummary): Table {
  const last = expected.events.at(-1);
  const balances = expected.topics.map((a) => `${shortAccount(a)} ${shortAmount((expected.balances.get(a) ?? 0n).toString())}`).join(', ');
  const row = (label: string, s: StoreSummary) => ({
    label,
    cells: [
      shortCursor(s.cursor),
      shortCursor(s.snapshotCursor),
      s.exists && !s.error ? `${s.events} (expected ${s.expectedEvents} above its snapshot)` : '—',
      s.exists && !s.error ? (s.balanceDiffs.length ? `${plural(s.balanceDiffs.length, 'balance')} wrong` : 'as the chain says') : '—',
      s.differs ? s.line : 'none',
    ],
    ok: !s.differs,
  });
  return {
    id: 'state',
    title: "Final state: the chain's end vs consumer vs control",
    columns: ['cursor', 'snapshot at', 'activity list (events)', 'balances', 'differences from what was expected'],
    rows: [
      {
        label: 'expected (from the chain)',
        cells: [last ? shortCursor(last.cursor) : '—', '—', `${expected.events.length} on the chain for the followed accounts`, balances, ''],
      },
      row('consumer under test', consumer),
      row('control consumer', control),
    ],
    note: "Cursors are block:log index. Each store is judged against the chain's events above its own snapshot: a snapshot is taken at the safe height whenever a consumer needs one, so the two stores' snapshots differ with timing and are never compared with each other.",
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
