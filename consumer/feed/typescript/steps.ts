// The reference's named steps (consumer/feed/CONTRACT.md, sections 2, 4 and 5): the frame rules
// that need the session, what each frame does, and the table a mutant overrides one entry of.

import { backoffDelay } from './backoff.js';
import type { OpenConnection, Session, Steps, Subscription, Verdict } from './session.js';
import { applyEvent, applyEventInTransaction, balanceEffect, installSnapshot, openStore, readState, revoke } from './store.js';
import { type Frame, InvalidFrame, chainOf, cursorsOf, encodePingPong, parseFrame } from './wire.js';

export function acceptFrame(s: Session, conn: OpenConnection, frame: Frame): void {
  const chains = new Set(cursorsOf(frame).map(chainOf));
  for (const chain of chains) {
    if ((s.chainId ?? chain) !== chain) throw new InvalidFrame(`chain id ${chain} differs from this run's chain id ${s.chainId}`);
  }
  if (conn.subscribedNull && !conn.sawSnapshot && (frame.op === 'event' || frame.op === 'revoke')) {
    throw new InvalidFrame(`${frame.op} before the snapshot that answers cursor: null`);
  }
  for (const chain of chains) s.chainId ??= chain;
  if (frame.op === 'snapshot') conn.sawSnapshot = true;
}

/** Both null when a snapshot is needed (nothing stored, or the memory says so). */
export function subscription(s: Session): Subscription {
  if (s.snapshotNeeded) return { cursor: null, blockHash: null };
  const st = readState(s.db);
  if (st.cursor === null || st.blockHash === null) return { cursor: null, blockHash: null };
  return { cursor: st.cursor, blockHash: st.blockHash };
}

export async function handleFrame(s: Session, frame: Frame): Promise<Verdict> {
  switch (frame.op) {
    case 'event':
      await s.steps.applyEvent(s, frame);
      return 'continue';
    case 'snapshot':
      s.steps.installSnapshot(s, frame);
      return 'continue';
    case 'revoke':
      return s.steps.revoke(s, frame.fromCursor) === 'snapshot-needed' ? 'close' : 'continue';
    case 'reset':
      s.steps.onReset(s, frame.reason);
      return 'close'; // the server closes at once; so do we
    default:
      return 'continue'; // ping (answered on arrival), pong, unknown op
  }
}

/** stale-cursor: the next subscribe asks for a snapshot. Any other reason: resume from the store. */
export function onReset(s: Session, reason: string): void {
  if (reason === 'stale-cursor') s.snapshotNeeded = true;
}

export function answerPing(s: Session, id: string): void {
  s.send(encodePingPong('pong', id));
}

export const referenceSteps: Readonly<Steps> = Object.freeze({
  parseFrame,
  acceptFrame,
  openStore,
  subscription,
  handleFrame,
  applyEvent,
  applyEventInTransaction,
  balanceEffect,
  installSnapshot,
  revoke,
  onReset,
  answerPing,
  backoffDelay,
});
