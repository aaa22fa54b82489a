// Chain cursors `chainId:blockNumber:logIndex` (seed 002, T18): the chain's own coordinates, so
// they are monotonic, unique and the same on every instance and after every restart. The block
// is padded to 14 digits and the log index to 4, so cursors of one chain compare as strings.

export const BLOCK_DIGITS = 14;
export const LOG_INDEX_DIGITS = 4;
export const MAX_BLOCK_NUMBER = 10 ** BLOCK_DIGITS - 1;
export const MAX_LOG_INDEX = 10 ** LOG_INDEX_DIGITS - 1;

export interface Cursor {
  chainId: number;
  blockNumber: number;
  logIndex: number;
}

// Chain id: plain decimal, no leading zero, kept within a safe integer so it round-trips.
const CURSOR_RE = /^(0|[1-9][0-9]{0,15}):([0-9]{14}):([0-9]{4})$/;

export class CursorError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'CursorError';
  }
}

/** Parses a cursor string strictly; throws CursorError saying what is wrong. */
export function parseCursor(text: unknown): Cursor {
  if (typeof text !== 'string') throw new CursorError(`a cursor must be a string, not ${describeJson(text)}`);
  const m = CURSOR_RE.exec(text);
  if (!m) throw new CursorError(`malformed cursor ${JSON.stringify(text)} (want chainId:14-digit block:4-digit log index)`);
  const chainId = Number(m[1]);
  if (!Number.isSafeInteger(chainId)) throw new CursorError(`chain id ${m[1]} is too large`);
  return { chainId, blockNumber: Number(m[2]), logIndex: Number(m[3]) };
}

export function formatCursor(cursor: Cursor): string {
  const { chainId, blockNumber, logIndex } = cursor;
  if (!Number.isSafeInteger(chainId) || chainId < 0) throw new CursorError(`chain id ${chainId} is not a non-negative safe integer`);
  if (!Number.isInteger(blockNumber) || blockNumber < 0 || blockNumber > MAX_BLOCK_NUMBER)
    throw new CursorError(`block number ${blockNumber} does not fit 14 digits`);
  if (!Number.isInteger(logIndex) || logIndex < 0 || logIndex > MAX_LOG_INDEX) throw new CursorError(`log index ${logIndex} does not fit 4 digits`);
  return `${chainId}:${String(blockNumber).padStart(BLOCK_DIGITS, '0')}:${String(logIndex).padStart(LOG_INDEX_DIGITS, '0')}`;
}

/** Orders two positions of one chain: negative, 0 or positive. Cursors of different chains have no order. */
export function compareCursors(a: Cursor, b: Cursor): number {
  if (a.chainId !== b.chainId) throw new CursorError(`cursors of chains ${a.chainId} and ${b.chainId} cannot be compared`);
  return a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
}

/** A short description of a JSON value's type for error reasons. */
export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `the ${typeof value} ${String(value)}`;
}
