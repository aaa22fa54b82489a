// Where a process's fault hooks fired, and what an independent read must show there. The
// contract counts hooks per process (section 7): `apply:n`/`commit:n` in the n-th new event's
// transaction, `revoke:n` and `snapshot:n` in the n-th such transaction. The checker finds that
// transaction by replaying, through the contract's rules (section 4), the frames the publisher
// sent on each of the process's connections, starting from the store as read when that
// connection's subscribe arrived. That is exact while every frame sent reached the process; a
// connection that ended without a known cause (a cut, a reset toxic) leaves its last frames in
// doubt, as does a frame sent while a fault that loses bytes in flight was in force before its
// connection ended (a half-open link swallows everything): hooks counted from there on are left
// to the consistency checks alone.

import type { ConnFacts, ProcessFacts } from './facts.js';
import { type FaultStep, faultSteps } from '../scenario/fault-plan.js';
import { type StoreView, viewOf } from './state.js';

export interface ModelState {
  cursor: string | null;
  snapshotCursor: string | null;
  /** Event cursors held, in order. */
  events: string[];
}

export interface HookMoment {
  step: FaultStep;
  /** What the transaction was about: the event's cursor, the snapshot's, the revoke's fromCursor. */
  cursor: string;
  /** The store before the transaction, and after its COMMIT. */
  before: ModelState;
  after: ModelState;
  conn: number;
  /** False when an earlier connection's last frames may not have reached the process. */
  certain: boolean;
}

export const modelOf = (view: StoreView): ModelState => ({
  cursor: view.cursor,
  snapshotCursor: view.snapshotCursor,
  events: view.events.map((e) => e.cursor),
});

const after = (a: string, b: string | null): boolean => b === null || a > b;

type Outcome = { kind: 'none' } | { kind: 'close' } | { kind: 'transaction'; point: 'apply' | 'snapshot' | 'revoke'; cursor: string; next: ModelState };

/** One frame through the contract's table (section 4). */
function applyFrame(state: ModelState, conn: ConnFacts, index: number, snapshotSeen: boolean, subscribedNull: boolean): Outcome {
  const sent = conn.sent[index]!;
  if (sent.invalid !== undefined) return { kind: 'close' };
  const frame = sent.frame;
  if (!frame) return { kind: 'none' };
  switch (frame.op) {
    case 'event':
      if (subscribedNull && !snapshotSeen) return { kind: 'close' };
      if (state.cursor !== null && !after(frame.cursor, state.cursor)) return { kind: 'none' }; // a duplicate
      return { kind: 'transaction', point: 'apply', cursor: frame.cursor, next: { ...state, cursor: frame.cursor, events: [...state.events, frame.cursor] } };
    case 'snapshot':
      return { kind: 'transaction', point: 'snapshot', cursor: frame.cursor, next: { cursor: frame.cursor, snapshotCursor: frame.cursor, events: [] } };
    case 'revoke': {
      if (subscribedNull && !snapshotSeen) return { kind: 'close' };
      if (state.snapshotCursor !== null && !after(frame.fromCursor, state.snapshotCursor)) return { kind: 'close' };
      const events = state.events.filter((c) => c < frame.fromCursor);
      return { kind: 'transaction', point: 'revoke', cursor: frame.fromCursor, next: { ...state, events, cursor: events.at(-1) ?? state.snapshotCursor } };
    }
    case 'reset':
      return { kind: 'close' };
    default:
      return { kind: 'none' };
  }
}

/**
 * Every hook of the process's plan that fired, in order, as far as the transcript shows.
 * `lossy(from, to)`: whether a fault that loses bytes in flight was in force between the two.
 */
export function hookMoments(process: ProcessFacts, lossy: (from: number, to: number) => boolean = () => false): HookMoment[] {
  const steps = faultSteps(process.fault);
  if (steps.length === 0) return [];
  const counters = { apply: 0, snapshot: 0, revoke: 0 };
  const moments: HookMoment[] = [];
  let certain = true;
  for (const conn of process.conns) {
    if (!conn.atSubscribe) continue;
    let state = modelOf(viewOf(conn.atSubscribe.store));
    const subscribedNull = conn.subscribe?.frame?.cursor === null;
    let snapshotSeen = false;
    let knownEnd = false;
    let counted = false;
    for (let i = 0; i < conn.sent.length; i++) {
      const outcome = applyFrame(state, conn, i, snapshotSeen, subscribedNull);
      if (outcome.kind === 'close') {
        knownEnd = true;
        break;
      }
      if (outcome.kind === 'none') continue;
      counted = true;
      if (certain && lossy(conn.sent[i]!.t, conn.closedAt ?? Number.POSITIVE_INFINITY)) certain = false;
      const n = ++counters[outcome.point];
      if (outcome.point === 'snapshot') snapshotSeen = true;
      const moment = (step: FaultStep) => moments.push({ step, cursor: outcome.cursor, before: state, after: outcome.next, conn: conn.conn, certain });
      // Inside the transaction, before COMMIT: exit ends the process, raise rolls back and closes, stop goes on.
      const inside = steps.filter((s) => s.point === outcome.point && s.n === n);
      inside.forEach(moment);
      const insideEnd = inside.find((s) => s.action !== 'stop');
      if (insideEnd?.action === 'exit') return moments;
      if (insideEnd?.action === 'raise') {
        knownEnd = true;
        break;
      }
      // Right after the COMMIT of a new event (same numbering as apply).
      const commits = outcome.point === 'apply' ? steps.filter((s) => s.point === 'commit' && s.n === n) : [];
      commits.forEach(moment);
      state = outcome.next;
      const commitEnd = commits.find((s) => s.action !== 'stop');
      if (commitEnd?.action === 'exit') return moments;
      if (commitEnd?.action === 'raise') {
        knownEnd = true;
        break;
      }
    }
    if (!knownEnd && counted) certain = false;
  }
  return moments;
}

const sameState = (a: ModelState, b: ModelState): boolean =>
  a.cursor === b.cursor && a.snapshotCursor === b.snapshotCursor && a.events.join() === b.events.join();

const describe = (s: ModelState): string =>
  `cursor ${s.cursor ?? 'NULL'}, snapshot ${s.snapshotCursor ?? 'NULL'}, ${s.events.length} event${s.events.length === 1 ? '' : 's'}`;

/** "apply:3" -> "the transaction of event X (its 3rd new event)". */
export function transactionWords(m: HookMoment): string {
  const nth = ordinal(m.step.n);
  switch (m.step.point) {
    case 'apply':
      return `the transaction of event ${m.cursor} (its ${nth} new event)`;
    case 'commit':
      return `the COMMIT of event ${m.cursor} (its ${nth} new event)`;
    case 'snapshot':
      return `the transaction of the snapshot at ${m.cursor} (its ${nth} snapshot)`;
    case 'revoke':
      return `the transaction of the revoke from ${m.cursor} (its ${nth} revoke)`;
  }
}

const ordinal = (n: number): string => {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
};

/**
 * What the read at a hook must show: the state before the transaction (it is not committed
 * yet: `apply`, `snapshot`, `revoke`), or after it (`commit`). Undefined when it does.
 */
export function hookReadProblem(m: HookMoment, read: StoreView): { want: ModelState; got: ModelState } | undefined {
  const want = m.step.point === 'commit' ? m.after : m.before;
  const got = modelOf(read);
  return sameState(want, got) ? undefined : { want, got };
}

export { describe as describeModel };
