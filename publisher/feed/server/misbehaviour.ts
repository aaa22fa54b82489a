// Deliberate publisher misbehaviour on one connection of a feed stream, anchored to the event
// that is about to be sent (its cursor) so it lands at the same place on every run. Every bad
// frame carries that event's real cursor with content that differs from the real event (the
// amount is off by one), so a consumer that applies it ends up with a visibly wrong store.

import { MAX_UINT256 } from '../../../protocol/feed/amount.js';
import { MAX_LINE_BYTES } from '../../../protocol/feed/lines.js';
import type { EventPayload } from '../../../protocol/feed/frames.js';

/** How a `malformed` frame is broken: each makes the frame invalid under the contract. */
export type MalformedForm = 'trailing-comma' | 'truncated' | 'unpadded-cursor' | 'other-chain' | 'missing-block-hash' | 'oversized' | 'noncanonical-amount';

export type FeedMisbehaviour = {
  /** The cursor of the real event the rule fires at, just before it would be sent. */
  at: string;
  /**
   * Which connection of the stream, 1-based; default 1. `{ from: n }`: the first connection
   * numbered n or more that is about to send the event (how many times a consumer reconnects
   * before it cannot always be known in advance).
   */
  connection?: number | ConnectionFrom;
} & (
  | /** At-least-once delivery: first resend the `count` (default 3) events before this one, with their real content. */
  { action: 'resend'; count?: number }
  /** An invalid frame instead of this event (the event is not sent on this connection). */
  | { action: 'malformed'; form?: MalformedForm }
  /** This Transfer with its amount as a JSON number instead of the event (invalid; not sent on this connection). */
  | { action: 'number-amount' }
  /** A frame with an unknown op before this event, which is then sent as usual (to be ignored). */
  | { action: 'unknown-op' }
  /** Fall silent before this event: nothing more is sent (no pings, no pongs) for `ms`, or for good. */
  | { action: 'stall'; ms?: number }
);

/** A rule for the first connection numbered `from` or more that is about to send its event. */
export type ConnectionFrom = { from: number };

/** Whether a rule may fire on connection `connection`. */
export function onConnection(rule: Pick<FeedMisbehaviour, 'connection'>, connection: number): boolean {
  const c = rule.connection ?? 1;
  return typeof c === 'number' ? c === connection : connection >= c.from;
}

/**
 * The rule at this event on this connection: the first that names the connection and has not
 * fired on another one (`firedOn`: the connection each rule of the stream fired on). A rule
 * fires once in all: one that already fired here is still returned, and then not applied again.
 */
export function misbehaviourAt(
  rules: readonly FeedMisbehaviour[],
  connection: number,
  cursor: string,
  firedOn: ReadonlyMap<FeedMisbehaviour, number> = new Map(),
): FeedMisbehaviour | undefined {
  return rules.find((r) => r.at === cursor && onConnection(r, connection) && (firedOn.get(r) ?? connection) === connection);
}

/** The real event, as the frame object the encoder would send. */
export interface RealEvent {
  cursor: string;
  type: string;
  payload: EventPayload;
}

const offByOne = (amount: string): string => {
  const n = BigInt(amount);
  return (n === MAX_UINT256 ? n - 1n : n + 1n).toString();
};

/** The real event with a different amount: what every bad frame carries. */
function tampered(event: RealEvent): RealEvent {
  const amount = typeof event.payload.amount === 'string' ? offByOne(event.payload.amount) : '1';
  return { ...event, payload: { ...event.payload, amount } };
}

const frameText = (op: string, e: RealEvent): string => JSON.stringify({ op, cursor: e.cursor, type: e.type, payload: e.payload });

/** The bytes of a `malformed` frame, LF included (except for `truncated`, which still ends in LF). */
export function malformedLine(event: RealEvent, form: MalformedForm): string {
  const bad = tampered(event);
  switch (form) {
    case 'trailing-comma':
      return `${frameText('event', bad).slice(0, -1)},}\n`;
    case 'truncated': {
      const text = frameText('event', bad);
      return `${text.slice(0, Math.floor(text.length / 2))}\n`;
    }
    case 'unpadded-cursor': {
      const [chain, block, log] = bad.cursor.split(':') as [string, string, string];
      return `${frameText('event', { ...bad, cursor: `${chain}:${Number(block)}:${Number(log)}` })}\n`;
    }
    case 'other-chain': {
      const [chain, ...rest] = bad.cursor.split(':');
      return `${frameText('event', { ...bad, cursor: [String(Number(chain) + 1), ...rest].join(':') })}\n`;
    }
    case 'missing-block-hash': {
      const { blockHash: _dropped, ...payload } = bad.payload;
      return `${JSON.stringify({ op: 'event', cursor: bad.cursor, type: bad.type, payload })}\n`;
    }
    case 'oversized':
      return `${frameText('event', { ...bad, payload: { ...bad.payload, memo: 'x'.repeat(MAX_LINE_BYTES) } })}\n`;
    case 'noncanonical-amount':
      // A leading zero: BigInt(), int() and Number() all read it, the grammar does not. A Transfer's amount only.
      return `${frameText('event', { ...bad, payload: { ...bad.payload, amount: `0${bad.payload.amount}` } })}\n`;
  }
}

/** The Transfer with its (off-by-one) amount written as a JSON number literal. */
export function numberAmountLine(event: RealEvent): string {
  const bad = tampered(event);
  const placeholder = '@@amount@@'; // no hash, account or digit string contains it
  const text = frameText('event', { ...bad, payload: { ...bad.payload, amount: placeholder } });
  return `${text.replace(`"${placeholder}"`, String(bad.payload.amount))}\n`;
}

/** A frame of an op no consumer knows, carrying the (tampered) event. */
export const unknownOpLine = (event: RealEvent): string => `${frameText('event-v2', tampered(event))}\n`;
