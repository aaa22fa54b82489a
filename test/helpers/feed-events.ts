// Feed events for checker tests: a cursor of chain 1, an event at it, and its frame as a server writes it.
import type { RealEvent } from '../../publisher/feed/server/misbehaviour.js';

export const cursor = (block: number, log: number): string => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;

export const event = (block: number, log: number): RealEvent => ({
  cursor: cursor(block, log),
  type: 'Transfer',
  payload: {
    from: `0x${'a'.repeat(40)}`,
    to: `0x${'b'.repeat(40)}`,
    amount: String(block * 10 + log),
    txHash: `0x${'c'.repeat(64)}`,
    blockHash: `0x${'d'.repeat(64)}`,
  },
});

export const eventLine = (e: RealEvent): string => `${JSON.stringify({ op: 'event', cursor: e.cursor, type: e.type, payload: e.payload })}\n`;
