// What each probe and each client of a server run received against what it was due, from its
// wire record (the checker's facts, a table of the verdict; no finding here: the findings judge
// the stores and the wire elsewhere). Due: the chain's events for its topics after where it
// started (its first snapshot, else the cursor of its first subscribe). Received: every event
// frame the server sent it, over all its connections, so a replay after a reconnect counts twice.

import { compareCursors, type Cursor, parseCursor } from '../../../../../protocol/feed/cursor.js';
import type { Verdict } from '../../../../findings/verdict.js';
import { castOf } from '../../../../record/cast.js';
import type { JournalEntry } from '../../../../record/journal.js';
import type { Expected } from '../../check/state.js';

export interface Tally {
  name: string;
  due: number;
  received: number;
  /** Due events never received. */
  missing: number;
  /** Event frames beyond the first for a cursor (replays after a reconnect, or duplicates). */
  repeated: number;
  /** Events received that were not due: of a branch later abandoned, or before where it started. */
  notDue: number;
  /** The reset frames' reasons, in order. */
  resets: string[];
  revokes: number;
}

function frameOf(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const cursorOr = (text: unknown): Cursor | undefined => {
  try {
    return parseCursor(text);
  } catch {
    return undefined;
  }
};

/** One stream's tally; `topicsDue` false for a client that follows no account of the chain. */
export function tallyOf(journal: readonly JournalEntry[], stream: string, name: string, expected: Expected, topicsDue: boolean): Tally {
  const seen = new Map<string, number>();
  const resets: string[] = [];
  let revokes = 0;
  let start: Cursor | undefined;
  let subscribed: Cursor | undefined;
  let received = 0;
  for (const e of journal) {
    if (e.type !== 'wire' || e.stream !== stream || (e.kind !== 'send' && e.kind !== 'recv')) continue;
    const f = frameOf(e.line);
    if (!f) continue;
    if (e.kind === 'recv') {
      if (f.op === 'subscribe' && subscribed === undefined && start === undefined) subscribed = cursorOr(f.cursor);
      continue;
    }
    if (f.op === 'snapshot') start ??= cursorOr(f.cursor);
    else if (f.op === 'reset') resets.push(typeof f.reason === 'string' ? f.reason : '?');
    else if (f.op === 'revoke') revokes++;
    else if (f.op === 'event' && typeof f.cursor === 'string') {
      received++;
      seen.set(f.cursor, (seen.get(f.cursor) ?? 0) + 1);
    }
  }
  const from = start ?? subscribed;
  const due =
    topicsDue && from && from.chainId === expected.chainId
      ? expected.events.filter((ev) => compareCursors(parseCursor(ev.cursor), from) > 0).map((ev) => ev.cursor)
      : [];
  const dueSet = new Set(due);
  return {
    name,
    due: due.length,
    received,
    missing: due.filter((c) => !seen.has(c)).length,
    repeated: received - seen.size,
    notDue: [...seen.keys()].filter((c) => !dueSet.has(c)).length,
    resets,
    revokes,
  };
}

/** Every client party of the run (probes and the harness's clients), in the order the run named them. */
export function deliveryTable(journal: readonly JournalEntry[], expected: Expected, quiet: ReadonlySet<string>): Verdict['tables'][number] {
  const tallies = castOf(journal)
    .parties.filter((p) => p.side === 'client')
    .flatMap((p) => p.streams.map((s) => tallyOf(journal, s, p.name, expected, !quiet.has(s))));
  return {
    id: 'delivery',
    title: 'Each probe and client: the events it was due against those the server sent it',
    columns: ['due', 'received', 'missing', 'repeated', 'not due', 'resets', 'revokes'],
    rows: tallies.map((t) => ({
      label: t.name,
      cells: [t.due, t.received, t.missing, t.repeated, t.notDue, t.resets.length ? `${t.resets.length}: ${t.resets.join(', ')}` : 0, t.revokes],
    })),
    note: 'Due: the chain’s events for its accounts after its first snapshot (or the cursor it first subscribed with). Received: every event frame the server sent it, over all its connections; a replay after a reconnect is counted again under repeated. Not due: events of a branch later revoked, or before where it started. A client reset as slow is due what it missed: the reset is its answer.',
  };
}
