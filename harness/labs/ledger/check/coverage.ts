// Whether each fault of a ledger scenario took effect on the consumer under test (coverage as
// data, harness/findings/coverage.ts), decided from what the harness saw: the publisher's lines
// and notes on the consumer's stream, the consumer's processes, the files read after them.
//   - the shared `faults` layer (cuts, toxics, signals, loss): harness/judge/fault-coverage.ts;
//   - a publisher misbehaviour took effect when its line (or its silence, its hole, its early
//     close) reached a connection of the consumer;
//   - a retention move when the consumer resumed behind the log's new start on that connection;
//   - a contract hook when it fired in the process: status 86 for `exit`, a non-zero status for
//     `raise`, a stop of its own for `stop`, at the event it names;
//   - a bad environment when the consumer was started with it.
// The control consumer never counts: it meets no fault by design.

import { MAX_LINE_BYTES, MalformedLine, parsePublisherLine } from '../../../../protocol/ledger/wire.js';
import type { Misbehaviour } from '../../../../publisher/ledger/misbehaviour.js';
import type { FaultCoverage } from '../../../findings/coverage.js';
import { describeBadEnvironment } from '../../../judge/environment-duty.js';
import { secs, sharedFaultCoverage } from '../../../judge/fault-coverage.js';
import type { JournalEntry } from '../../../record/journal.js';
import type { Scenario } from '../../../scenario/types.js';
import { clip, showLine } from '../../../text/format.js';
import { LEDGER_FAULT_POINTS } from '../scenario/fault-points.js';
import { type FaultStep, parseFaultPlan } from '../scenario/fault-plan.js';
import type { LedgerPlan } from '../scenario/load.js';
import type { IncarnationFacts } from './incarnations.js';

type Plan = Scenario<LedgerPlan>;

/** One connection of the consumer's stream, as the publisher saw it. */
interface Conn {
  conn: number;
  incarnation?: number;
  resume?: number;
  resync?: string;
  /** Valid EVENT lines sent without a note (the script's own, a duplicate's second copy). */
  events: { seq: number; t: number }[];
  /** Bytes a misbehaviour sent, with its note ("misbehaviour: insert at EVENT 3"). */
  noted: { note: string; line: string; t: number }[];
  /** The publisher's own notes on it (retention moved, fell silent). */
  notes: { text: string; t: number }[];
  close?: { t: number; by: string; reason: string };
}

/** The connections of the consumer's stream, by number (the number a `misbehave` rule names). */
export function consumerConnections(journal: readonly JournalEntry[], stream: string): Map<number, Conn> {
  const conns = new Map<number, Conn>();
  for (const e of journal) {
    if (e.type !== 'wire' || e.stream !== stream) continue;
    let c = conns.get(e.conn);
    if (!c) conns.set(e.conn, (c = { conn: e.conn, events: [], noted: [], notes: [] }));
    if (e.kind === 'open' && e.owner?.role === 'consumer') c.incarnation = e.owner.incarnation;
    else if (e.kind === 'note') c.notes.push({ text: e.text, t: e.t });
    else if (e.kind === 'close') c.close ??= { t: e.t, by: e.by, reason: e.reason };
    else if (e.kind === 'recv' && !e.error && c.resume === undefined) {
      const m = /^RESUME (-?\d+)\n$/.exec(e.line);
      if (m) c.resume = Number(m[1]);
    } else if (e.kind === 'send' && e.note) c.noted.push({ note: e.note, line: e.line, t: e.t });
    else if (e.kind === 'send') {
      const m = /^EVENT (\d+) -?\d+\n$/.exec(e.line);
      if (m) c.events.push({ seq: Number(m[1]), t: e.t });
      else if (e.line.startsWith('RESYNC ')) c.resync = e.line.trim();
    }
  }
  return conns;
}

/** The coverage rows of a ledger run: the shared faults, then the lab's own. */
export function ledgerCoverage(journal: readonly JournalEntry[], plan: Plan, stream: string, incarnations: readonly IncarnationFacts[]): FaultCoverage[] {
  const shared = sharedFaultCoverage(plan.faults, journal, LEDGER_FAULT_POINTS);
  const bad = plan.lab.consumer.badEnvironment;
  if (bad) return [...shared, badEnvironmentRow(journal, bad)];
  const conns = consumerConnections(journal, stream);
  const { misbehaviour, retentionMoves } = plan.lab.publisher;
  return [
    ...shared,
    ...misbehaviour.map((rule) => misbehaviourRow(rule, conns, plan.lab.events)),
    ...retentionMoves.map((move) => retentionRow(move, conns)),
    ...hookRows(plan, incarnations, journal, conns),
  ];
}

// --- the publisher's misbehaviour -----------------------------------------------------------

/** A misbehaviour's kind, from what it sends: a valid line is a resend, a conflict or a jump; other bytes break the grammar. */
export function misbehaviourKind(rule: Misbehaviour, script: readonly { seq: number; delta: number }[]): string {
  const bytes = rule.bytes ?? '';
  if (rule.action === 'duplicate') return 'duplicate';
  if (rule.action === 'skip') return 'gap';
  if (bytes === '') return rule.action === 'silence' ? 'stall' : rule.action;
  if (!bytes.includes('\n')) return bytes.length >= MAX_LINE_BYTES ? 'oversized' : 'fragment';
  const first = bytes.slice(0, bytes.indexOf('\n') + 1);
  try {
    const line = parsePublisherLine(Buffer.from(first, 'latin1'));
    if (line.kind === 'resync') return 'resync';
    if (script[line.seq]?.delta !== line.delta) return 'conflict';
    return line.seq < rule.seq ? 'resend' : line.seq === rule.seq ? 'duplicate' : 'gap';
  } catch (error) {
    if (!(error instanceof MalformedLine)) throw error;
    return 'malformed';
  }
}

const KIND_WORDS: Record<string, string> = {
  conflict: 'the conflicting line',
  resend: 'the resent line',
  duplicate: 'the extra copy',
  gap: 'the line ahead of its turn',
  resync: 'the unasked RESYNC',
  malformed: 'the malformed line',
  oversized: 'the bytes without LF',
  fragment: 'the fragment without LF',
};

function misbehaviourRow(rule: Misbehaviour, conns: Map<number, Conn>, script: LedgerPlan['events']): FaultCoverage {
  const kind = misbehaviourKind(rule, script);
  const c = rule.connection ?? 1;
  const s = rule.seq;
  const row = (took: boolean, how: string): FaultCoverage => ({ fault: `${rule.action} at EVENT ${s} on connection ${c}`, kind, took, how });
  const x = conns.get(c);
  const unmet = (what: string) => row(false, `${what} reached no consumer: ${whyNotReached(conns, c, s)}`);
  const on = x ? `${processOf(x)} on connection ${c}` : '';
  switch (rule.action) {
    case 'duplicate': {
      const copies = x?.events.filter((e) => e.seq === s) ?? [];
      if (copies.length >= 2) return row(true, `EVENT ${s} reached ${on} twice, at ${secs(copies[0]!.t)} and ${secs(copies[1]!.t)}`);
      return unmet(`the duplicate of EVENT ${s}`);
    }
    case 'skip': {
      const reached = x && x.resume !== undefined && x.resume < s && !x.events.some((e) => e.seq === s);
      const after = reached ? x.events.find((e) => e.seq > s) : undefined;
      if (after) return row(true, `EVENT ${s} was left out on connection ${c}: ${processOf(x!)} got EVENT ${after.seq} at ${secs(after.t)} without it`);
      if (reached) return row(false, `EVENT ${s} was left out on connection ${c}, but no EVENT followed it there, so ${processOf(x)} met no hole`);
      return unmet(`the gap at EVENT ${s}`);
    }
    default:
      return rule.bytes ? bytesRow(rule, x, kind, row, unmet) : stopRow(rule, x, row, unmet);
  }
}

/** A misbehaviour that sends bytes of its own (replace, insert, or before a silence or a close): they reached the consumer when sent. */
function bytesRow(
  rule: Misbehaviour,
  x: Conn | undefined,
  kind: string,
  row: (took: boolean, how: string) => FaultCoverage,
  unmet: (what: string) => FaultCoverage,
) {
  const shown = clip(showLine(rule.bytes!), 40);
  const what = `${KIND_WORDS[kind] ?? 'the line'} ${shown === '' ? '(an empty line)' : `\`${shown}\``}`;
  const sent = x?.noted.find((n) => n.note === `misbehaviour: ${rule.action} at EVENT ${rule.seq}`);
  if (sent) return row(true, `${what} reached ${processOf(x!)} on connection ${x!.conn} at ${secs(sent.t)}`);
  return unmet(what);
}

/** A silence or an early close without bytes: the publisher's note (silence) or its close reason says it came. */
function stopRow(rule: Misbehaviour, x: Conn | undefined, row: (took: boolean, how: string) => FaultCoverage, unmet: (what: string) => FaultCoverage) {
  if (rule.action === 'silence') {
    const note = x?.notes.find((n) => n.text === `misbehaviour: silent from EVENT ${rule.seq} on, connection kept open`);
    if (!note) return unmet(`the silence from EVENT ${rule.seq}`);
    const until = x!.close
      ? `until ${x!.close.by === 'publisher' ? 'the publisher' : 'the consumer'} closed it at ${secs(x!.close.t)}`
      : 'to the end of the run';
    return row(true, `the publisher fell silent at EVENT ${rule.seq} on connection ${x!.conn} at ${secs(note.t)}, with ${processOf(x!)} connected, ${until}`);
  }
  const reason = `misbehaviour: close at EVENT ${rule.seq}`;
  if (x?.close?.reason === reason)
    return row(true, `the publisher closed connection ${x.conn} of ${processOf(x)} early, at EVENT ${rule.seq} (${secs(x.close.t)})`);
  return unmet(`the early close at EVENT ${rule.seq}`);
}

const processOf = (x: Conn): string => (x.incarnation === undefined ? 'an unknown process' : `process ${x.incarnation}`);

/** Why the publisher never reached EVENT `seq` on connection `c` of the consumer's stream, in words. */
export function whyNotReached(conns: Map<number, Conn>, c: number, seq: number): string {
  const x = conns.get(c);
  if (!x) {
    const n = conns.size;
    return `connection ${c} never opened (the consumer's stream had ${n === 0 ? 'no connection' : n === 1 ? 'only 1 connection' : `only ${n} connections`})`;
  }
  const who = `${processOf(x)}'s connection ${c}`;
  if (x.resync) return `${who} was answered with ${x.resync}, so no EVENT went down it`;
  if (x.resume === undefined) return `${who} sent no RESUME, so no EVENT went down it`;
  const last = x.events.at(-1)?.seq;
  if (x.resume >= seq && !x.events.some((e) => e.seq === seq)) return `${who} resumed from ${x.resume}, past EVENT ${seq}`;
  const upTo = last === undefined ? 'before any EVENT' : `after EVENT ${last}`;
  if (x.close) return `${who} ended at ${secs(x.close.t)} (${closeWords(x.close)}) ${upTo}, before EVENT ${seq} was due`;
  return `the publisher never came to EVENT ${seq} on ${who} (the last EVENT it sent there was ${last ?? 'none'})`;
}

const closeWords = (close: NonNullable<Conn['close']>): string =>
  close.by === 'publisher' ? `the publisher closed it: ${close.reason}` : close.by === 'reset' ? 'reset by the consumer' : 'closed by the consumer';

// --- retention --------------------------------------------------------------------------

/** A retention move took effect when the consumer resumed behind the log's new start: RESYNC, or the boundary served. */
function retentionRow(move: { connection: number; to: number }, conns: Map<number, Conn>): FaultCoverage {
  const row = (took: boolean, how: string): FaultCoverage => ({
    fault: `retention move to ${move.to} at connection ${move.connection}`,
    kind: 'retention',
    took,
    how,
  });
  const x = conns.get(move.connection);
  const moved = x?.notes.find((n) => n.text === `retention moved to ${move.to} (the consumer was away)`);
  const what = `the retention move to ${move.to} at connection ${move.connection}`;
  if (!x) return row(false, `${what} reached no consumer: ${whyNotReached(conns, move.connection, move.to)}`);
  if (!moved) return row(false, `${what} moved nothing: the log already started at ${move.to} or later when connection ${move.connection} opened`);
  if (x.resume === undefined) return row(false, `${what} reached no consumer: ${processOf(x)} sent no RESUME on that connection`);
  if (x.resume >= move.to) return row(false, `${what} asked nothing of the consumer: ${processOf(x)} resumed from ${x.resume} there, past the log's new start`);
  const answer = x.resync ? `the publisher answered ${x.resync}` : `the boundary cursor ${x.resume}, which the log still serves`;
  return row(true, `the log moved to ${move.to} when connection ${move.connection} opened, and ${processOf(x)} resumed from ${x.resume}, behind it: ${answer}`);
}

// --- the contract's hooks ---------------------------------------------------------------

/** A process as its hooks meet it: where it started, how far it got, how it ended, how often it stopped itself. */
interface Life {
  n: number;
  started: boolean;
  resume?: number;
  sent: Set<number>;
  /** The furthest it had surely committed: its file after it, its ACKs, its RESUME. */
  progress: number;
  exit?: IncarnationFacts['exit'];
  stops: number;
}

function lifeOf(f: IncarnationFacts | undefined, n: number, journal: readonly JournalEntry[], conns: Map<number, Conn>): Life {
  const own = [...conns.values()].filter((x) => x.incarnation === n);
  const sent = new Set(own.flatMap((x) => x.events.map((e) => e.seq)));
  const resume = f?.resumes[0];
  const progress = Math.max(f?.fileAfter?.checkpoint?.[0]?.last ?? -1, ...(f?.acks ?? []).map((a) => a.seq), resume ?? -1);
  const stops = journal.filter((e) => e.type === 'process-stopped' && e.role === 'consumer' && e.incarnation === n).length;
  return { n, started: f?.startedAt !== undefined, ...(resume === undefined ? {} : { resume }), sent, progress, ...(f?.exit ? { exit: f.exit } : {}), stops };
}

/** The contract's order of hook points: by seq, `apply` before `ack`, then as written. */
const contractOrder = (steps: readonly FaultStep[]) =>
  steps.map((s, i) => ({ ...s, i })).sort((a, b) => a.seq - b.seq || (a.point === b.point ? a.i - b.i : a.point === 'apply' ? -1 : 1));

function hookRows(plan: Plan, incarnations: readonly IncarnationFacts[], journal: readonly JournalEntry[], conns: Map<number, Conn>): FaultCoverage[] {
  return plan.lab.consumer.incarnations.flatMap((inc, i) => {
    const parsed = inc.fault === undefined ? undefined : parseFaultPlan(inc.fault);
    if (!parsed?.ok) return [];
    const life = lifeOf(incarnations[i], i + 1, journal, conns);
    const state = { endedAt: undefined as string | undefined, stopsSeen: 0 };
    return contractOrder(parsed.steps).map((step) => hookRow(step, life, state));
  });
}

function hookRow(step: FaultStep, life: Life, state: { endedAt: string | undefined; stopsSeen: number }): FaultCoverage {
  const label = `${step.action}@${step.point}:${step.seq}`;
  const p = `process ${life.n}`;
  const row = (took: boolean, how: string): FaultCoverage => ({ fault: `hook ${label} in ${p}`, kind: 'hook', took, how });
  if (!life.started) return row(false, `the hook ${label} never fired: ${p} never ran`);
  if (life.resume === undefined) return row(false, `the hook ${label} never fired: ${p} sent no RESUME, so no event reached it`);
  if (step.seq <= life.resume)
    return row(false, `the hook ${label} never fired: ${p} resumed from ${life.resume}, and a hook fires only for an event newly applied`);
  if (state.endedAt) return row(false, `the hook ${label} never fired: ${p} had already ended at its hook ${state.endedAt}`);
  const reached = life.sent.has(step.seq) && life.progress >= step.seq - 1;
  if (step.action === 'stop') {
    if (life.stops > state.stopsSeen) {
      state.stopsSeen++;
      return row(true, `${p} stopped itself at its hook ${label} (its stop ${state.stopsSeen}), and the harness read its file while it was stopped`);
    }
    return row(
      false,
      reached ? `${p} got EVENT ${step.seq} but never stopped itself at its hook ${label}` : `the hook ${label} never fired: ${notReached(life, step.seq)}`,
    );
  }
  if (!reached) return row(false, `the hook ${label} never fired: ${notReached(life, step.seq)}`);
  state.endedAt = label;
  const exit = life.exit;
  const fired = exit && !exit.killedBy && !exit.signal && (step.action === 'exit' ? exit.code === 86 : exit.code !== 0);
  if (fired) return row(true, `${p} got EVENT ${step.seq} and exited with status ${exit.code} at its hook ${label} (${secs(exit.t)})`);
  const want = step.action === 'exit' ? 'status 86' : 'non-zero status';
  return row(false, `${p} got EVENT ${step.seq} but ${exitWords(exit)}, not with the ${want} its hook ${label} calls for`);
}

function notReached(life: Life, seq: number): string {
  const p = `process ${life.n}`;
  if (!life.exit) return `seq ${seq} never reached ${p}`;
  return `${p} ${exitWords(life.exit)} having committed up to seq ${life.progress}, before seq ${seq}`;
}

function exitWords(exit: IncarnationFacts['exit']): string {
  if (!exit) return 'never ended';
  if (exit.killedBy) return `was killed at the ${exit.killedBy} (${secs(exit.t)})`;
  if (exit.signal) return `was killed by ${exit.signal} (${secs(exit.t)})`;
  return `exited with status ${exit.code} (${secs(exit.t)})`;
}

// --- a bad environment ------------------------------------------------------------------

/** A bad environment took effect when the consumer was started with it. */
function badEnvironmentRow(journal: readonly JournalEntry[], bad: NonNullable<LedgerPlan['consumer']['badEnvironment']>): FaultCoverage {
  const words = describeBadEnvironment(bad);
  const row = (took: boolean, how: string): FaultCoverage => ({ fault: `bad environment (${words})`, kind: 'bad-environment', took, how });
  const start = journal.find((e): e is Extract<JournalEntry, { type: 'process-start' }> => e.type === 'process-start' && e.role === 'consumer');
  if (!start) return row(false, `the bad environment reached no consumer: no consumer process was started`);
  const as = Object.entries(bad.set).every(([k, v]) => start.env[k] === v) && bad.unset.every((k) => !(k in start.env));
  if (!as) return row(false, `the bad environment reached no consumer: process ${start.incarnation} was started without it`);
  return row(true, `process ${start.incarnation} was started with the bad environment (${words})`);
}
