// Encoders for every frame, members in the contract's order. They take typed values (BigInt
// amounts, structured cursors), so what we send is canonical by construction; a line that
// would break the size limit is our bug and throws instead of going out.

import { formatAmount } from './amount.js';
import { type Cursor, formatCursor } from './cursor.js';
import type { EventPayload, ResetReason } from './frames.js';
import { MAX_LINE_BYTES } from './lines.js';

function line(frame: object): string {
  const text = JSON.stringify(frame);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_LINE_BYTES) throw new RangeError(`frame of ${bytes} bytes exceeds the ${MAX_LINE_BYTES}-byte line limit`);
  return `${text}\n`;
}

const cursorText = (cursor: Cursor | string): string => (typeof cursor === 'string' ? cursor : formatCursor(cursor));

export function encodeSubscribe(args: { client: string; topics: readonly string[]; cursor: Cursor | string | null; blockHash: string | null }): string {
  const cursor = args.cursor === null ? null : cursorText(args.cursor);
  return line({ op: 'subscribe', client: args.client, topics: args.topics, cursor, blockHash: args.blockHash });
}

export function encodeSnapshot(cursor: Cursor | string, blockHash: string, balances: Iterable<readonly [string, bigint]>): string {
  const state: Record<string, string> = {};
  for (const [account, amount] of balances) state[account] = formatAmount(amount);
  return line({ op: 'snapshot', cursor: cursorText(cursor), blockHash, state: { balances: state } });
}

export function encodeEvent(cursor: Cursor | string, type: string, payload: EventPayload): string {
  return line({ op: 'event', cursor: cursorText(cursor), type, payload });
}

export interface TransferFields {
  from: string;
  to: string;
  amount: bigint;
  txHash: string;
  blockHash: string;
}

export function encodeTransfer(cursor: Cursor | string, transfer: TransferFields): string {
  const { from, to, amount, txHash, blockHash } = transfer;
  return encodeEvent(cursor, 'Transfer', { from, to, amount: formatAmount(amount), txHash, blockHash });
}

export const encodeRevoke = (fromCursor: Cursor | string): string => line({ op: 'revoke', fromCursor: cursorText(fromCursor) });
export const encodeReset = (reason: ResetReason): string => line({ op: 'reset', reason });
export const encodePing = (id: number): string => line({ op: 'ping', id });
export const encodePong = (id: number): string => line({ op: 'pong', id });
