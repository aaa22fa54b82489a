// The feed-lab frames (contract section 2) and their strict validation. A frame is one JSON
// object; every field the contract requires must be there in its exact form, and a frame that
// breaks any rule is invalid as a whole: nothing of it may be applied. An `op` this side does
// not know is not invalid: the receiver ignores it (the contract's forward-compatibility rule).
// This module never imports the harness; the publisher and consumers share it.

import { AmountError, parseAmount } from './amount.js';
import { type Cursor, CursorError, describeJson, parseCursor } from './cursor.js';
import { MAX_LINE_BYTES } from './lines.js';
import { rawTopLevelMember } from './raw-json.js';

export type ResetReason = 'stale-cursor' | 'slow-consumer' | 'shutdown';
export const RESET_REASONS: readonly ResetReason[] = ['stale-cursor', 'slow-consumer', 'shutdown'];

export interface SubscribeFrame {
  op: 'subscribe';
  client: string;
  topics: string[];
  /** Both null when the consumer needs a snapshot. */
  cursor: string | null;
  blockHash: string | null;
}

export interface SnapshotFrame {
  op: 'snapshot';
  cursor: string;
  blockHash: string;
  state: { balances: Record<string, string> };
}

/** Every payload names its block; other members depend on the event type. */
export interface EventPayload {
  blockHash: string;
  [member: string]: unknown;
}

export interface TransferPayload extends EventPayload {
  from: string;
  to: string;
  amount: string;
  txHash: string;
}

export interface EventFrame {
  op: 'event';
  cursor: string;
  type: string;
  payload: EventPayload;
}

export interface RevokeFrame {
  op: 'revoke';
  fromCursor: string;
}

export interface ResetFrame {
  op: 'reset';
  /** Kept as sent; `resetMeaning` maps an unknown reason to `shutdown`. */
  reason: string;
}

export interface PingFrame {
  op: 'ping';
  id: number;
}

export interface PongFrame {
  op: 'pong';
  id: number;
}

export type ClientFrame = SubscribeFrame | PingFrame | PongFrame;
export type ServerFrame = SnapshotFrame | EventFrame | RevokeFrame | ResetFrame | PingFrame | PongFrame;
export type Frame = ClientFrame | ServerFrame;

/** A valid frame, or one whose op the receiving side does not know (to be ignored). */
export type Parsed<F> = { kind: 'frame'; frame: F } | { kind: 'unknown-op'; op: string };

export class FrameError extends Error {
  constructor(readonly reason: string) {
    super(`invalid frame: ${reason}`);
    this.name = 'FrameError';
  }
}

export interface ParseOptions {
  /** The run's chain: a cursor of another chain makes the frame invalid. */
  chainId?: number;
}

const ACCOUNT_RE = /^0x[0-9a-f]{40}$/;
const JSON_INTEGER_RE = /^(0|[1-9][0-9]*)$/;

export const isAccount = (value: unknown): value is string => typeof value === 'string' && ACCOUNT_RE.test(value);

export const resetMeaning = (reason: string): ResetReason => ((RESET_REASONS as readonly string[]).includes(reason) ? (reason as ResetReason) : 'shutdown');

/** Typed member access on a parsed object; every failure names the field. */
class Fields {
  constructor(
    readonly raw: Record<string, unknown>,
    private readonly where: string,
    private readonly options: ParseOptions,
  ) {}

  private name(field: string): string {
    return this.where ? `${this.where}.${field}` : field;
  }

  private present(field: string): unknown {
    if (!Object.hasOwn(this.raw, field)) throw new FrameError(`missing field ${this.name(field)}`);
    return this.raw[field];
  }

  string(field: string, nonEmpty = false): string {
    const value = this.present(field);
    if (typeof value !== 'string') throw new FrameError(`${this.name(field)} must be a string, not ${describeJson(value)}`);
    if (nonEmpty && value === '') throw new FrameError(`${this.name(field)} must not be empty`);
    return value;
  }

  account(field: string): string {
    const value = this.present(field);
    if (!isAccount(value)) throw new FrameError(`${this.name(field)}: ${describeJson(value)} is not an account (0x + 40 lowercase hex digits)`);
    return value;
  }

  amount(field: string): string {
    const value = this.present(field);
    try {
      parseAmount(value);
    } catch (error) {
      if (error instanceof AmountError) throw new FrameError(`${this.name(field)}: ${error.message}`);
      throw error;
    }
    return value as string;
  }

  cursor(field: string): string {
    const value = this.present(field);
    let cursor: Cursor;
    try {
      cursor = parseCursor(value);
    } catch (error) {
      if (error instanceof CursorError) throw new FrameError(`${this.name(field)}: ${error.message}`);
      throw error;
    }
    const expected = this.options.chainId;
    if (expected !== undefined && cursor.chainId !== expected)
      throw new FrameError(`${this.name(field)}: chain id ${cursor.chainId} is not this run's chain ${expected}`);
    return value as string;
  }

  object(field: string): Fields {
    const value = this.present(field);
    if (!isPlainObject(value)) throw new FrameError(`${this.name(field)} must be an object, not ${describeJson(value)}`);
    return new Fields(value, this.name(field), this.options);
  }

  /** A JSON integer >= 0 written without fraction or exponent, within the safe range. */
  jsonInteger(field: string, sourceText: string): number {
    const value = this.present(field);
    const literal = rawTopLevelMember(sourceText, field);
    if (typeof value !== 'number' || literal === undefined || !JSON_INTEGER_RE.test(literal)) {
      throw new FrameError(`${this.name(field)} must be a JSON integer >= 0 without fraction or exponent, not ${literal ?? describeJson(value)}`);
    }
    if (!Number.isSafeInteger(value)) throw new FrameError(`${this.name(field)} ${literal} is above 2^53-1 and cannot be echoed exactly`);
    return value;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decodes one line (without its LF) into a top-level object and its source text. */
function decodeObject(line: Uint8Array | string): { text: string; fields: Record<string, unknown> } {
  const bytes = typeof line === 'string' ? Buffer.byteLength(line, 'utf8') : line.length;
  if (bytes > MAX_LINE_BYTES) throw new FrameError(`line of ${bytes} bytes is longer than the ${MAX_LINE_BYTES}-byte limit`);
  let text: string;
  if (typeof line === 'string') text = line;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(line);
    } catch {
      throw new FrameError('not valid UTF-8');
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FrameError(`not valid JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(value)) throw new FrameError(`a frame must be a JSON object, not ${describeJson(value)}`);
  return { text, fields: value };
}

function parseSubscribe(f: Fields): SubscribeFrame {
  const client = f.string('client', true);
  const topicsValue = f.raw.topics;
  if (!Object.hasOwn(f.raw, 'topics')) throw new FrameError('missing field topics');
  if (!Array.isArray(topicsValue) || topicsValue.length === 0)
    throw new FrameError(`topics must be a non-empty array of accounts, not ${describeJson(topicsValue)}`);
  topicsValue.forEach((topic, i) => {
    if (!isAccount(topic)) throw new FrameError(`topics[${i}]: ${describeJson(topic)} is not an account (0x + 40 lowercase hex digits)`);
  });
  if (!Object.hasOwn(f.raw, 'cursor')) throw new FrameError('missing field cursor');
  if (!Object.hasOwn(f.raw, 'blockHash')) throw new FrameError('missing field blockHash');
  const cursor = f.raw.cursor === null ? null : f.cursor('cursor');
  const blockHash = f.raw.blockHash === null ? null : f.string('blockHash', true);
  if ((cursor === null) !== (blockHash === null)) throw new FrameError('cursor and blockHash must both be null (snapshot needed) or both be set');
  return { op: 'subscribe', client, topics: [...new Set(topicsValue as string[])], cursor, blockHash };
}

function parseSnapshot(f: Fields): SnapshotFrame {
  const cursor = f.cursor('cursor');
  const blockHash = f.string('blockHash', true);
  const balances = f.object('state').object('balances');
  for (const account of Object.keys(balances.raw)) {
    if (!isAccount(account)) throw new FrameError(`state.balances: key ${JSON.stringify(account)} is not an account`);
    balances.amount(account);
  }
  return { op: 'snapshot', cursor, blockHash, state: { balances: { ...(balances.raw as Record<string, string>) } } };
}

function parseEvent(f: Fields): EventFrame {
  const cursor = f.cursor('cursor');
  const type = f.string('type', true);
  const payload = f.object('payload');
  payload.string('blockHash', true);
  if (type === 'Transfer') {
    payload.account('from');
    payload.account('to');
    payload.amount('amount');
    payload.string('txHash', true);
  }
  return { op: 'event', cursor, type, payload: payload.raw as EventPayload };
}

function parseRevoke(f: Fields): RevokeFrame {
  const fromCursor = f.cursor('fromCursor');
  if (!fromCursor.endsWith(':0000')) throw new FrameError(`fromCursor ${fromCursor} is not the first position of a block (log index 0000)`);
  return { op: 'revoke', fromCursor };
}

/** A frame the server receives: subscribe, ping or pong. */
export function parseClientFrame(line: Uint8Array | string, options: ParseOptions = {}): Parsed<ClientFrame> {
  const { text, fields } = decodeObject(line);
  const f = new Fields(fields, '', options);
  const op = f.string('op');
  switch (op) {
    case 'subscribe':
      return { kind: 'frame', frame: parseSubscribe(f) };
    case 'ping':
    case 'pong':
      return { kind: 'frame', frame: { op, id: f.jsonInteger('id', text) } };
    default:
      return { kind: 'unknown-op', op };
  }
}

/** A frame the consumer receives: snapshot, event, revoke, reset, ping or pong. */
export function parseServerFrame(line: Uint8Array | string, options: ParseOptions = {}): Parsed<ServerFrame> {
  const { text, fields } = decodeObject(line);
  const f = new Fields(fields, '', options);
  const op = f.string('op');
  switch (op) {
    case 'snapshot':
      return { kind: 'frame', frame: parseSnapshot(f) };
    case 'event':
      return { kind: 'frame', frame: parseEvent(f) };
    case 'revoke':
      return { kind: 'frame', frame: parseRevoke(f) };
    case 'reset':
      return { kind: 'frame', frame: { op: 'reset', reason: f.string('reason') } };
    case 'ping':
    case 'pong':
      return { kind: 'frame', frame: { op, id: f.jsonInteger('id', text) } };
    default:
      return { kind: 'unknown-op', op };
  }
}
