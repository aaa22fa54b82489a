// What a consumer did with a line that breaks the grammar (the publisher sent it on purpose: a
// `misbehave` rule). The contract: nothing from that line is applied or acknowledged, no later
// line on that connection is processed, the consumer closes the connection at once and exits
// non-zero. Judged from the wire (the ACKs that came after the broken line, who closed) and the
// file each process left.

import { grammarBreak, MAX_LINE_BYTES } from '../../../../protocol/ledger/wire.js';
import type { JournalEntry } from '../../../record/journal.js';
import { clip, showLine } from '../../../text/format.js';
import type { Finding } from '../../../findings/verdict.js';
import type { IncarnationFacts } from './incarnations.js';
import type { StoreSnapshot } from './store-reader.js';

const CLOSE_AT_ONCE = 'on a malformed line a consumer applies and acknowledges nothing from it on, closes the connection at once and exits non-zero';

/** The event a lenient reader would take from a broken EVENT line ("EVENT 3 +4", "event\t03 -0"), if any. */
const leniently = (line: string): { seq: number; delta: number | undefined } | undefined => {
  const m = /^\s*event\s+\+?0*([0-9]+)(?:\s+([+-]?[0-9]+))?/i.exec(line);
  return m ? { seq: Number(m[1]), delta: m[2] === undefined ? undefined : Number(m[2]) } : undefined;
};

interface Broken {
  incarnation: number;
  conn: number;
  t: number;
  line: string;
  /** Its length on the wire, what the journal left out of it included. */
  size: number;
  why: string;
  /** The event it reads as, leniently. */
  as: { seq: number; delta: number | undefined } | undefined;
  /** Valid EVENT lines sent after it on the same connection, by seq. */
  laterEvents: Map<number, number>;
  /** ACKs received after it on the same connection. */
  acks: { seq: number; t: number }[];
  closedBy?: { by: string; reason: string };
}

/** The first broken line the publisher sent on each of the consumer's connections, with what followed it there. */
export function brokenLines(journal: readonly JournalEntry[], stream: string): Broken[] {
  const owner = new Map<number, number>();
  const found = new Map<number, Broken>();
  // EVENTs sent on each connection before its broken line: their ACKs may rightly come after it.
  const sentBefore = new Map<number, Set<number>>();
  for (const e of journal) {
    if (e.type !== 'wire' || e.stream !== stream) continue;
    if (e.kind === 'open') {
      if (e.owner?.role === 'consumer') owner.set(e.conn, e.owner.incarnation);
      continue;
    }
    const incarnation = owner.get(e.conn);
    if (incarnation === undefined) continue;
    const broken = found.get(e.conn);
    if (!broken) {
      const why = e.kind === 'send' ? grammarBreak(e.line, 'publisher') : undefined;
      if (e.kind === 'send' && why !== undefined)
        found.set(e.conn, {
          incarnation,
          conn: e.conn,
          t: e.t,
          line: e.line,
          size: e.line.length + (e.truncated ?? 0),
          why,
          as: leniently(e.line),
          laterEvents: new Map(),
          acks: [],
        });
      const event = e.kind === 'send' && why === undefined ? /^EVENT (0|[1-9][0-9]*) /.exec(e.line) : null;
      if (event) sentBefore.set(e.conn, (sentBefore.get(e.conn) ?? new Set()).add(Number(event[1])));
      continue;
    }
    if (e.kind === 'close') broken.closedBy ??= { by: e.by, reason: e.reason };
    if (e.kind === 'send') {
      const event = /^EVENT (0|[1-9][0-9]*) /.exec(e.line);
      if (event && grammarBreak(e.line, 'publisher') === undefined)
        broken.laterEvents.set(Number(event[1]), (broken.laterEvents.get(Number(event[1])) ?? 0) + 1);
    }
    const ack = e.kind === 'recv' && !e.error ? /^ACK (\d+)\n$/.exec(e.line) : null;
    if (ack && !sentBefore.get(e.conn)?.has(Number(ack[1]))) broken.acks.push({ seq: Number(ack[1]), t: e.t });
  }
  return [...found.values()];
}

/**
 * One finding per connection that got a broken line and was not handled as the contract says,
 * most telling first: the line itself applied, later lines acknowledged, or the connection left
 * open until the publisher closed it, or an over-long line waited on until the deadline. A
 * consumer that closed at once, acknowledging nothing after the line, gets none (its exit status
 * is judged with the others). `events` is the script, `incarnation(n)` the file process n left
 * and how it ended.
 */
export function malformedProblems(
  journal: readonly JournalEntry[],
  stream: string,
  events: readonly { seq: number; delta: number }[],
  incarnation: (n: number) => Pick<IncarnationFacts, 'fileAfter' | 'exit'> | undefined,
): Finding[] {
  const problems: Finding[] = [];
  for (const b of brokenLines(journal, stream)) {
    const facts = incarnation(b.incarnation);
    const name = `incarnation ${b.incarnation}`;
    const what = `the malformed line \`${clip(showLine(b.line), 40) || '\\n'}\` (${b.why}, which the grammar forbids)`;
    const seq = b.as?.seq;
    const subject = { process: { role: 'consumer' as const, incarnation: b.incarnation }, t: b.t, ...(seq === undefined ? {} : { seqs: [seq] }) };
    const acks = [...new Set(b.acks.map((a) => a.seq))].join(', ');
    if (seq !== undefined && applied(b, seq, events, facts?.fileAfter))
      problems.push({
        code: 'malformed-applied',
        text: `${name} accepted ${what}: it acknowledged it (ACK ${seq}) instead of rejecting it — ${CLOSE_AT_ONCE} (CONTRACT.md §3)`,
        subject,
      });
    else if (b.acks.length > 0)
      problems.push({
        code: 'malformed-read-on',
        text: `${name} read on past ${what}: it acknowledged later lines on the same connection (ACK ${acks}) instead of closing it at once — ${CLOSE_AT_ONCE} (CONTRACT.md §3)`,
        subject,
      });
    // A short fragment without LF is not a line until the stream ends: only the publisher can close then.
    else if (b.closedBy?.by === 'publisher' && (b.line.endsWith('\n') || b.line.length >= MAX_LINE_BYTES))
      problems.push({
        code: 'malformed-not-closed',
        text: `${name} did not close the connection after ${what}: the publisher closed it (${b.closedBy.reason}) — ${CLOSE_AT_ONCE} (CONTRACT.md §3)`,
        subject,
      });
    // An unterminated line already past the limit, and the process waited on it until it was killed.
    else if (!b.line.endsWith('\n') && b.line.length > MAX_LINE_BYTES && facts?.exit?.killedBy === 'deadline')
      problems.push({
        code: 'line-not-bounded',
        text: `${name} kept reading a line that was already too long: ${b.size} bytes without a newline, and it waited for the rest until it was killed at the deadline — a line is at most ${MAX_LINE_BYTES} bytes, so once you hold ${MAX_LINE_BYTES} bytes without a newline the line is malformed: close at once and exit non-zero (CONTRACT.md §3)`,
        subject,
      });
  }
  return problems;
}

/**
 * Whether the consumer applied the broken line itself: it sent more ACKs for its seq than valid
 * copies of that EVENT followed it, or its file holds the seq with the broken line's delta where
 * the script has another.
 */
function applied(b: Broken, seq: number, events: readonly { seq: number; delta: number }[], file: StoreSnapshot | undefined): boolean {
  if (b.acks.filter((a) => a.seq === seq).length > (b.laterEvents.get(seq) ?? 0)) return true;
  const delta = b.as?.delta;
  if (delta === undefined || events[seq]?.delta === delta) return false;
  return file?.ledger.some(([s, d]) => s === seq && d === delta) ?? false;
}
