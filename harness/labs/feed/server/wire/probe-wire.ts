// A probe's wire record: its relay's lines journaled as the wire entries the feed lab's checks and
// sequence diagram read (stream `probe-<n>`, owned by that probe), each connection's `due:`
// notes added as the frames pass (wire-due.ts): what its subscribe was due, asked again when the
// first answer arrives (the outbox may have moved meanwhile), and at a later `reset
// stale-cursor`, whether it was due.

import { parseCursor } from '../../../../../protocol/feed/cursor.js';
import type { OutboxReader } from '../../../../../publisher/feed/outbox/reader.js';
import { type Position, positionBeforeBlock, positionOf } from '../../../../../publisher/feed/outbox/position.js';
import type { TranscriptEvent } from '../../../../../publisher/transcript.js';
import type { RunContext } from '../../../../lab-api/lab.js';
import type { FeedPlan } from '../../scenario/plan.js';
import type { RelaySink } from './relay.js';
import { type DueAnswer, dueAtSubscribe, dueNote, staleDue, type SubscribeSeen } from './wire-due.js';

/** The journal's stream of probe `n`. */
export const probeStream = (n: number): string => (n === 1 ? 'probe' : `probe-${n}`);
/** The fault name of the harness's SIGTERM to a probe whose store is of another chain, once its first connection was answered. */
export const probeDone = (n: number): string => `done-probe-${n}`;

interface ConnWatch {
  sub?: SubscribeSeen;
  due?: DueAnswer;
  answered: boolean;
  held?: Position;
}

function json(line: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function subscribeOf(frame: Record<string, unknown>): SubscribeSeen | undefined {
  const { cursor, blockHash, topics } = frame;
  if (!Array.isArray(topics) || !topics.every((t) => typeof t === 'string')) return undefined;
  if ((cursor !== null && typeof cursor !== 'string') || (blockHash !== null && typeof blockHash !== 'string')) return undefined;
  return { cursor: cursor as string | null, blockHash: blockHash as string | null, topics: topics as string[] };
}

/** A position the frame says the probe now holds everything up to, if it says one. */
function heldAfter(frame: Record<string, unknown>): Position | undefined {
  try {
    if ((frame.op === 'snapshot' || frame.op === 'event') && typeof frame.cursor === 'string') return positionOf(parseCursor(frame.cursor));
    if (frame.op === 'revoke' && typeof frame.fromCursor === 'string') return positionBeforeBlock(parseCursor(frame.fromCursor).blockNumber);
  } catch {
    return undefined;
  }
  return undefined;
}

/** The sink for probe `n`'s relay: journals its lines and the `due:` notes. */
export function probeWireSink(ctx: RunContext<FeedPlan>, n: number, reader: OutboxReader, onClose?: (conn: number) => void): RelaySink {
  const stream = probeStream(n);
  const record = ctx.wire(() => ({ role: 'control', incarnation: n }));
  const conns = new Map<number, ConnWatch>();
  const put = (conn: number, event: TranscriptEvent) => record({ t: ctx.clock(), stream, conn, ...event });
  const note = (conn: number, text: string) => put(conn, { kind: 'note', text });
  return (conn, event) => {
    let watch = conns.get(conn);
    if (!watch) conns.set(conn, (watch = { answered: false }));
    if (event.kind === 'recv') {
      put(conn, event);
      const frame = json(event.line);
      const sub = !watch.sub && frame?.op === 'subscribe' ? subscribeOf(frame) : undefined;
      if (sub) {
        watch.sub = sub;
        watch.due = dueAtSubscribe(reader, sub);
        note(conn, dueNote(watch.due));
        if (sub.cursor !== null) watch.held = heldAfter({ op: 'event', cursor: sub.cursor });
      }
      return;
    }
    if (event.kind === 'send' && watch.sub) {
      const frame = json(event.line);
      const op = frame?.op;
      if (frame && !watch.answered && op !== 'ping' && op !== 'pong') {
        watch.answered = true;
        const now = dueAtSubscribe(reader, watch.sub);
        if (watch.due && dueNote(now) !== dueNote(watch.due)) note(conn, dueNote(now));
      } else if (frame && op === 'reset' && frame.reason === 'stale-cursor' && watch.held) {
        note(conn, dueNote(staleDue(reader, watch.held, watch.sub.topics)));
      }
      const held = frame && heldAfter(frame);
      if (held) watch.held = held;
    }
    put(conn, event);
    if (event.kind === 'close') {
      conns.delete(conn);
      onClose?.(conn);
    }
  };
}
