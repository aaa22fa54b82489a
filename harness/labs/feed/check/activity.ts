// The activity list a store holds against the one it must hold (the chain's events above its
// snapshot), entry by entry, and the first entry where they part: what the state table marks.
// Only a window around that entry is kept, so a list of 100 000 events costs a few rows.

import { isDeepStrictEqual } from 'node:util';
import type { RealEvent } from '../../../../publisher/feed/server/misbehaviour.js';
import { shortAccount, shortAmount, shortCursor } from '../report/words.js';

/** One entry of an activity list, in a few words: "23:1 Transfer 1 234 0xa1a1…a1a1 → 0xb2b2…b2b2". */
export interface ActivityEntry {
  cursor: string;
  text: string;
}

export interface ActivityRow {
  /** 1-based position in the list. */
  index: number;
  expected?: ActivityEntry;
  held?: ActivityEntry;
  /** The two entries agree (same cursor, same type, same payload). */
  same: boolean;
}

export interface ActivityComparison {
  /** 1-based position of the first entry where the lists part, absent when they are the same. */
  firstDifference?: number;
  /** The rows around it (or the end of the lists when they agree). */
  rows: ActivityRow[];
  /** Entries of either list before and after the rows shown. */
  before: number;
  after: number;
}

/** What a stored or expected event looks like, in the few words a table cell has. */
export function entryWords(cursor: string, type: string, payload: unknown): string {
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>;
  const amount = typeof p.amount === 'string' ? shortAmount(p.amount) : p.amount === undefined ? '' : `${JSON.stringify(p.amount)} (not text)`;
  const side = (v: unknown): string => (typeof v === 'string' ? shortAccount(v) : '?');
  const transfer = 'from' in p || 'to' in p ? ` ${side(p.from)} → ${side(p.to)}` : '';
  return `${shortCursor(cursor)} ${type}${amount ? ` ${amount}` : ''}${transfer}`;
}

export interface HeldEvent {
  cursor: string;
  type: string;
  payloadText: string;
  payload?: unknown;
}

const heldWords = (e: HeldEvent): string =>
  e.payload === undefined ? `${shortCursor(e.cursor)} ${e.type} ${e.payloadText.slice(0, 40)}` : entryWords(e.cursor, e.type, e.payload);

/** The two lists side by side: `context` rows before the first difference, `after` rows from it on. */
export function compareActivity(want: readonly RealEvent[], held: readonly HeldEvent[], context = 3, shown = 7): ActivityComparison {
  const same = (i: number): boolean => {
    const w = want[i];
    const h = held[i];
    return (
      w !== undefined && h !== undefined && w.cursor === h.cursor && w.type === h.type && h.payload !== undefined && isDeepStrictEqual(h.payload, w.payload)
    );
  };
  const length = Math.max(want.length, held.length);
  let first = 0;
  while (first < length && same(first)) first++;
  const differs = first < length;
  const from = differs ? Math.max(0, first - context) : Math.max(0, length - context);
  const to = differs ? Math.min(length, first + shown) : length;
  const rows: ActivityRow[] = [];
  for (let i = from; i < to; i++) {
    const w = want[i];
    const h = held[i];
    rows.push({
      index: i + 1,
      ...(w ? { expected: { cursor: w.cursor, text: entryWords(w.cursor, w.type, w.payload) } } : {}),
      ...(h ? { held: { cursor: h.cursor, text: heldWords(h) } } : {}),
      same: same(i),
    });
  }
  return { ...(differs ? { firstDifference: first + 1 } : {}), rows, before: from, after: length - to };
}
