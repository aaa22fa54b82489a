// A ledger store against the script, as numbers a reader can check: what is missing, what was
// never in the script, which deltas differ. Arrays instead of maps where the script is dense
// (seqs 0…n-1), so a 100 000-event run stays fast.

import type { StoreSnapshot } from './store-reader.js';

export interface StoreState {
  /** Which read the numbers come from. */
  read: 'final' | 'after-exit' | 'while-stopped';
  exists: boolean;
  error?: string;
  last: number | null;
  total: number | null;
  rows: number;
  ledgerSum: number;
  /** Seqs of the expected prefix of the script that the ledger does not hold. */
  missing: number[];
  /** Seqs the ledger holds that the script never had. */
  extra: number[];
  wrongDelta: { seq: number; got: number; want: number }[];
}

export interface Expected {
  last: number;
  total: number;
  events: number;
}

/** The expected state after the script's prefix 0..last. */
export function expectedAfter(events: readonly { seq: number; delta: number }[], last: number): Expected {
  const length = Math.max(0, Math.min(last + 1, events.length));
  let total = 0;
  for (let seq = 0; seq < length; seq++) total += events[seq]!.delta;
  return { last, total, events: length };
}

/** The script's delta for a seq, or undefined where the script has no such seq (the script is dense: `events[seq].seq === seq`). */
export const scriptDeltaOf =
  (events: readonly { seq: number; delta: number }[]) =>
  (seq: number): number | undefined =>
    Number.isInteger(seq) && seq >= 0 && seq < events.length ? events[seq]!.delta : undefined;

export function storeState(
  store: StoreSnapshot,
  events: readonly { seq: number; delta: number }[],
  expectedLast: number,
  read: StoreState['read'],
): StoreState {
  const ledger = store.ledger;
  const row = store.checkpoint.length === 1 ? store.checkpoint[0] : undefined;
  const deltaOf = scriptDeltaOf(events);
  const held = new Uint8Array(events.length);
  let ledgerSum = 0;
  const extra: number[] = [];
  const wrongDelta: StoreState['wrongDelta'] = [];
  for (const [seq, delta] of ledger) {
    ledgerSum += delta;
    const want = deltaOf(seq);
    if (want === undefined) extra.push(seq);
    else {
      held[seq] = 1;
      if (want !== delta) wrongDelta.push({ seq, got: delta, want });
    }
  }
  const missing: number[] = [];
  for (let seq = 0; seq <= expectedLast && seq < events.length; seq++) if (!held[seq]) missing.push(seq);
  return {
    read,
    exists: store.exists,
    ...(store.error ? { error: store.error } : {}),
    last: row?.last ?? null,
    total: row?.total ?? null,
    rows: ledger.length,
    ledgerSum,
    missing,
    extra,
    wrongDelta,
  };
}

/** "seq 7", "seqs 3, 4, 9", "seqs 100…9000 (8 901 seqs)", "seqs 1, 5…9, 12 (7 seqs)". */
export function seqList(seqs: number[], maxParts = 6): string {
  if (seqs.length === 1) return `seq ${seqs[0]}`;
  const sorted = [...seqs].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}…${sorted[j]}` : j === i ? `${sorted[i]}` : `${sorted[i]}, ${sorted[j]}`);
    i = j + 1;
  }
  const shown = parts.length > maxParts ? [...parts.slice(0, maxParts), '…'] : parts;
  const all = shown.join(', ');
  const plain = parts.length <= maxParts && !parts.some((p) => p.includes('…'));
  return plain ? `seqs ${all}` : `seqs ${all} (${count(sorted.length)} seqs)`;
}

/** 8901 -> "8 901". */
export const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

/** One line: how a store departs from what was expected of it, or that it matches. */
export function stateLine(s: StoreState, expected: Expected): { line: string; differs: boolean } {
  if (!s.exists) return { line: 'no SQLite file was ever created', differs: true };
  if (s.error) return { line: `the file cannot be read as a ledger (${s.error})`, differs: true };
  const parts: string[] = [];
  if (s.missing.length) parts.push(`${seqList(s.missing)} missing`);
  if (s.extra.length) parts.push(`${seqList(s.extra)} not in the script`);
  for (const w of s.wrongDelta.slice(0, 3)) parts.push(`seq ${w.seq} has delta ${w.got}, the script says ${w.want}`);
  if (s.last !== expected.last) parts.push(`last ${s.last ?? '—'}, expected ${expected.last}`);
  if (s.total !== expected.total) parts.push(`total ${s.total ?? '—'}, expected ${expected.total}`);
  if (s.total !== null && s.total !== s.ledgerSum) parts.push(`total ${s.total} but the ledger rows sum to ${s.ledgerSum}`);
  if (parts.length === 0) return { line: `matches the script (last ${s.last}, total ${s.total}, ${count(s.rows)} rows)`, differs: false };
  return { line: parts.join('; '), differs: true };
}
