// The ledger lab's tables, as data every report draws: the final state (expected, consumer,
// control — each judged against its own expectation) and one row per consumer incarnation.

import type { Table } from '../../../findings/verdict.js';
import type { IncarnationFacts } from '../check/incarnations.js';
import { acksList } from '../check/acks.js';
import { type Expected, type StoreState, stateLine } from '../check/state.js';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

/** `untouched`: the consumer must leave its store alone (a bad environment), so no file at all is as expected. */
export function stateTable(expected: Expected, controlExpected: Expected, consumer: StoreState, control: StoreState, untouched = false): Table {
  // The control is the reference, not under test: neutral when right, marked only when wrong.
  const row = (label: string, s: StoreState, want: Expected, reference = false) => {
    const d = untouched && s === consumer && !s.exists ? { line: 'none', differs: false } : stateLine(s, want);
    return { label, cells: [s.last, s.total, s.rows, s.ledgerSum, d.differs ? d.line : 'none'], ...(reference && !d.differs ? {} : { ok: !d.differs }) };
  };
  const partial = expected.last !== controlExpected.last;
  return {
    id: 'state',
    title: 'Final state: consumer vs expected vs control',
    columns: ['last', 'total', 'ledger rows', 'ledger sum', 'differences from what was expected'],
    rows: [
      { label: 'expected (from the script)', cells: [expected.last, expected.total, expected.events, expected.total, ''] },
      row('consumer under test', consumer, expected),
      row('control consumer', control, controlExpected, true),
    ],
    ...(untouched
      ? { note: 'Given a bad environment, the consumer under test must exit 64 before opening its store: no file, or an empty one, is expected.' }
      : partial
        ? {
            note: `The scenario expects the consumer under test to stop at seq ${expected.last}; the always-connected control consumer is judged against the whole script (last ${controlExpected.last}, total ${controlExpected.total}).`,
          }
        : {}),
  };
}

export function incarnationsTable(incarnations: IncarnationFacts[]): Table {
  return {
    id: 'incarnations',
    title: 'Consumer incarnations',
    columns: ['fault plan', 'started', 'RESUME', 'ACKs the publisher saw', 'ended', 'its file when it ended'],
    empty: 'No consumer incarnation in the journal.',
    rows: incarnations.map((r) => {
      const ended = !r.exit
        ? r.startedAt === undefined
          ? 'never started'
          : 'no exit recorded'
        : `${r.exit.killedBy ? `killed (${r.exit.killedBy})` : r.exit.signal ? `killed by ${r.exit.signal}` : `exit ${r.exit.code}`} at ${seconds(r.exit.t)}, ran ${seconds(r.exit.durationMs)}`;
      const c = r.fileAfter?.checkpoint?.[0];
      const file = r.fileAfter ? `last ${c?.last ?? '—'}, total ${c?.total ?? '—'}, ${r.fileAfter.ledger.length} rows` : '—';
      return {
        label: `#${r.incarnation}`,
        cells: [
          r.fault ?? '',
          r.startedAt === undefined ? '—' : `${seconds(r.startedAt)}${r.pid ? `, pid ${r.pid}` : ''}`,
          r.resumes.join(', ') || '—',
          acksList(r.acks),
          ended,
          file,
        ],
      };
    }),
  };
}
