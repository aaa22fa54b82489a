// Small formatting helpers shared by the feed lab's checker, tables and vocabulary: cursors,
// accounts, amounts and lists in the few words a report line has room for.

/** 8901 -> "8 901". */
export const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

export const plural = (n: number, word: string, words = `${word}s`): string => `${count(n)} ${n === 1 ? word : words}`;

/** "1:00000000000057:0003" -> "57:3" (block:log index), for tables; anything else as it is. */
export function shortCursor(cursor: unknown): string {
  if (cursor === null || cursor === undefined) return 'null';
  const m = typeof cursor === 'string' ? /^\d+:(\d{14}):(\d{4})$/.exec(cursor) : null;
  return m ? `${Number(m[1])}:${Number(m[2])}` : String(cursor);
}

/** The block number of a well-formed cursor, else undefined. */
export function blockOf(cursor: unknown): number | undefined {
  const m = typeof cursor === 'string' ? /^\d+:(\d{14}):\d{4}$/.exec(cursor) : null;
  return m ? Number(m[1]) : undefined;
}

/** "cursor 1:…57:0003" lists: the first few in full, then how many more. */
export function cursorList(cursors: readonly string[], max = 4): string {
  if (cursors.length === 0) return 'none';
  const shown = cursors.slice(0, max).join(', ');
  return cursors.length > max ? `${shown}, … (${count(cursors.length)} in all)` : shown;
}

/** "0x1234…abcd". */
export const shortAccount = (account: string): string => (account.length > 14 ? `${account.slice(0, 6)}…${account.slice(-4)}` : account);

/** An amount of up to 78 digits in a few characters: "1 234 567" or "1157…7935 (78 digits)". */
export function shortAmount(amount: string): string {
  if (!/^-?\d+$/.test(amount)) return JSON.stringify(amount);
  if (amount.length <= 12) return amount.replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
  return `${amount.slice(0, 4)}…${amount.slice(-4)} (${amount.length} digits)`;
}

/** A finding names at most this many cursors as its subject. */
export const SUBJECT_MAX = 100;

/**
 * A cursor's block number: the position the vocabulary gives wire lines (a diagram's collapsed
 * band reads "event 9…12", blocks 9 to 12), and the `seqs` a finding's subject names for it.
 */
export function positionOf(cursor: unknown): number | undefined {
  return blockOf(cursor);
}

/** A finding's subject for these cursors (also as diagram positions: their blocks). */
export function cursorSubject(cursors: readonly string[]): { cursors: string[]; seqs: number[] } {
  const some = cursors.slice(0, SUBJECT_MAX);
  return { cursors: some, seqs: [...new Set(some.flatMap((c) => (positionOf(c) === undefined ? [] : [positionOf(c)!])))] };
}
