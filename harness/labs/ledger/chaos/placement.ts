// Where a ledger chaos schedule's steps land, so that each one meets the consumer (coverage as
// data: a step no consumer met tests nothing, and a passing run that holds one is untested).
// The schedule draws positions; placement keeps them where they can take effect:
//   - process 1's hooks come first: up to and including its first exit/raise hook (a hook after
//     it never fires), and every step that ends a connection comes after them;
//   - the consumer's connections are walked in seq order: each step that ends one (a kill, a cut,
//     a bad line, a stall…) moves the next steps to the next connection, which resumes at about
//     its seq, so a publisher misbehaviour names the connection that is live at its EVENT;
//   - a fault the harness starts before an EVENT (a kill, a cut, a toxic that ends a connection)
//     waits a whole window after the previous end: until then the publisher may still be sending
//     into the connection that ended, and the fault would find no process, or one not connected;
//     a kill when ACK k arrives only needs k past the cursor the live connection resumed from;
//   - a retention move goes to the connection after the last end, to a start past its cursor
//     (so it asks for RESYNC or serves the boundary), if no step waits after that end (a RESYNC
//     sends no EVENT), and a gap never skips the last EVENT (no EVENT would follow it, so no
//     consumer would see the hole).
// Steps without room are left out, as the draw's positions wrap inside the script. Which
// processes must exit non-zero follows from the walk too (exitsInError).

import type { ChaosWhere } from '../../../lab-api/chaos-model.js';

export type Step =
  | { layer: 'cut'; at: number; ms: number }
  | { layer: 'latency'; at: number; up: boolean; latency: number; ms: number }
  | { layer: 'slicer'; at: number; up: boolean; size: number; delay: number; ms: number }
  | { layer: 'bandwidth'; at: number; rate: number; ms: number }
  | { layer: 'reset'; at: number }
  | { layer: 'lost-ack'; at: number; bytes: number }
  | { layer: 'half-open'; at: number; ms: number }
  | { layer: 'kill'; at: number; onAck: boolean }
  | { layer: 'pause'; at: number; ms: number }
  | { layer: 'hook'; action: 'exit' | 'raise' | 'stop'; point: 'apply' | 'ack'; at: number }
  | { layer: 'duplicate'; at: number; connection: number }
  | { layer: 'gap'; at: number; connection: number }
  | { layer: 'conflict'; at: number; back: number; delta: number; connection: number }
  | { layer: 'malformed'; at: number; form: number; connection: number }
  | { layer: 'stall'; at: number; connection: number }
  | { layer: 'oversized'; at: number; connection: number }
  | { layer: 'retention'; connection: number; to: number }
  | { layer: 'loss'; percent: number };

export type LedgerSchedule =
  | {
      kind: 'stream';
      count: number;
      seed: number;
      window: number;
      redeliver: boolean;
      forgetAcked: boolean;
      patient: boolean;
      steps: Step[];
    }
  | { kind: 'bad-environment'; variable: number; value: number };

type Stream = Extract<LedgerSchedule, { kind: 'stream' }>;
type Hook = Extract<Step, { layer: 'hook' }>;

/** Faults the harness starts before an EVENT that end the consumer's connection (a pause does not, but may end process 1 cleanly). */
const HARNESS_ENDS = new Set<Step['layer']>(['cut', 'lost-ack', 'reset', 'half-open', 'kill']);
/** Publisher misbehaviour on one connection: all but a duplicate end it (a correct consumer hangs up, or times out). */
const ON_CONNECTION = new Set<Step['layer']>(['duplicate', 'gap', 'conflict', 'malformed', 'stall', 'oversized']);

export const endsConnection = (x: Step): boolean =>
  HARNESS_ENDS.has(x.layer) || (ON_CONNECTION.has(x.layer) && x.layer !== 'duplicate') || (x.layer === 'hook' && x.action !== 'stop');

/** The contract's order of hook points: by seq, `apply` before `ack`. */
const hookOrder = (a: Hook, b: Hook) => a.at - b.at || (a.point === b.point ? 0 : a.point === 'apply' ? -1 : 1);

/** A schedule's steps where they take effect, in the order drawn; packet loss only where sealed, once. */
export function placedSteps(s: Stream, where: ChaosWhere): Step[] {
  const seq = (at: number) => at % s.count;
  const at = new Map<Step, Step>();
  const hooks = processOneHooks(
    s.steps.filter((x): x is Hook => x.layer === 'hook'),
    seq,
  );
  const lastHook = hooks.length ? hooks.at(-1)![1].at : undefined;
  let lossSeen = false;
  for (const step of s.steps) {
    if (step.layer === 'hook') continue;
    if (step.layer === 'loss') {
      if (!lossSeen && where.sealed) at.set(step, step);
      lossSeen = true;
      continue;
    }
    if (step.layer === 'retention') continue;
    const placed = afterHooks({ ...step, at: seq(step.at) } as Step & { at: number }, lastHook, s);
    if (placed) at.set(step, placed);
  }
  for (const [drawn, kept] of hooks) at.set(drawn, kept);
  const walked = walkConnections(
    [...at.entries()].map(([, x]) => x),
    s,
  );
  const bySource = new Map([...at.entries()].map(([source, x]) => [x, source]));
  const final = new Map([...walked.placed.entries()].map(([x, placed]) => [bySource.get(x)!, placed]));
  const out = s.steps.flatMap((x) => (final.has(x) ? [final.get(x)!] : []));
  const retention = s.steps.find((x): x is Extract<Step, { layer: 'retention' }> => x.layer === 'retention');
  const move = retention && retentionAfter(retention, walked, s);
  if (move) out.splice(s.steps.slice(0, s.steps.indexOf(retention)).filter((x) => final.has(x)).length, 0, move);
  return out;
}

/** Process 1's hooks in the contract's order, up to and including the first that ends it: [as drawn, as placed]. */
function processOneHooks(drawn: Hook[], seq: (at: number) => number): [Hook, Hook][] {
  const ordered = drawn.map((h, i) => [h, { ...h, at: seq(h.at) }, i] as const).sort((a, b) => hookOrder(a[1], b[1]) || a[2] - b[2]);
  const end = ordered.findIndex(([, h]) => h.action !== 'stop');
  return ordered.slice(0, end === -1 ? undefined : end + 1).map(([h, placed]) => [h, placed]);
}

/** Lines a correct consumer refuses with an error exit (Gap 3, Conflict 4, malformed 2): a swallowed error shows in the status of the process it met. */
export const REFUSED = new Set<Step['layer']>(['gap', 'conflict', 'malformed']);

/** Faults the harness starts at an EVENT: they need a running, connected process. */
const byHarness = (x: Step) => HARNESS_ENDS.has(x.layer) || x.layer === 'pause';
/**
 * A kill when ACK k arrives: the ACK itself shows a live, connected process, so it needs no
 * window after the previous end, only an ACK k still to come (k past the cursor resumed from).
 * Its race against the COMMIT after an early ACK is what catches ack-before-commit without a hook.
 */
const onAck = (x: Step) => x.layer === 'kill' && x.onAck;

/**
 * A step that ends a connection, or a pause (past the ACK deadline it may end process 1
 * cleanly), goes after process 1's last hook, so the hooks fire and process 1's expected exit
 * stays fair: a misbehaviour past the hook's event (it waits for every ACK before it, so it
 * cannot overtake the hook), a fault the harness starts a window past it (EVENT k goes out
 * once ACK k − window is in).
 */
function afterHooks(drawn: Step & { at: number }, lastHook: number | undefined, s: Stream): Step | undefined {
  // A gap skips an EVENT before the last: a later one must show the hole.
  const room = drawn.layer === 'gap' ? s.count - 1 : s.count;
  const step = { ...drawn, at: drawn.at % room };
  if (lastHook === undefined || !(byHarness(step) || endsConnection(step))) return step;
  const from = byHarness(step) && !onAck(step) ? lastHook + s.window : lastHook + 1;
  if (step.at >= from) return step;
  return room > from ? ({ ...step, at: from + (step.at % (room - from)) } as Step) : undefined;
}

/** Where a step falls in the walk: a fault the harness starts before its EVENT goes out, a misbehaviour at it, a hook or an ACK-time kill after the consumer took it. */
const walkOrder = (x: Step): number => {
  if (!('at' in x)) return -1;
  const after = x.layer === 'hook' || (x.layer === 'kill' && x.onAck);
  return x.at * 3 + (after ? 2 : byHarness(x) ? 0 : 1);
};

const connectionOf = (x: Step): number => ('connection' in x ? x.connection : 0);

/**
 * Which processes must exit non-zero, by incarnation: those whose connection a hook that exits
 * or raises ends (process 1), or a line a correct consumer refuses (the catalogue's gap,
 * conflict and malformed-* scenarios expect the same). Each process holds one connection until
 * the first fault the harness starts (a cut refuses a restart's connection, so connection n
 * need no longer be process n's; a pause may let the publisher close one cleanly): from there
 * on, none is judged. The list ends at the last process judged.
 */
export function exitsInError(placed: readonly Step[]): boolean[] {
  const ends = [...placed]
    .filter((x) => 'at' in x && (byHarness(x) || endsConnection(x)))
    .sort((a, b) => walkOrder(a) - walkOrder(b) || connectionOf(a) - connectionOf(b));
  const judged: boolean[] = [];
  for (const x of ends) {
    if (byHarness(x)) break;
    judged.push((x.layer === 'hook' && x.action !== 'stop') || REFUSED.has(x.layer));
  }
  return judged.slice(0, judged.lastIndexOf(true) + 1);
}

/**
 * Where a connection that `x` ends stops: the last EVENT the publisher may have sent on it
 * before it saw the end (`end`), and the furthest cursor its consumer may have committed
 * (`cursor`). An upstream byte limit lets `bytes` more of ACKs through (6 bytes each at the
 * least) before it cuts; a kill when ACK k arrives finds the consumer up to a window past k
 * (seed 12 drew one at ACK 2, and the restart resumed from 15); an `ack` hook ends the process
 * right after that event's commit.
 */
function endOf(x: Step, window: number): { end: number; cursor: number } {
  const at = (x as { at: number }).at;
  if (x.layer === 'lost-ack') return { end: at + Math.ceil(x.bytes / 5), cursor: at + Math.ceil(x.bytes / 5) };
  // ACK k came in while the consumer went on with the window sent after it.
  if (x.layer === 'kill' && x.onAck) return { end: at + window, cursor: at + window };
  if (x.layer === 'hook' && x.point === 'ack') return { end: at, cursor: at };
  // A skipped EVENT takes no room in the window: the publisher sends one EVENT further (seed 3,
  // run 10: a gap at 1 with window 15, and the cut before EVENT 16 still met that connection).
  if (x.layer === 'gap') return { end: at + 1, cursor: at - 1 };
  return { end: at, cursor: at - 1 };
}

/**
 * The consumer's connections in seq order: each misbehaviour names the connection live at its
 * EVENT and comes past the cursor that connection resumed from; each end moves on to the next
 * connection; a fault the harness starts waits a window past the previous end. Returns the
 * placed step of each step kept, the connection after the last end, that end's cursor, and
 * whether a step was placed after it.
 */
function walkConnections(steps: Step[], s: Stream): { placed: Map<Step, Step>; connection: number; cursor: number; busy: boolean } {
  const queue = steps.map((step) => ({ source: step, step })).sort((a, b) => walkOrder(a.step) - walkOrder(b.step));
  const later = (source: Step, step: Step, to: number) => {
    const moved = { source, step: { ...step, at: to } as Step };
    const i = queue.findIndex((q) => walkOrder(q.step) > walkOrder(moved.step));
    queue.splice(i === -1 ? queue.length : i, 0, moved);
  };
  const placed = new Map<Step, Step>();
  const used = new Set<string>();
  let connection = 1;
  let last = { end: -1, cursor: -1 };
  /** Two faults the harness starts at one EVENT would meet one process: one to an EVENT. */
  let lastHarness = -1;
  /** A step placed after the last end: it needs EVENTs on the last connection. */
  let busy = false;
  while (queue.length) {
    const { source, step } = queue.shift()!;
    if (!('at' in step)) {
      placed.set(source, step);
      continue;
    }
    const room = step.layer === 'gap' ? s.count - 1 : s.count;
    if (onAck(step) && step.at <= last.cursor) {
      // The next connection resumes past the cursor: ACK `at` may never come again.
      if (last.cursor + 1 < room) later(source, step, last.cursor + 1);
      continue;
    }
    if (byHarness(step) && !onAck(step) && ((last.end >= 0 && step.at < last.end + s.window) || step.at <= lastHarness)) {
      // Later: until then the publisher may still be sending into the connection that ended.
      const to = Math.max(last.end + s.window, lastHarness + 1);
      if (to < room) later(source, step, to);
      continue;
    }
    if (ON_CONNECTION.has(step.layer) && step.at <= last.cursor) {
      // The next connection resumes from up to that cursor: only an EVENT past it goes down it.
      if (last.cursor + 1 < room) later(source, step, last.cursor + 1);
      continue;
    }
    let x: Step = step;
    if (ON_CONNECTION.has(step.layer)) {
      const key = `${step.at}/${connection}`;
      // The publisher takes one rule per EVENT and connection; a conflict needs an earlier seq.
      if (used.has(key) || (step.layer === 'conflict' && step.at === 0)) continue;
      used.add(key);
      x = { ...step, connection } as Step;
    }
    placed.set(source, x);
    if (byHarness(step)) lastHarness = step.at;
    busy = !endsConnection(x);
    if (endsConnection(x)) {
      connection++;
      last = endOf(x, s.window);
    }
  }
  return { placed, connection, cursor: last.cursor, busy };
}

/**
 * A retention move on the connection after the last end, to a start past that connection's
 * cursor; none without an end, and none when a step comes after that end (a RESYNC sends no
 * EVENT, and the stream stops there: seed 20261204's run 43 paused before an EVENT that never
 * came). A publisher that forgets what was acknowledged already starts its log past the cursor,
 * so the move goes one further (seed 20261203's run 16: a move to the cursor + 1 moved nothing).
 */
function retentionAfter(move: Extract<Step, { layer: 'retention' }>, end: { connection: number; cursor: number; busy: boolean }, s: Stream): Step | undefined {
  if (end.connection === 1 || end.busy) return undefined;
  const first = end.cursor + 1 + (s.forgetAcked ? 1 : 0);
  const room = s.count - first;
  if (room <= 0) return undefined;
  return { layer: 'retention', connection: end.connection, to: first + (move.to % room) };
}
