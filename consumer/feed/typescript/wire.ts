// The wire, consumer side: NDJSON framing and the validation of every frame the server may send
// (consumer/feed/CONTRACT.md, section 2), and the two frames a consumer sends.
//
// The line limit, the line splitter, amounts, accounts and the subscribe encoder come from
// protocol/feed/, the wire code the publisher uses too. Sharing it cannot hide a consumer bug
// behind a publisher bug: chaoslab judges the consumer by reading its SQLite store and the
// server's transcript on its own, never through this code. What stays here is what the
// consumer must do and the publisher's parser does not: keep the exact text of the payload
// and of a ping id (json.ts reads them; JSON.parse would round them), and take the contract's
// forms as they are (any chain id, any ping id, an empty hash).

import { AmountError, parseAmount } from '../../../protocol/feed/amount.js';
import { encodeSubscribe } from '../../../protocol/feed/encode.js';
import { isAccount } from '../../../protocol/feed/frames.js';
import { MAX_LINE_BYTES } from '../../../protocol/feed/lines.js';
import { type Json, type JsonObject, JsonError, decodeUtf8, parseJson } from './json.js';

export { MAX_LINE_BYTES };

export const CURSOR_RE = /^(0|[1-9][0-9]*):[0-9]{14}:[0-9]{4}$/;
const ID_RE = /^(0|[1-9][0-9]*)$/;

/** A frame that must not be applied: the connection is closed and opened again. */
export class InvalidFrame extends Error {
  override name = 'InvalidFrame';
}

export interface Transfer {
  from: string;
  to: string;
  amount: bigint;
}
export interface EventFrame {
  op: 'event';
  cursor: string;
  type: string;
  /** The payload exactly as it arrived (JSON text), stored as is in feed_events. */
  payloadText: string;
  /** payload.blockHash */
  blockHash: string;
  /** Present for type "Transfer" only. */
  transfer?: Transfer;
}
export interface SnapshotFrame {
  op: 'snapshot';
  cursor: string;
  blockHash: string;
  /** Every entry of state.balances (all of them valid; the followed ones are picked later). */
  balances: Map<string, bigint>;
}
export interface RevokeFrame {
  op: 'revoke';
  fromCursor: string;
}
export interface ResetFrame {
  op: 'reset';
  reason: string;
}
export interface PingFrame {
  op: 'ping' | 'pong';
  /** The id's digits exactly as received: echoed as they are, never rounded. */
  id: string;
}
export interface UnknownFrame {
  op: 'unknown';
  name: string;
}
export type Frame = EventFrame | SnapshotFrame | RevokeFrame | ResetFrame | PingFrame | UnknownFrame;

// ---------------------------------------------------------------- field checks

function field(obj: JsonObject, name: string, where: string): Json {
  const v = obj.entries.get(name);
  if (v === undefined) throw new InvalidFrame(`${where} lacks "${name}"`);
  return v;
}

function str(obj: JsonObject, name: string, where: string): string {
  const v = field(obj, name, where);
  if (v.kind !== 'string') throw new InvalidFrame(`${where}.${name} is not a string`);
  return v.value;
}

function objectField(obj: JsonObject, name: string, where: string): JsonObject {
  const v = field(obj, name, where);
  if (v.kind !== 'object') throw new InvalidFrame(`${where}.${name} is not an object`);
  return v;
}

export function isCursor(text: string): boolean {
  return CURSOR_RE.test(text);
}

/** The chain id of a valid cursor. */
export function chainOf(cursor: string): string {
  return cursor.slice(0, cursor.indexOf(':'));
}

function cursorField(obj: JsonObject, name: string, where: string): string {
  const text = str(obj, name, where);
  if (!isCursor(text)) throw new InvalidFrame(`${where}.${name} ${JSON.stringify(text)} is not chainId:14-digit block:4-digit log index`);
  return text;
}

function accountText(text: string, what: string): string {
  if (!isAccount(text)) throw new InvalidFrame(`${what} ${JSON.stringify(text)} is not 0x + 40 lowercase hex digits`);
  return text;
}

/** A canonical decimal string from 0 to 2^256 - 1 (never a JSON number). */
export function amountOf(v: Json, what: string): bigint {
  if (v.kind !== 'string') throw new InvalidFrame(`${what} is not a string (amounts are decimal strings)`);
  try {
    return parseAmount(v.value);
  } catch (err) {
    if (err instanceof AmountError) throw new InvalidFrame(`${what}: ${err.message}`);
    throw err;
  }
}

function idField(obj: JsonObject, where: string): string {
  const v = field(obj, 'id', where);
  if (v.kind !== 'number' || !ID_RE.test(v.text)) throw new InvalidFrame(`${where}.id is not a JSON integer >= 0 without fraction or exponent`);
  return v.text;
}

// ---------------------------------------------------------------- frames

function eventFrame(obj: JsonObject, text: string): EventFrame {
  const cursor = cursorField(obj, 'cursor', 'event');
  const type = str(obj, 'type', 'event');
  const payload = objectField(obj, 'payload', 'event');
  const blockHash = str(payload, 'blockHash', 'event.payload');
  const frame: EventFrame = { op: 'event', cursor, type, payloadText: text.slice(payload.start, payload.end), blockHash };
  if (type === 'Transfer') {
    frame.transfer = {
      from: accountText(str(payload, 'from', 'event.payload'), 'event.payload.from'),
      to: accountText(str(payload, 'to', 'event.payload'), 'event.payload.to'),
      amount: amountOf(field(payload, 'amount', 'event.payload'), 'event.payload.amount'),
    };
    str(payload, 'txHash', 'event.payload');
  }
  return frame;
}

function snapshotFrame(obj: JsonObject): SnapshotFrame {
  const cursor = cursorField(obj, 'cursor', 'snapshot');
  const blockHash = str(obj, 'blockHash', 'snapshot');
  const state = objectField(obj, 'state', 'snapshot');
  const entries = objectField(state, 'balances', 'snapshot.state');
  const balances = new Map<string, bigint>();
  for (const [account, amount] of entries.entries) {
    // Accounts we do not follow are ignored later, but a malformed entry spoils the frame.
    balances.set(accountText(account, 'snapshot balance account'), amountOf(amount, `snapshot balance of ${account}`));
  }
  return { op: 'snapshot', cursor, blockHash, balances };
}

/**
 * One line (without its LF) to a frame. Throws InvalidFrame for everything section 2 calls
 * invalid; an unknown `op` gives { op: 'unknown' } (ignored by the caller). The chain-id rule
 * needs the session's memory and is checked by the caller (cursorsOf lists the cursors).
 */
export function parseFrame(line: Uint8Array): Frame {
  if (line.length > MAX_LINE_BYTES) throw new InvalidFrame(`line longer than ${MAX_LINE_BYTES} bytes`);
  let root: Json;
  let text: string;
  try {
    text = decodeUtf8(line);
    root = parseJson(text);
  } catch (err) {
    if (err instanceof JsonError) throw new InvalidFrame(`not valid JSON: ${err.message}`);
    throw err;
  }
  if (root.kind !== 'object') throw new InvalidFrame('not a JSON object');
  const op = str(root, 'op', 'frame');
  switch (op) {
    case 'event':
      return eventFrame(root, text);
    case 'snapshot':
      return snapshotFrame(root);
    case 'revoke':
      return { op: 'revoke', fromCursor: cursorField(root, 'fromCursor', 'revoke') };
    case 'reset':
      return { op: 'reset', reason: str(root, 'reason', 'reset') };
    case 'ping':
    case 'pong':
      return { op, id: idField(root, op) };
    default:
      // Also `subscribe`: a consumer-to-server message has no meaning coming from the server.
      return { op: 'unknown', name: op };
  }
}

/** The cursors a frame carries (for the one-chain rule). */
export function cursorsOf(frame: Frame): string[] {
  if (frame.op === 'event' || frame.op === 'snapshot') return [frame.cursor];
  if (frame.op === 'revoke') return [frame.fromCursor];
  return [];
}

// ---------------------------------------------------------------- frames we send

export { encodeSubscribe };

/** `{"op":"pong","id":<the same digits>}` — built by hand so the id is never rounded. */
export function encodePingPong(op: 'ping' | 'pong', id: string): string {
  return `{"op":"${op}","id":${id}}\n`;
}
