// The ledger-lab checker. It reads only the journal (what the publisher saw, what the harness
// read between processes) and the SQLite files (through independent read-only connections),
// so it runs without any process. Expected state comes from the event script itself, not from
// any consumer's code; the always-connected control consumer must agree with it too.

import type { JournalEntry, Role } from '../../journal.js';
import type { Scenario } from '../../scenario/load.js';
import { type StoreSnapshot, readStore } from './store-reader.js';

export interface StoreSummary {
  last: number | null;
  total: number | null;
  rows: number;
}

export interface IncarnationFacts {
  incarnation: number;
  fault?: string;
  resumes: number[];
  acks: { seq: number; t: number }[];
  /** How each of its connections ended, as the publisher saw it. */
  closes: { conn: number; by: string; reason: string }[];
  exit?: { code: number | null; signal: string | null; killedBy?: string };
}

export interface Verdict {
  pass: boolean;
  /** Why the consumer under test failed, most telling first, in plain words. */
  reasons: string[];
  /** Problems of the harness itself (e.g. the control consumer disagrees with the script). */
  harnessErrors: string[];
  expected: { last: number; total: number; events: number };
  consumer: StoreSummary;
  control: StoreSummary;
  incarnations: IncarnationFacts[];
}

type Plan = Omit<Scenario, 'source'>;

const fmtT = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

export function checkLedgerRun(journal: JournalEntry[], read: (path: string) => StoreSnapshot = readStore): Verdict {
  const plan = journal.find((e) => e.type === 'scenario')?.plan as Plan | undefined;
  if (!plan) throw new Error('journal has no scenario entry');
  const streams = new Map<Role, { stream: string; db: string }>();
  for (const e of journal) if (e.type === 'stream') streams.set(e.role, { stream: e.stream, db: e.db });
  const consumerStream = streams.get('consumer');
  const controlStream = streams.get('control');
  if (!consumerStream || !controlStream) throw new Error('journal does not name the consumer and control streams');

  // The consumer's expected state is the script up to `finalLast` (a scenario may end early on
  // purpose, e.g. at a RESYNC); the control always gets the whole script.
  const finalLast = plan.expect.finalLast ?? plan.events.length - 1;
  const expectedEvents = plan.events.slice(0, finalLast + 1);
  const expected = {
    last: finalLast,
    total: expectedEvents.reduce((sum, e) => sum + e.delta, 0),
    events: expectedEvents.length,
  };
  const consumerStore = read(consumerStream.db);
  const controlStore = read(controlStream.db);
  const incarnations = incarnationFacts(journal, plan, consumerStream.stream);

  // Most telling first: a broken invariant seen mid-run is usually the root cause of the rest.
  const reasons = [
    ...midRunProblems(journal, incarnations),
    ...transcriptProblems(plan, incarnations),
    ...exitProblems(plan, incarnations),
    ...storeProblems('consumer', consumerStore, plan.events, finalLast),
  ];
  const harnessErrors = [
    ...journal.filter((e) => e.type === 'harness-error').map((e) => `harness: ${e.message}`),
    ...storeProblems('control consumer', controlStore, plan.events, plan.events.length - 1),
  ];
  const consumer = summarize(consumerStore);
  const control = summarize(controlStore);
  if (reasons.length > 0 && harnessErrors.length === 0 && (consumer.last !== control.last || consumer.total !== control.total)) {
    reasons.push(
      `the always-connected control consumer ended with last ${control.last}, total ${control.total}; ` +
        `the consumer under test with last ${consumer.last}, total ${consumer.total}`,
    );
  }
  return { pass: reasons.length === 0 && harnessErrors.length === 0, reasons, harnessErrors, expected, consumer, control, incarnations };
}

function summarize(store: StoreSnapshot): StoreSummary {
  const row = store.checkpoint.length === 1 ? store.checkpoint[0]! : undefined;
  return { last: row?.last ?? null, total: row?.total ?? null, rows: store.ledger.length };
}

/**
 * Per consumer incarnation: what its connections said to the publisher, and how it ended.
 * Incarnations come from the journal (a restart policy starts as many as it takes); the
 * scenario's list says which were expected at least.
 */
function incarnationFacts(journal: JournalEntry[], plan: Plan, stream: string): IncarnationFacts[] {
  const facts: IncarnationFacts[] = plan.consumer.incarnations.map((inc, i) => ({
    incarnation: i + 1,
    ...(inc.fault === undefined ? {} : { fault: inc.fault }),
    resumes: [],
    acks: [],
    closes: [],
  }));
  for (const e of journal) {
    if (e.type === 'process-start' && e.role === 'consumer' && !facts[e.incarnation - 1])
      facts[e.incarnation - 1] = { incarnation: e.incarnation, resumes: [], acks: [], closes: [] };
  }
  const connOwner = new Map<number, IncarnationFacts>();
  for (const e of journal) {
    if (e.type === 'process-exit' && e.role === 'consumer') {
      const f = facts[e.incarnation - 1];
      if (f) f.exit = { code: e.code, signal: e.signal, ...(e.killedBy ? { killedBy: e.killedBy } : {}) };
    }
    if (e.type !== 'wire' || e.stream !== stream) continue;
    if (e.kind === 'open') {
      const n = Number(/^incarnation (\d+)$/.exec(e.tag ?? '')?.[1]);
      const f = facts[n - 1];
      if (f) connOwner.set(e.conn, f);
      continue;
    }
    const owner = connOwner.get(e.conn);
    if (owner && e.kind === 'close') owner.closes.push({ conn: e.conn, by: e.by, reason: e.reason });
    if (!owner || e.kind !== 'recv' || e.error) continue;
    const resume = /^RESUME (-?\d+)\n$/.exec(e.line);
    if (resume) owner.resumes.push(Number(resume[1]));
    const ack = /^ACK (\d+)\n$/.exec(e.line);
    if (ack) owner.acks.push({ seq: Number(ack[1]), t: e.t });
  }
  return facts;
}

function exitProblems(plan: Plan, incarnations: IncarnationFacts[]): string[] {
  const problems: string[] = [];
  for (const f of incarnations) {
    const who = `incarnation ${f.incarnation}`;
    if (!f.exit) {
      problems.push(`${who} was never started or never ended (the run was cut short)`);
      continue;
    }
    if (f.exit.killedBy === 'deadline') {
      problems.push(
        `${who} did not end on its own: it was killed at the deadline (${plan.deadlineMs} ms) — ` +
          (plan.timeoutMs < plan.deadlineMs
            ? `a consumer must give up after CHAOSLAB_TIMEOUT_MS (${plan.timeoutMs} ms) per network wait`
            : `nothing justified waiting that long (CHAOSLAB_TIMEOUT_MS is ${plan.timeoutMs} ms here on purpose, so only the consumer's own check could end the wait)`),
      );
      continue;
    }
    const how = f.exit.signal ? `was killed by ${f.exit.signal}` : `exited with status ${f.exit.code}`;
    // Restarts beyond the listed incarnations may end either way: the final state judges them.
    const expect = plan.consumer.incarnations[f.incarnation - 1]?.expectExit ?? 'any';
    if (expect === 'zero' && f.exit.code !== 0)
      problems.push(`${who} ${how}, expected status 0 (the stream ended cleanly and everything received was handled)`);
    if (expect === 'nonzero' && f.exit.code === 0)
      problems.push(`${who} exited with status 0, expected a non-zero status${f.fault ? ` (fault ${f.fault} should have ended it)` : ''}`);
  }
  return problems;
}

function transcriptProblems(plan: Plan, incarnations: IncarnationFacts[]): string[] {
  const problems: string[] = [];
  for (const want of plan.expect.transcript ?? []) {
    const f = incarnations[want.incarnation - 1];
    const who = `incarnation ${want.incarnation}`;
    if (!f) {
      problems.push(`${who} never ran (the stream completed or the restarts ran out before it)`);
      continue;
    }
    const firstClose = f.closes[0];
    // A reset comes from the consumer's side: the contract allows hanging up at once with an RST.
    const closer = firstClose?.by === 'reset' ? 'consumer' : firstClose?.by;
    if (want.closedBy && firstClose && closer !== want.closedBy)
      problems.push(
        `${who}'s connection was closed by the ${firstClose.by} (${firstClose.reason}), but the ${want.closedBy} must close it: ${want.closedBy === 'consumer' ? 'a consumer must hang up at once, not wait for the publisher' : 'the consumer hung up early'}`,
      );
    if (f.resumes.length === 0) {
      problems.push(`${who} never sent RESUME to the publisher (expected RESUME ${want.resume})`);
      continue;
    }
    if (f.resumes[0] !== want.resume) problems.push(`${who} sent RESUME ${f.resumes[0]}, expected RESUME ${want.resume}`);
    if (want.acks === undefined) continue;
    const got = f.acks.map((a) => a.seq);
    if (got.join() === want.acks.join()) continue;
    const { unexpected, missing: left } = compareAcks(f.acks, want.acks);
    for (const a of unexpected) problems.push(`${who} sent ACK ${a.seq} at ${fmtT(a.t)}, which it must not send${whyNoAck(f.fault, a.seq)}`);
    // `left` now holds the expected ACKs that never came (a multiset: a duplicate's second ACK counts).
    for (const seq of left) {
      const sentOnce = got.includes(seq);
      // A seq acknowledged earlier is not redelivered, so its later ACK is missing as a consequence.
      const earlier = incarnations.slice(0, want.incarnation - 1).find((o) => o.acks.some((a) => a.seq === seq));
      problems.push(
        sentOnce
          ? `${who} acknowledged seq ${seq} only once, but it received EVENT ${seq} twice: a duplicate must be acknowledged too, or the publisher keeps retrying`
          : `${who} never sent ACK ${seq}${earlier ? ` (incarnation ${earlier.incarnation} had already acknowledged it, so it was not redelivered)` : ''}`,
      );
    }
    if (!unexpected.length && !left.length) problems.push(`${who} sent ACKs in the order ${got.join(', ')}, expected ${want.acks.join(', ')}`);
  }
  return problems;
}

/**
 * The ACKs a connection sent against the ones expected, as multisets: an extra ACK for a seq
 * that also had a legitimate one is unexpected, and a duplicate's missing second ACK is missing.
 */
export function compareAcks<A extends { seq: number }>(got: A[], want: number[]): { unexpected: A[]; missing: number[] } {
  const owed = new Map<number, number>();
  for (const seq of want) owed.set(seq, (owed.get(seq) ?? 0) + 1);
  const unexpected = got.filter((a) => {
    const n = owed.get(a.seq) ?? 0;
    if (n > 0) owed.set(a.seq, n - 1);
    return n === 0;
  });
  return { unexpected, missing: [...owed].flatMap(([seq, n]) => Array<number>(n).fill(seq)) };
}

/** Explains, from the fault plan, why an ACK for `seq` proves an ordering bug. */
function whyNoAck(fault: string | undefined, seq: number): string {
  const hook = fault?.split(',').find((f) => f.endsWith(`:${seq}`) && /^(exit|raise)@/.test(f));
  if (!hook) return '';
  const [action, rest] = hook.split('@') as [string, string];
  const ended = action === 'exit' ? 'the process was ended' : 'an error was raised';
  return rest.startsWith('ack')
    ? `: ${ended} at fault point ack:${seq}, after COMMIT and before the ACK is written, so this ACK was written before seq ${seq} was committed`
    : `: ${ended} at fault point apply:${seq}, inside the transaction, so seq ${seq} was acknowledged before it was committed`;
}

/**
 * What the harness read between and during processes: every read must show a consistent
 * store (never a half-applied event); a process stopped inside the transaction of seq k must
 * show the state before k; and an ACK is a promise — what a process acknowledged must be in
 * its file when it ends.
 */
function midRunProblems(journal: JournalEntry[], incarnations: IncarnationFacts[]): string[] {
  const problems: string[] = [];
  const previousLast: (number | undefined)[] = [];
  for (const e of journal) {
    if (e.type !== 'store-read' || e.role !== 'consumer' || e.incarnation === undefined || e.when === 'final') continue;
    const f = incarnations[e.incarnation - 1];
    if (!f) continue;
    const moment = e.when === 'while-stopped' ? `while incarnation ${f.incarnation} was stopped` : `when incarnation ${f.incarnation} ended`;
    if (e.store.error) {
      problems.push(`${moment}, its file could not be read through an independent connection (${e.store.error})`);
      continue;
    }
    for (const p of consistencyProblems(e.store))
      problems.push(`${moment}, an independent read found ${p} — a committed state holds seqs 0..last exactly once, with total equal to their deltas' sum`);
    if (e.when === 'while-stopped') {
      const stop = /stop@apply:(\d+)/.exec(f.fault ?? '');
      const k = stop ? Number(stop[1]) : undefined;
      const last = e.store.checkpoint[0]?.last;
      if (k !== undefined && (last !== k - 1 || e.store.ledger.some(([seq]) => seq === k)))
        problems.push(
          `${moment} inside the transaction of seq ${k}, an independent read saw last ${last} and ${e.store.ledger.some(([seq]) => seq === k) ? `a ledger row for seq ${k}` : `no row for seq ${k}`}; it must see the state before seq ${k} (last ${k - 1}): uncommitted work was visible`,
        );
      continue;
    }
    const held = new Set(e.store.ledger.map(([seq]) => seq));
    const last = e.store.checkpoint[0]?.last ?? -1;
    for (const a of f.acks) {
      if (!held.has(a.seq) || last < a.seq)
        problems.push(
          `incarnation ${f.incarnation} acknowledged seq ${a.seq} at ${fmtT(a.t)}, but when it ended its file did not hold seq ${a.seq} (last ${last}): the ACK was a broken promise`,
        );
    }
    previousLast[e.incarnation] = last;
  }
  // The cursor a restarted process sends must be the durable one, read before it started.
  for (const f of incarnations) {
    const durable = previousLast[f.incarnation - 1];
    if (f.incarnation > 1 && durable !== undefined && f.resumes.length > 0 && f.resumes[0] !== durable)
      problems.push(`incarnation ${f.incarnation} sent RESUME ${f.resumes[0]}, but its file's durable cursor was ${durable} when it started`);
  }
  return problems;
}

/** The invariants any committed state must satisfy, whatever the script: for mid-run reads. */
function consistencyProblems(store: StoreSnapshot): string[] {
  if (!store.exists || store.error) return [];
  if (store.checkpoint.length !== 1) return [`${store.checkpoint.length} checkpoint rows`];
  const { last, total } = store.checkpoint[0]!;
  const sum = store.ledger.reduce((acc, [, d]) => acc + d, 0);
  const problems: string[] = [];
  if (total !== sum) problems.push(`total ${total} while the ledger's deltas sum to ${sum}`);
  const beyond = store.ledger.filter(([s]) => s > last).map(([s]) => s);
  if (beyond.length) problems.push(`${listSeqs(beyond)} in the ledger beyond the cursor (last ${last})`);
  const held = new Set(store.ledger.map(([s]) => s));
  const holes = [];
  for (let s = 0; s <= last && holes.length < 9; s++) if (!held.has(s)) holes.push(s);
  if (holes.length) problems.push(`${listSeqs(holes)} missing below the cursor (last ${last})`);
  return problems;
}

function storeProblems(who: string, store: StoreSnapshot, events: Plan['events'], expectedLast: number): string[] {
  if (!store.exists) return [`${who}: no SQLite file was created`];
  if (store.error) return [`${who}: the file cannot be read as a ledger store (${store.error})`];
  const problems: string[] = [];
  if (store.checkpoint.length !== 1 || store.checkpoint[0]!.id !== 1)
    return [`${who}: checkpoint has ${store.checkpoint.length} rows, expected exactly one row with id 1`];
  const { last, total } = store.checkpoint[0]!;
  const script = new Map(events.map((e) => [e.seq, e.delta]));
  const ledger = new Map(store.ledger);
  const ledgerSum = store.ledger.reduce((sum, [, d]) => sum + d, 0);
  const expectedTotal = events.slice(0, expectedLast + 1).reduce((sum, e) => sum + e.delta, 0);

  if (total !== ledgerSum) {
    const diff = total - ledgerSum;
    const twice = store.ledger.filter(([, d]) => d === diff).map(([s]) => s);
    problems.push(
      twice.length > 0 && twice.length <= 3
        ? `${twice.map((s) => `seq ${s}`).join(' or ')} applied twice: total ${total}, expected ${ledgerSum} from the ledger (delta ${diff} added once more than recorded)`
        : `total ${total} does not match the ledger, whose deltas sum to ${ledgerSum} (difference ${diff}): total and ledger were not updated together`,
    );
  }
  const missing = events.filter((e) => e.seq <= last && !ledger.has(e.seq)).map((e) => e.seq);
  if (missing.length) problems.push(`${who}: ${listSeqs(missing)} missing from the ledger although the cursor says last ${last}`);
  const beyond = store.ledger.filter(([s]) => s > last).map(([s]) => s);
  if (beyond.length) problems.push(`${who}: ledger holds ${listSeqs(beyond)} beyond the cursor (last ${last})`);
  const wrong = store.ledger.filter(([s, d]) => script.has(s) && script.get(s) !== d);
  for (const [s, d] of wrong.slice(0, 5)) problems.push(`${who}: seq ${s} recorded with delta ${d}, but the script says ${script.get(s)}`);
  const foreign = store.ledger.filter(([s]) => !script.has(s)).map(([s]) => s);
  if (foreign.length) problems.push(`${who}: ledger holds ${listSeqs(foreign)}, which the script never had`);
  if (last !== expectedLast) {
    const notApplied = events.filter((e) => e.seq <= expectedLast && !ledger.has(e.seq)).map((e) => e.seq);
    problems.push(`${who}: cursor is last ${last}, expected ${expectedLast}${notApplied.length ? ` (${listSeqs(notApplied)} never applied)` : ''}`);
  }
  if (total !== expectedTotal) problems.push(`${who}: total ${total}, expected ${expectedTotal} (sum of the script's deltas for seqs 0..${expectedLast})`);
  return problems;
}

/** "seq 7", "seqs 3, 4, 9" or "seqs 3…99 (97 seqs)". */
function listSeqs(seqs: number[]): string {
  if (seqs.length === 1) return `seq ${seqs[0]}`;
  if (seqs.length <= 8) return `seqs ${seqs.join(', ')}`;
  return `seqs ${seqs.slice(0, 5).join(', ')}, … ${seqs[seqs.length - 1]} (${seqs.length} seqs)`;
}
