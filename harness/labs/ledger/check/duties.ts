// Duties the contract states for every EVENT line, judged from the wire whatever the scenario
// expects: each EVENT a consumer read is acknowledged (duplicates too); a line that reuses a
// committed seq with another delta (a Conflict) is never acknowledged and ends the session; and a
// process an `exit` or `raise` fault ended never acknowledged the event it was inside. None of
// these needs a per-incarnation ACK list, so they judge generated schedules (`chaoslab chaos`) as
// well as the catalogue; an incarnation whose exact ACKs the scenario lists is judged by that
// list instead, except for a Conflict: that list says which ACK came, not that it was a
// Conflict's.
//
// "Read" is proven, never assumed: lines are processed in order and TCP keeps order, so an ACK of
// an EVENT sent later proves every earlier line on that connection was read. What was still in
// flight when a connection ended proves nothing.

import { grammarBreak } from '../../../../protocol/ledger/wire.js';
import type { JournalEntry } from '../../../record/journal.js';
import type { Finding } from '../../../findings/verdict.js';
import type { IncarnationFacts } from './incarnations.js';
import { parseFaultPlan } from '../scenario/fault-plan.js';
import { scriptDeltaOf } from './state.js';

const fmtT = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;
const who = (n: number) => ({ role: 'consumer' as const, incarnation: n });

interface Sent {
  t: number;
  seq: number;
  delta: number;
  line: string;
  /** The script's delta for this seq (undefined: the script has no such seq). */
  script: number | undefined;
}

/** One connection of the consumer's stream: what the publisher sent and the ACKs it received. */
interface Connection {
  conn: number;
  incarnation: number;
  resume?: number;
  events: Sent[];
  acks: { seq: number; t: number }[];
}

/** The consumer stream's connections, each with its owner, its valid EVENT lines and its ACKs, in order. */
export function connectionsOf(journal: readonly JournalEntry[], stream: string, events: readonly { seq: number; delta: number }[]): Connection[] {
  const deltaOf = scriptDeltaOf(events);
  const conns = new Map<number, Connection>();
  for (const e of journal) {
    if (e.type !== 'wire' || e.stream !== stream) continue;
    if (e.kind === 'open') {
      if (e.owner?.role === 'consumer') conns.set(e.conn, { conn: e.conn, incarnation: e.owner.incarnation, events: [], acks: [] });
      continue;
    }
    const c = conns.get(e.conn);
    if (!c) continue;
    if (e.kind === 'send') {
      // Only lines the grammar accepts: broken ones are judged by malformed.ts.
      const m = grammarBreak(e.line, 'publisher') === undefined ? /^EVENT (\d+) (-?\d+)\n$/.exec(e.line) : null;
      if (m) c.events.push({ t: e.t, seq: Number(m[1]), delta: Number(m[2]), line: e.line, script: deltaOf(Number(m[1])) });
    } else if (e.kind === 'recv' && !e.error) {
      const ack = /^ACK (\d+)\n$/.exec(e.line);
      if (ack) c.acks.push({ seq: Number(ack[1]), t: e.t });
      const resume = /^RESUME (-?\d+)\n$/.exec(e.line);
      if (resume && c.resume === undefined) c.resume = Number(resume[1]);
    }
  }
  return [...conns.values()];
}

const consistent = (s: Sent): boolean => s.script === s.delta;

/**
 * A Conflict: an EVENT for a seq the consumer already holds (sent before on this connection, or
 * at or below its RESUME cursor) with a delta the script does not give it. Acknowledging it, or
 * reading on past it, breaks the contract; the line is the publisher's own misbehaviour.
 */
export function conflictProblems(conns: readonly Connection[]): Finding[] {
  const problems: Finding[] = [];
  for (const c of conns) {
    const index = c.events.findIndex((s, i) => !consistent(s) && held(c, s.seq, i));
    if (index < 0) continue;
    const conflict = c.events[index]!;
    const name = `incarnation ${c.incarnation}`;
    const subject = { process: who(c.incarnation), t: conflict.t, seqs: [conflict.seq] };
    const what = `the conflicting line \`${conflict.line.trimEnd()}\` (seq ${conflict.seq} again, with another delta than the ${conflict.script === undefined ? 'script, which has no such seq' : `script's ${conflict.script}`})`;
    const duty =
      'same seq with another delta is a Conflict, not a duplicate: nothing of it is applied or acknowledged, and the session ends non-zero (CONTRACT.md §4)';
    const acksOf = c.acks.filter((a) => a.seq === conflict.seq).length;
    const copies = c.events.filter((s) => s.seq === conflict.seq && consistent(s)).length;
    // EVENTs sent before the conflict may rightly be acknowledged after it: they were in flight.
    const before = new Set(c.events.slice(0, index).map((s) => s.seq));
    const later = c.acks.filter((a) => a.t >= conflict.t && !before.has(a.seq));
    if (acksOf > copies) problems.push({ code: 'conflict-acknowledged', text: `${name} acknowledged ${what}: ${duty}`, subject });
    else if (later.length > 0)
      problems.push({
        code: 'conflict-read-on',
        text: `${name} read on past ${what}: it acknowledged later lines on the same connection (ACK ${[...new Set(later.map((a) => a.seq))].join(', ')}) — ${duty}`,
        subject,
      });
  }
  return problems;
}

/** Whether the consumer held `seq` when line `index` of `c` came: sent before it on the connection, or at or below the RESUME cursor. */
const held = (c: Connection, seq: number, index: number): boolean =>
  (c.resume !== undefined && seq <= c.resume) || c.events.slice(0, index).some((s) => s.seq === seq && consistent(s));

/**
 * Every EVENT line the consumer read is acknowledged, a duplicate too (or the publisher keeps
 * retrying). Read is proven by an ACK of an EVENT first sent after it on the same connection.
 */
export function unacknowledgedProblems(conns: readonly Connection[], judged: ReadonlySet<number>): Finding[] {
  const problems: Finding[] = [];
  for (const c of conns) {
    if (judged.has(c.incarnation)) continue;
    const conflictAt = c.events.findIndex((s, i) => !consistent(s) && held(c, s.seq, i));
    const judgedEvents = conflictAt < 0 ? c.events : c.events.slice(0, conflictAt);
    // Counted once per connection: a 100 000-event run's ACKs are not scanned again for every seq.
    const bySeq = new Map<number, Sent[]>();
    for (const s of judgedEvents) {
      const copies = bySeq.get(s.seq);
      if (copies) copies.push(s);
      else bySeq.set(s.seq, [s]);
    }
    const acksOf = new Map<number, number>();
    for (const a of c.acks) acksOf.set(a.seq, (acksOf.get(a.seq) ?? 0) + 1);
    const firstSent = new Map<number, number>();
    for (const s of c.events) if (!firstSent.has(s.seq)) firstSent.set(s.seq, s.t);
    for (const [seq, copies] of bySeq) {
      const lastCopy = copies.at(-1)!;
      const acks = acksOf.get(seq) ?? 0;
      if (acks >= copies.length) continue;
      // A later EVENT, first sent after the last copy, whose ACK came: every copy was read.
      const proof = c.acks.find((a) => a.seq !== seq && (firstSent.get(a.seq) ?? -1) > lastCopy.t);
      if (!proof) continue;
      const name = `incarnation ${c.incarnation}`;
      problems.push(
        acks > 0
          ? {
              code: 'duplicate-not-acked',
              text: `${name} acknowledged seq ${seq} only ${acks === 1 ? 'once' : `${acks} times`}, but it received EVENT ${seq} ${copies.length === 2 ? 'twice' : `${copies.length} times`} on connection ${c.conn} (it acknowledged the later EVENT ${proof.seq} at ${fmtT(proof.t)}): a duplicate must be acknowledged too, or the publisher keeps retrying (CONTRACT.md §4)`,
              subject: { process: who(c.incarnation), seqs: [seq], t: lastCopy.t },
            }
          : {
              code: 'event-not-acked',
              text: `${name} never acknowledged EVENT ${seq}, although it read on past it on connection ${c.conn} (it acknowledged the later EVENT ${proof.seq} at ${fmtT(proof.t)}): every EVENT is acknowledged once it is committed`,
              subject: { process: who(c.incarnation), seqs: [seq], t: lastCopy.t },
            },
      );
    }
  }
  return problems;
}

/**
 * A process ended by an `exit` fault (status 86) or a `raise` one (another non-zero status) was
 * inside the event of the step that fired, before its ACK: it must not have sent that ACK. The
 * step that fired is the first exit or raise step past the durable cursor the process started
 * from (events are processed in seq order, `apply` before `ack` of the same seq), it must be of
 * the kind the status says, and the file it left must agree (`ack:k` leaves last k, `apply:k`
 * last k−1: an error before the step leaves less).
 */
export function exitFaultAckProblems(incarnations: readonly IncarnationFacts[], judged: ReadonlySet<number>): Finding[] {
  const problems: Finding[] = [];
  for (const [i, f] of incarnations.entries()) {
    const code = f.exit?.code;
    if (judged.has(f.incarnation) || typeof code !== 'number' || code === 0 || !f.fault) continue;
    const plan = parseFaultPlan(f.fault);
    if (!plan.ok) continue;
    const startedFrom = i === 0 ? -1 : incarnations[i - 1]?.fileAfter?.checkpoint[0]?.last;
    if (startedFrom === undefined) continue;
    const order = (s: { point: string; seq: number }) => s.seq * 2 + (s.point === 'ack' ? 1 : 0);
    const fired = plan.steps.filter((s) => s.action !== 'stop' && s.seq > startedFrom).sort((a, b) => order(a) - order(b))[0];
    if (!fired || fired.action !== (code === 86 ? 'exit' : 'raise')) continue;
    const leftAt = f.fileAfter?.checkpoint[0]?.last;
    if (leftAt !== (fired.point === 'ack' ? fired.seq : fired.seq - 1)) continue;
    const ack = f.acks.find((a) => a.seq === fired.seq);
    if (ack)
      problems.push({
        code: 'ack-before-commit',
        text: `incarnation ${f.incarnation} sent ACK ${fired.seq} at ${fmtT(ack.t)}, which it must not send${whyNoAck(f.fault, fired.seq)}`,
        subject: { process: who(f.incarnation), seqs: [fired.seq], t: ack.t },
      });
  }
  return problems;
}

const ACK_AFTER_COMMIT = 'write ACK s only after COMMIT returned (CONTRACT.md §4, ACK only after COMMIT)';

/** Explains, from the fault plan, why an ACK for `seq` proves an ordering bug. */
export function whyNoAck(fault: string | undefined, seq: number): string {
  const hook = fault?.split(',').find((f) => f.endsWith(`:${seq}`) && /^(exit|raise)@/.test(f));
  if (!hook) return '';
  const [action, rest] = hook.split('@') as [string, string];
  const ended = action === 'exit' ? 'the process was ended' : 'an error was raised';
  return rest.startsWith('ack')
    ? `: ${ended} at fault point ack:${seq}, after COMMIT and before the ACK is written, so this ACK was written before seq ${seq} was committed — ${ACK_AFTER_COMMIT}`
    : `: ${ended} at fault point apply:${seq}, inside the transaction, so seq ${seq} was acknowledged before it was committed — ${ACK_AFTER_COMMIT}`;
}
