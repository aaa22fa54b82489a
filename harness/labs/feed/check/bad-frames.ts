// What a consumer did with a bad frame the publisher sent on purpose (a `misbehave` rule). The
// contract (section 2): an invalid frame is applied in no part, nothing after it on that
// connection is applied, and the consumer closes the connection and reconnects; a frame of an
// unknown op is ignored and the connection kept. Every bad frame carries the next real cursor
// with content the chain does not have (the amount is off by one), so a consumer that takes it
// in is caught by its store, not only by its reaction on the wire.

import type { Finding } from '../../../findings/verdict.js';
import type { ConnFacts, ProcessFacts, RunFacts } from './facts.js';
import type { StoreView } from './state.js';
import { cursorSubject, seconds, shortAmount } from '../report/words.js';

const INVALID_DUTY =
  'an invalid frame is applied in no part, nothing after it on that connection is applied, and the consumer closes the connection and reconnects (CONTRACT.md §2, Bad frames)';
const UNKNOWN_DUTY = 'a frame of an unknown op is ignored, and the connection kept (CONTRACT.md §2, Bad frames)';

export interface BadFrame {
  process: ProcessFacts;
  conn: ConnFacts;
  t: number;
  line: string;
  kind: 'invalid' | 'unknown-op';
  /** Why it is invalid, or the unknown op. */
  why: string;
  /** The cursor and amount a lenient reader takes from it, if any. */
  cursor?: string;
  amount?: string;
}

/** `1:10:1` -> `1:00000000000010:0001`: where a lenient reader would file the frame. */
export function paddedCursor(text: string): string {
  const parts = text.split(':');
  if (parts.length !== 3 || !parts.every((p) => /^[0-9]+$/.test(p))) return text;
  const [chain, block, log] = parts as [string, string, string];
  return `${BigInt(chain)}:${block.padStart(14, '0')}:${log.padStart(4, '0')}`;
}

/** The cursor and amount in a frame's text, read as leniently as a careless consumer would (a number, leading zeros). */
export function lenientlyRead(line: string): { cursor?: string; amount?: string } {
  const cursor = /"cursor"\s*:\s*"([^"]{1,64})"/.exec(line)?.[1];
  const amount = /"amount"\s*:\s*"?([0-9]{1,100})/.exec(line)?.[1];
  return {
    ...(cursor === undefined ? {} : { cursor: paddedCursor(cursor) }),
    ...(amount === undefined ? {} : { amount: BigInt(amount).toString() }),
  };
}

/** The first bad frame (invalid or of an unknown op) the publisher sent on each of the consumer's connections. */
export function badFrames(consumers: readonly ProcessFacts[]): BadFrame[] {
  const out: BadFrame[] = [];
  for (const process of consumers)
    for (const conn of process.conns) {
      const s = conn.sent.find((f) => f.invalid !== undefined || f.unknownOp !== undefined);
      if (!s) continue;
      const kind = s.invalid !== undefined ? 'invalid' : 'unknown-op';
      const why = kind === 'invalid' ? s.invalid! : s.unknownOp!;
      out.push({ process, conn, t: s.t, line: s.line, kind, why, ...lenientlyRead(s.line) });
    }
  return out;
}

/** The event the store holds at the bad frame's cursor with the bad frame's amount, where the chain has another. */
function heldAsSent(b: BadFrame, view: StoreView | undefined, chainAmount: (cursor: string) => string | undefined): string | undefined {
  if (!view || b.cursor === undefined || b.amount === undefined) return undefined;
  const real = chainAmount(b.cursor);
  if (real === b.amount) return undefined;
  const held = (view.events.find((e) => e.cursor === b.cursor)?.payload as { amount?: unknown } | undefined)?.amount;
  // As text (a canonical or leading-zero decimal), or as a JSON number a careless consumer kept.
  const same =
    typeof held === 'string'
      ? /^[0-9]{1,100}$/.test(held) && BigInt(held) === BigInt(b.amount)
      : typeof held === 'number' && held === Number(b.amount) && held !== Number(real);
  if (!same) return undefined;
  return `its store holds the event at ${b.cursor} with amount ${shortAmount(String(held))}${real === undefined ? '' : `, where the chain has ${shortAmount(real)}`}`;
}

export interface BadFrameInput {
  facts: RunFacts;
  /** The chain's Transfer amount at a cursor (canonical), if the chain has an event there. */
  chainAmount(cursor: string): string | undefined;
  /** The consumer's store as read after `conn` ended: at the next subscribe, or at the end. */
  viewAfter(conn: ConnFacts): StoreView | undefined;
}

/** Cursors sent to the consumer's stream before `t`, on any connection. */
const sentBefore = (facts: RunFacts, t: number): Set<string> =>
  new Set(facts.conns.consumer.flatMap((c) => c.sent.filter((s) => s.t < t && s.frame?.op === 'event').map((s) => (s.frame as { cursor: string }).cursor)));

/**
 * One finding per bad frame not handled as the contract says, most telling first: the frame taken
 * in (its content in the store), frames after an invalid one applied or answered, the connection
 * kept open after an invalid frame, or closed after an unknown op.
 */
export function badFrameProblems({ facts, chainAmount, viewAfter }: BadFrameInput): Finding[] {
  const out: Finding[] = [];
  for (const b of badFrames(facts.consumers)) {
    const name = b.process.role === 'control' ? 'the control consumer' : `process ${b.process.incarnation}`;
    const shown = b.line.length > 80 ? `${b.line.slice(0, 77)}…` : b.line.trimEnd();
    const what = b.kind === 'invalid' ? `the invalid frame \`${shown}\` (${b.why})` : `the frame \`${shown}\` of unknown op ${JSON.stringify(b.why)}`;
    const subject = { process: { role: b.process.role, incarnation: b.process.incarnation }, t: b.t, ...(b.cursor ? cursorSubject([b.cursor]) : {}) };
    const where = `${name}, connection ${b.conn.conn}`;
    const duty = b.kind === 'invalid' ? INVALID_DUTY : UNKNOWN_DUTY;
    const view = viewAfter(b.conn);
    const taken = heldAsSent(b, view, chainAmount);
    if (taken) {
      out.push({ code: b.kind === 'invalid' ? 'bad-frame-applied' : 'unknown-op-applied', text: `${where} applied ${what}: ${taken} — ${duty}`, subject });
      continue;
    }
    const end = b.process.sigtermAt ?? Number.POSITIVE_INFINITY;
    const byConsumer = (b.conn.closedBy === 'consumer' || b.conn.closedBy === 'reset') && (b.conn.closedAt ?? end) < end;
    if (b.kind === 'unknown-op') {
      if (byConsumer && !b.process.fault && !b.conn.sent.some((s) => s.t > b.t && s.invalid !== undefined))
        out.push({
          code: 'unknown-op-refused',
          text: `${where} closed the connection ${seconds((b.conn.closedAt ?? b.t) - b.t)} after ${what}, as if it were invalid — ${duty}`,
          subject,
        });
      continue;
    }
    // Read on: an event first sent after the bad frame is in the store, or a later ping was answered.
    const before = sentBefore(facts, b.t);
    const later = b.conn.sent.filter((s) => s.t > b.t && s.frame?.op === 'event').map((s) => (s.frame as { cursor: string }).cursor);
    const appliedLater = later.filter((c) => !before.has(c) && view?.events.some((e) => e.cursor === c));
    const answered = b.conn.pings.filter((p) => p.t > b.t && b.conn.pongs.has(p.id));
    if (appliedLater.length > 0 || answered.length > 0)
      out.push({
        code: 'bad-frame-read-on',
        text: `${where} read on past ${what}: ${
          appliedLater.length > 0
            ? `its store then held ${appliedLater.length === 1 ? `the event ${appliedLater[0]}` : `${appliedLater.length} events from ${appliedLater[0]}`}, sent after it on that connection`
            : `it answered ${answered.length === 1 ? `ping ${answered[0]!.id}` : `${answered.length} pings`}, sent after it on that connection`
        } — ${duty}`,
        subject: { ...subject, ...(appliedLater.length ? cursorSubject(appliedLater.slice(0, 4)) : {}) },
      });
    else if (!byConsumer)
      out.push({
        code: 'bad-frame-not-closed',
        text: `${where} did not close the connection after ${what}: ${
          b.conn.closedAt === undefined || b.conn.closedAt >= end
            ? 'it was still open at the end of the run'
            : `the ${b.conn.closedBy} closed it (${b.conn.closeReason})`
        } — ${duty}`,
        subject,
      });
  }
  return out;
}
