// A position in the outbox, (block, log index), the order rows are read in. Unlike a wire
// cursor it can also say "before the first log of a block" (log index -1): where a replay
// resumes after a revoke, which voids a whole block.

import { type Cursor, formatCursor, parseCursor } from '../../../protocol/feed/cursor.js';

export interface Position {
  block: number;
  logIndex: number;
}

export const comparePositions = (a: Position, b: Position): number => a.block - b.block || a.logIndex - b.logIndex;

/** Just before block `number`'s first log. */
export const positionBeforeBlock = (number: number): Position => ({ block: number, logIndex: -1 });

/** Just after block `number`'s last log (no block holds more than 10 000 logs). */
export const positionAfterBlock = (number: number): Position => ({ block: number, logIndex: 10_000 });

export const positionOf = (cursor: Cursor | string): Position => {
  const c = typeof cursor === 'string' ? parseCursor(cursor) : cursor;
  return { block: c.blockNumber, logIndex: c.logIndex };
};

export const cursorAt = (chainId: number, position: Position): string => formatCursor({ chainId, blockNumber: position.block, logIndex: position.logIndex });
