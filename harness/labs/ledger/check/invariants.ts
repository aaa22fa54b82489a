// The ledger store's invariants: what every read between and during processes must show, and
// what the final store must hold against the script. Findings in plain words, with their subject.

import type { JournalEntry } from '../../../record/journal.js';
import type { Finding, ProcessRef } from '../../../findings/verdict.js';
import { stoppedLockWords } from '../../../judge/stopped-lock.js';
import type { IncarnationFacts } from './incarnations.js';
import { type FaultStep, parseFaultPlan } from '../scenario/fault-plan.js';
import type { LedgerPlan } from '../scenario/load.js';
import { scriptDeltaOf } from './state.js';
import type { StoreSnapshot } from './store-reader.js';

/** A finding names at most this many seqs as its subject (a 100 000-seq hole needs only its start highlighted). */
const SUBJECT_MAX = 100;

/** Findings of one kind that each name one seq, before the rest are named together. */
const EACH_MAX = 10;

const fmtT = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;
const who = (n: number) => ({ role: 'consumer' as const, incarnation: n });

/**
 * A process stopped at fault point ack:k is past COMMIT and before its ACK: an ACK k the
 * publisher already holds was written before the COMMIT (a stop hook, unlike exit and raise,
 * lets the process go on, so only the ACK's time tells).
 */
function earlyAck(f: IncarnationFacts, seq: number, stoppedAt: number): Finding | undefined {
  const ack = f.acks.find((a) => a.seq === seq && a.t <= stoppedAt);
  if (!ack) return undefined;
  return {
    code: 'ack-before-commit',
    text: `incarnation ${f.incarnation} sent ACK ${seq} at ${fmtT(ack.t)}, before it stopped at fault point ack:${seq} (read at ${fmtT(stoppedAt)}), which comes after COMMIT and before the ACK is written: the ACK was written before seq ${seq} was committed — write ACK s only after COMMIT returned (CONTRACT.md §4, ACK only after COMMIT)`,
    subject: { process: who(f.incarnation), seqs: [seq], t: ack.t },
  };
}

/**
 * What the harness read between and during processes: every read must show a consistent
 * store (never a half-applied event); a process stopped inside the transaction of seq k must
 * show the state before k; and an ACK is a promise — what a process acknowledged must be in
 * its file when it ends.
 */
export function midRunProblems(journal: readonly JournalEntry[], incarnations: IncarnationFacts[]): Finding[] {
  const problems: Finding[] = [];
  const previousLast: (number | undefined)[] = [];
  const stopsSeen: number[] = []; // reads while stopped so far, by incarnation
  for (const e of journal) {
    if (e.type !== 'store-read' || e.role !== 'consumer' || e.incarnation === undefined || e.when === 'final') continue;
    const f = incarnations[e.incarnation - 1];
    if (!f) continue;
    const store = e.store as StoreSnapshot;
    const process = who(f.incarnation);
    // Counted before anything can skip the read, so the i-th read stays with the i-th stop.
    let stop: FaultStep | undefined;
    if (e.when === 'while-stopped') {
      const i = stopsSeen[e.incarnation] ?? 0;
      stopsSeen[e.incarnation] = i + 1;
      stop = stopsOf(f)[i];
      const early = stop?.point === 'ack' ? earlyAck(f, stop.seq, e.t) : undefined;
      if (early) problems.push(early);
    }
    const moment = e.when === 'while-stopped' ? `while incarnation ${f.incarnation} was stopped` : `when incarnation ${f.incarnation} ended`;
    if (store.error) {
      const locked = e.when === 'while-stopped' ? stoppedLockWords(store.error) : undefined;
      problems.push({
        code: 'unreadable-mid-run',
        text: `${moment}, ${locked ?? `its file could not be read through an independent connection (${store.error})`}`,
        subject: { process, t: e.t },
      });
      continue;
    }
    const reset = e.when === 'after-exit' ? checkpointReset(f.incarnation, previousLast[e.incarnation - 1], store) : undefined;
    if (reset) problems.push({ ...reset, subject: { process, t: e.t } });
    problems.push(...inconsistencies(moment, store, { process, t: e.t }, reset !== undefined));
    if (e.when === 'while-stopped') {
      const problem = stop && stoppedReadProblem(stop, store);
      if (stop && problem)
        problems.push({
          code: stop.point === 'apply' ? 'uncommitted-visible' : 'commit-not-visible',
          text:
            stop.point === 'apply'
              ? `${moment} inside the transaction of seq ${stop.seq}, an independent read saw ${problem}; it must see the state before seq ${stop.seq} (last ${stop.seq - 1}): uncommitted work was visible`
              : `${moment} after the COMMIT of seq ${stop.seq} (before its ACK), an independent read saw ${problem}; it must see seq ${stop.seq} committed (last ${stop.seq}): the ACK would promise what was not committed`,
          subject: { process, t: e.t, seqs: [stop.seq] },
        });
      continue;
    }
    const held = new Set(store.ledger.map(([seq]) => seq));
    const last = store.checkpoint[0]?.last ?? -1;
    const broken = f.acks.filter((a) => !held.has(a.seq) || last < a.seq);
    // The first few each get a finding; the rest one between them (50 000 findings help nobody).
    for (const a of broken.slice(0, EACH_MAX))
      problems.push({
        code: 'broken-ack-promise',
        text: `incarnation ${f.incarnation} acknowledged seq ${a.seq} at ${fmtT(a.t)}, but when it ended its file did not hold seq ${a.seq} (last ${last}): the ACK was a broken promise`,
        subject: { process, seqs: [a.seq], t: a.t },
      });
    const rest = broken.slice(EACH_MAX);
    if (rest.length > 0)
      problems.push({
        code: 'broken-ack-promise',
        text: `incarnation ${f.incarnation} broke ${rest.length} more such promises: ${listSeqs(rest.map((a) => a.seq))} acknowledged, not in its file when it ended`,
        subject: { process, seqs: rest.slice(0, SUBJECT_MAX).map((a) => a.seq) },
      });
    previousLast[e.incarnation] = last;
  }
  // The cursor a restarted process sends must be the durable one, read before it started.
  for (const f of incarnations) {
    const durable = previousLast[f.incarnation - 1];
    if (f.incarnation > 1 && durable !== undefined && f.resumes.length > 0 && f.resumes[0] !== durable)
      problems.push({
        code: 'resume-not-durable',
        text: `incarnation ${f.incarnation} sent RESUME ${f.resumes[0]}, but its file's durable cursor was ${durable} when it started — RESUME carries the last read from the store when the process starts (CONTRACT.md §5)`,
        subject: { process: who(f.incarnation), seqs: [f.resumes[0]!] },
      });
  }
  return problems;
}

/**
 * The stop hooks of a process's plan in the order a correct consumer meets them: by seq, `apply`
 * before `ack`, each item as often as it is listed (every item fires, as in the reference
 * consumers); none at or below its RESUME (nothing there is newly applied). The i-th read while
 * stopped belongs to the i-th of these: judging every read by the first stop failed a correct
 * consumer as soon as it had two.
 */
function stopsOf(f: IncarnationFacts): FaultStep[] {
  const parsed = f.fault ? parseFaultPlan(f.fault) : undefined;
  const resume = f.resumes[0] ?? -1;
  const stops = parsed?.ok ? parsed.steps.filter((s) => s.action === 'stop' && s.seq > resume) : [];
  return stops.sort((a, b) => a.seq - b.seq || (a.point === b.point ? 0 : a.point === 'apply' ? -1 : 1));
}

/** What a read while stopped at `stop` saw that it must not, in words; undefined when it saw the right state. */
function stoppedReadProblem(stop: FaultStep, store: StoreSnapshot): string | undefined {
  const last = store.checkpoint[0]?.last;
  const row = store.ledger.some(([seq]) => seq === stop.seq);
  const want = stop.point === 'apply' ? stop.seq - 1 : stop.seq;
  if (last === want && row === (stop.point === 'ack')) return undefined;
  return `last ${last} and ${row ? `a ledger row for seq ${stop.seq}` : `no row for seq ${stop.seq}`}`;
}

const COMMITTED_STATE = "a committed state holds seqs 0..last exactly once, with total equal to their deltas' sum";

/** What a broken invariant of a committed state says about the consumer's code, where it says one thing. */
const CONSISTENCY_CAUSES: Partial<Record<Inconsistency['kind'], { code: string; words: string }>> = {
  beyond: {
    code: 'row-beyond-cursor',
    words:
      "the event's row was committed without its cursor — an event's ledger row, its total and last change in one BEGIN IMMEDIATE transaction, committed together (CONTRACT.md §4)",
  },
  holes: {
    code: 'gap-skipped',
    words:
      'the cursor moved past an event that was never stored — an EVENT with s > last + 1 is a gap: apply nothing, close and exit non-zero (CONTRACT.md §4)',
  },
};

interface Inconsistency {
  kind: 'rows' | 'total' | 'beyond' | 'holes';
  text: string;
  seqs?: number[];
}

/** The invariants any committed state must satisfy, whatever the script: for mid-run reads. */
function consistencyProblems(store: StoreSnapshot): Inconsistency[] {
  if (!store.exists || store.error) return [];
  if (store.checkpoint.length !== 1) return [{ kind: 'rows', text: `${store.checkpoint.length} checkpoint rows` }];
  const { last, total } = store.checkpoint[0]!;
  const sum = store.ledger.reduce((acc, [, d]) => acc + d, 0);
  const problems: Inconsistency[] = [];
  if (total !== sum) problems.push({ kind: 'total', text: `total ${total} while the ledger's deltas sum to ${sum}` });
  const beyond = store.ledger.filter(([s]) => s > last).map(([s]) => s);
  if (beyond.length) problems.push({ kind: 'beyond', text: `${listSeqs(beyond)} in the ledger beyond the cursor (last ${last})`, seqs: beyond });
  const held = new Set(store.ledger.map(([s]) => s));
  const holes = [];
  for (let s = 0; s <= last && holes.length < 9; s++) if (!held.has(s)) holes.push(s);
  if (holes.length) problems.push({ kind: 'holes', text: `${listSeqs(holes)} missing below the cursor (last ${last})`, seqs: holes });
  return problems;
}

/** A read's broken invariants, each named by its cause where it has one (after a reset checkpoint, every row is "beyond the cursor": the reset is the one cause). */
function inconsistencies(moment: string, store: StoreSnapshot, at: { process: ProcessRef; t: number }, reset: boolean): Finding[] {
  return consistencyProblems(store).map((p) => {
    const cause = reset ? undefined : CONSISTENCY_CAUSES[p.kind];
    return {
      code: cause?.code ?? 'inconsistent-store',
      text: `${moment}, an independent read found ${p.text}${cause ? `: ${cause.words}` : ` — ${COMMITTED_STATE}`}`,
      subject: { ...at, ...(p.seqs ? { seqs: p.seqs.slice(0, SUBJECT_MAX) } : {}) },
    };
  });
}

/**
 * The checkpoint went back while the process ran: it started from a file whose cursor was
 * `durable`, and left one with a lower cursor. A correct consumer never lowers `last` (this lab
 * never deletes), so the row was written over — typically by opening the store as if it were new.
 */
function checkpointReset(incarnation: number, durable: number | undefined, store: StoreSnapshot): Omit<Finding, 'subject'> | undefined {
  if (durable === undefined || durable < 0 || !store.exists || store.error || store.checkpoint.length !== 1) return undefined;
  const { last, total } = store.checkpoint[0]!;
  if (last >= durable) return undefined;
  const kept = store.ledger.filter(([s]) => s <= durable).map(([s]) => s);
  return {
    code: 'checkpoint-reset',
    text:
      `the checkpoint row was reset on opening: incarnation ${incarnation} started from a file whose cursor was last ${durable}, and when it ended the checkpoint said last ${last}, total ${total}` +
      `${kept.length ? ` while the ledger still held ${listSeqs(kept)}` : ''} — opening creates the tables and the row (1, -1, 0) only when they are absent (CREATE TABLE IF NOT EXISTS, INSERT OR IGNORE); never reset an existing row (CONTRACT.md §4)`,
  };
}

export function storeProblems(name: string, store: StoreSnapshot, events: LedgerPlan['events'], expectedLast: number): Finding[] {
  if (!store.exists) return [{ code: 'no-store', text: `${name}: no SQLite file was created` }];
  if (store.error) return [{ code: 'unreadable-store', text: `${name}: the file cannot be read as a ledger store (${store.error})` }];
  if (store.checkpoint.length !== 1 || store.checkpoint[0]!.id !== 1)
    return [{ code: 'checkpoint-rows', text: `${name}: checkpoint has ${store.checkpoint.length} rows, expected exactly one row with id 1` }];
  const problems: Finding[] = [];
  const { last, total } = store.checkpoint[0]!;
  // One pass over the ledger, arrays indexed by seq (the script is dense): a million-row store
  // is judged in tens of milliseconds, where maps of it took seconds.
  const deltaOf = scriptDeltaOf(events);
  const held = new Uint8Array(events.length);
  let ledgerSum = 0;
  const beyond: number[] = [];
  const wrong: [number, number][] = [];
  const foreign: number[] = [];
  for (const [s, d] of store.ledger) {
    ledgerSum += d;
    if (s > last) beyond.push(s);
    const want = deltaOf(s);
    if (want === undefined) foreign.push(s);
    else {
      held[s] = 1;
      if (want !== d) wrong.push([s, d]);
    }
  }
  const notHeldUpTo = (upTo: number): number[] => {
    const seqs: number[] = [];
    for (let seq = 0; seq <= upTo && seq < events.length; seq++) if (!held[seq]) seqs.push(seq);
    return seqs;
  };
  let expectedTotal = 0;
  for (let seq = 0; seq <= expectedLast && seq < events.length; seq++) expectedTotal += events[seq]!.delta;

  if (total !== ledgerSum) problems.push(totalNotLedger(store, total, ledgerSum));
  const missing = notHeldUpTo(last);
  if (missing.length)
    problems.push({
      code: 'missing-below-cursor',
      text: `${name}: ${listSeqs(missing)} missing from the ledger although the cursor says last ${last}`,
      subject: { seqs: missing.slice(0, SUBJECT_MAX) },
    });
  if (beyond.length)
    problems.push({
      code: 'beyond-cursor',
      text: `${name}: ledger holds ${listSeqs(beyond)} beyond the cursor (last ${last})`,
      subject: { seqs: beyond.slice(0, SUBJECT_MAX) },
    });
  for (const [s, d] of wrong.slice(0, 5))
    problems.push({ code: 'wrong-delta', text: `${name}: seq ${s} recorded with delta ${d}, but the script says ${deltaOf(s)}`, subject: { seqs: [s] } });
  if (foreign.length)
    problems.push({
      code: 'foreign-seq',
      text: `${name}: ledger holds ${listSeqs(foreign)}, which the script never had`,
      subject: { seqs: foreign.slice(0, SUBJECT_MAX) },
    });
  if (last !== expectedLast) {
    const notApplied = notHeldUpTo(expectedLast);
    problems.push({
      code: 'wrong-cursor',
      text: `${name}: cursor is last ${last}, expected ${expectedLast}${notApplied.length ? ` (${listSeqs(notApplied)} never applied)` : ''}`,
      subject: { seqs: notApplied.slice(0, SUBJECT_MAX) },
    });
  }
  if (total !== expectedTotal)
    problems.push({ code: 'wrong-total', text: `${name}: total ${total}, expected ${expectedTotal} (sum of the script's deltas for seqs 0..${expectedLast})` });
  return problems;
}

/** The total is not the ledger's sum: a delta applied twice when one explains the difference, else the two were not updated together. */
function totalNotLedger(store: StoreSnapshot, total: number, ledgerSum: number): Finding {
  const diff = total - ledgerSum;
  const twice = store.ledger.filter(([, d]) => d === diff).map(([s]) => s);
  if (twice.length > 0 && twice.length <= 3)
    return {
      code: 'applied-twice',
      text: `${twice.map((s) => `seq ${s}`).join(' or ')} applied twice: total ${total}, expected ${ledgerSum} from the ledger (delta ${diff} added once more than recorded) — an EVENT whose seq the ledger already holds is a duplicate: change nothing, and ACK it (CONTRACT.md §4)`,
      subject: { seqs: twice },
    };
  return {
    code: 'total-not-ledger',
    text: `total ${total} does not match the ledger, whose deltas sum to ${ledgerSum} (difference ${diff}): total and ledger were not updated together`,
  };
}

/** "seq 7", "seqs 3, 4, 9" or "seqs 3, 4, 5, 6, 7, … 99 (97 seqs)": the checker's own list form, which kill reasons match. */
function listSeqs(seqs: number[]): string {
  if (seqs.length === 1) return `seq ${seqs[0]}`;
  if (seqs.length <= 8) return `seqs ${seqs.join(', ')}`;
  return `seqs ${seqs.slice(0, 5).join(', ')}, … ${seqs[seqs.length - 1]} (${seqs.length} seqs)`;
}
