// The ledger-lab checker. It reads only what the harness itself saw (the journal entries it wrote:
// what the publisher saw, what it read between processes) and the SQLite files (through
// independent read-only connections), so it runs without any process. Expected state comes from
// the event script itself, not from any consumer's code; the always-connected control consumer
// must agree with it too. It returns findings — a code, a subject, the words — and the tables
// every report draws.

import type { JournalEntry } from '../../../record/journal.js';
import { consumerRefusal, STORE_REFUSED, withRefusedStore } from '../../../judge/refused-store.js';
import { describeRefusal, refusalRule, type StoreRefusal } from '../../../sandbox/store-file.js';
import type { Scenario } from '../../../scenario/types.js';
import { type Finding, statusOf, type Verdict } from '../../../findings/verdict.js';
import { failHeadline, rankFindings } from '../../../findings/priority.js';
import { LEDGER_PRIORITIES } from '../priorities.js';
import { compareAcks } from './acks.js';
import { ledgerCoverage } from './coverage.js';
import { smallestDiff } from './diff.js';
import { conflictProblems, connectionsOf, exitFaultAckProblems, unacknowledgedProblems, whyNoAck } from './duties.js';
import { describeBadEnvironment, environmentDiff, environmentProblems } from './environment.js';
import { midRunProblems, storeProblems } from './invariants.js';
import { malformedProblems } from './malformed.js';
import type { LedgerPlan } from '../scenario/load.js';
import { type Expected, expectedAfter, type StoreState, storeState } from './state.js';
import type { StoreSnapshot } from './store-reader.js';
import { incarnationsTable, stateTable } from '../report/tables.js';
import { type IncarnationFacts, incarnationFacts } from './incarnations.js';

type Plan = Scenario<LedgerPlan>;

const fmtT = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;
const who = (n: number) => ({ role: 'consumer' as const, incarnation: n });

/** `read(role, db)` reads a store through an independent connection (and journals the read). */
export function checkLedgerRun(journal: readonly JournalEntry[], plan: Plan, read: (role: 'consumer' | 'control', db: string) => StoreSnapshot): Verdict {
  const streams = new Map<string, { stream: string; db: string }>();
  for (const e of journal) if (e.type === 'stream') streams.set(e.role, { stream: e.stream, db: e.db });
  const consumerStream = streams.get('consumer');
  const controlStream = streams.get('control');
  if (!consumerStream || !controlStream) throw new Error('the journal does not name the consumer and control streams');

  // The consumer's expected state is the script up to `finalLast` (a scenario may end early on
  // purpose, e.g. at a RESYNC); the control always gets the whole script.
  const events = plan.lab.events;
  // A bad environment: the consumer must exit 64 before doing anything, so it is expected to leave nothing.
  const bad = plan.lab.consumer.badEnvironment;
  const finalLast = bad ? -1 : expectedFinalLast(journal, consumerStream.stream, plan.lab.expect.finalLast, events.length - 1);
  const expected = expectedAfter(events, finalLast);
  const controlExpected = expectedAfter(events, events.length - 1);
  const consumerStore = read('consumer', consumerStream.db);
  const controlStore = read('control', controlStream.db);
  const incarnations = incarnationFacts(journal, plan, consumerStream.stream);
  // Incarnations whose exact ACKs the scenario lists are judged by that list, not again by the duties.
  const listed = new Set((plan.lab.expect.transcript ?? []).filter((w) => w.acks !== undefined).map((w) => w.incarnation));
  const connections = connectionsOf(journal, consumerStream.stream, events);

  // Most telling first: what the consumer did with a line that broke the grammar (the scenario's
  // point, when it sends one), then a broken invariant seen mid-run, usually the root cause of the rest.
  const malformed = malformedProblems(journal, consumerStream.stream, events, (n) => incarnations[n - 1]);
  const found = bad
    ? environmentProblems(journal, consumerStream.stream, bad, incarnations, consumerStore, plan.deadlineMs)
    : [
        ...malformed,
        ...midRunProblems(journal, incarnations),
        ...transcriptProblems(plan, incarnations, new Set(malformed.map((f) => f.subject?.process?.incarnation))),
        ...exitFaultAckProblems(incarnations, listed),
        ...conflictProblems(connections),
        ...unacknowledgedProblems(connections, listed),
        ...exitProblems(plan, incarnations),
        ...storeProblems('consumer', consumerStore, events, finalLast),
      ];
  const harnessErrors: Finding[] = [
    ...journal.flatMap((e) => (e.type === 'harness-error' ? [{ code: 'harness-error', text: `harness: ${e.message}` }] : [])),
    ...storeProblems('control consumer', controlStore, events, events.length - 1).map((f) => ({ ...f, code: `control-${f.code}` })),
  ];
  const consumer = storeState(consumerStore, events, finalLast, 'final');
  const control = storeState(controlStore, events, events.length - 1, 'final');
  if (!bad && found.length > 0 && harnessErrors.length === 0 && (consumer.last !== control.last || consumer.total !== control.total)) {
    found.push({
      code: 'differs-from-control',
      text:
        `the always-connected control consumer ended with last ${control.last}, total ${control.total}; ` +
        `the consumer under test with last ${consumer.last}, total ${consumer.total}`,
    });
  }
  // The cause first: the lab's table orders the findings, and the headline is the first.
  const findings = rankFindings(found, LEDGER_PRIORITIES);
  const status = statusOf(findings, harnessErrors);
  const verdict: Verdict = {
    status,
    headline:
      status !== 'pass'
        ? failHeadline({ findings, harnessErrors })
        : bad
          ? `the consumer exited 64 when ${describeBadEnvironment(bad)}, without connecting or writing its store`
          : passHeadline(consumer, expected, controlExpected),
    findings,
    harnessErrors,
    diff:
      status === 'pass'
        ? []
        : bad
          ? environmentDiff(findings, incarnations)
          : smallestDiff({ plan, incarnations, consumer, control, expected, controlExpected }),
    state: stateTable(expected, controlExpected, consumer, control, Boolean(bad)),
    tables: [incarnationsTable(incarnations)],
    coverage: ledgerCoverage(journal, plan, consumerStream.stream, incarnations),
  };
  // A store the harness refused to read decides alone: nothing else can be said of it.
  const refused = consumerRefusal(journal, consumerStore);
  return refused ? withRefusedStore(verdict, refusedStoreFinding(refused)) : verdict;
}

/** "consumer.db is a symbolic link (to ../../control.db): the harness reads only a regular file …". */
export function refusedStoreFinding(refusal: StoreRefusal): Finding {
  return { code: STORE_REFUSED, text: `${describeRefusal(refusal)}: ${refusalRule(refusal.kind)} (CONTRACT.md §4)` };
}

function passHeadline(consumer: StoreState, expected: Expected, controlExpected: Expected): string {
  const ended = `the consumer ended with last ${consumer.last}, total ${consumer.total}`;
  if (expected.last === controlExpected.last) return `${ended}: as the script says, and as the control consumer`;
  return `${ended}: where the scenario expects it to stop, while the always-connected control consumer read the whole script (last ${controlExpected.last})`;
}

function exitProblems(plan: Plan, incarnations: IncarnationFacts[]): Finding[] {
  const problems: Finding[] = [];
  for (const f of incarnations) {
    const name = `incarnation ${f.incarnation}`;
    const process = who(f.incarnation);
    if (!f.exit) {
      problems.push({ code: 'never-ended', text: `${name} was never started or never ended (the run was cut short)`, subject: { process } });
      continue;
    }
    if (f.exit.killedBy === 'deadline') {
      problems.push({
        code: 'deadline',
        text:
          `${name} did not end on its own: it was killed at the deadline (${plan.deadlineMs} ms) — ` +
          (plan.timeoutMs < plan.deadlineMs
            ? `a consumer must give up after CHAOSLAB_TIMEOUT_MS (${plan.timeoutMs} ms) per network wait`
            : `nothing justified waiting that long (CHAOSLAB_TIMEOUT_MS is ${plan.timeoutMs} ms here on purpose, so only the consumer's own check could end the wait)`),
        subject: { process, t: f.exit.t },
      });
      continue;
    }
    const how = f.exit.signal ? `was killed by ${f.exit.signal}` : `exited with status ${f.exit.code}`;
    // Restarts beyond the listed incarnations may end either way: the final state judges them.
    const expect = plan.lab.consumer.incarnations[f.incarnation - 1]?.expectExit ?? 'any';
    if (expect === 'zero' && f.exit.code !== 0)
      problems.push({
        code: 'exit-nonzero',
        text: `${name} ${how}, expected status 0 (the stream ended cleanly and everything received was handled)`,
        subject: { process, t: f.exit.t },
      });
    if (expect === 'nonzero' && f.exit.code === 0) {
      // A raise hook that fired and a status 0: the error was caught and the session carried on.
      const raised = f.fault !== undefined && /(^|,)raise@/.test(f.fault);
      problems.push({
        code: raised ? 'error-swallowed' : 'exit-zero',
        text: `${name} exited with status 0, expected a non-zero status${f.fault ? ` (fault ${f.fault} should have ended it)` : ''}${
          raised ? ': the raised error was swallowed — an error must roll back and end the session with a non-zero exit (CONTRACT.md §6)' : ''
        }`,
        subject: { process, t: f.exit.t },
      });
    }
  }
  return problems;
}

/** `closeJudged`: incarnations whose hang-up a malformed-line finding already judged (said once). */
function transcriptProblems(plan: Plan, incarnations: IncarnationFacts[], closeJudged: ReadonlySet<number | undefined>): Finding[] {
  const problems: Finding[] = [];
  for (const want of plan.lab.expect.transcript ?? []) {
    const f = incarnations[want.incarnation - 1];
    const name = `incarnation ${want.incarnation}`;
    const process = who(want.incarnation);
    if (!f) {
      problems.push({ code: 'never-ran', text: `${name} never ran (the stream completed or the restarts ran out before it)`, subject: { process } });
      continue;
    }
    const firstClose = f.closes[0];
    // A reset comes from the consumer's side: the contract allows hanging up at once with an RST.
    const closer = firstClose?.by === 'reset' ? 'consumer' : firstClose?.by;
    if (want.closedBy && firstClose && closer !== want.closedBy && !closeJudged.has(want.incarnation))
      problems.push({
        code: 'wrong-closer',
        text: `${name}'s connection was closed by the ${firstClose.by} (${firstClose.reason}), but the ${want.closedBy} must close it: ${want.closedBy === 'consumer' ? 'a consumer must hang up at once, not wait for the publisher' : 'the consumer hung up early'}`,
        subject: { process },
      });
    if (f.resumes.length === 0) {
      problems.push({ code: 'no-resume', text: `${name} never sent RESUME to the publisher (expected RESUME ${want.resume})`, subject: { process } });
      continue;
    }
    if (f.resumes[0] !== want.resume)
      problems.push({
        code: 'wrong-resume',
        text: `${name} sent RESUME ${f.resumes[0]}, expected RESUME ${want.resume}`,
        subject: { process, seqs: [f.resumes[0]!] },
      });
    if (want.acks === undefined) continue;
    const got = f.acks.map((a) => a.seq);
    if (got.join() === want.acks.join()) continue;
    const { unexpected, missing: left } = compareAcks(f.acks, want.acks);
    // One finding per seq: the same ACK sent twice is one fact, said with both times.
    const bySeq = new Map<number, number[]>();
    for (const a of unexpected) bySeq.set(a.seq, [...(bySeq.get(a.seq) ?? []), a.t]);
    for (const [seq, times] of bySeq)
      problems.push({
        code: whyNoAck(f.fault, seq) ? 'ack-before-commit' : 'unexpected-ack',
        text: `${name} sent ACK ${seq} at ${times.map(fmtT).join(' and again at ')}, which it must not send${whyNoAck(f.fault, seq)}`,
        subject: { process, seqs: [seq], t: times[0]! },
      });
    // `left` holds the expected ACKs that never came (a multiset: a duplicate's second ACK counts).
    for (const seq of left) {
      const sentOnce = got.includes(seq);
      // A seq acknowledged earlier is not redelivered, so its later ACK is missing as a consequence.
      const earlier = incarnations.slice(0, want.incarnation - 1).find((o) => o.acks.some((a) => a.seq === seq));
      problems.push(
        sentOnce
          ? {
              code: 'duplicate-not-acked',
              text: `${name} acknowledged seq ${seq} only once, but it received EVENT ${seq} twice: a duplicate must be acknowledged too, or the publisher keeps retrying (CONTRACT.md §4)`,
              subject: { process, seqs: [seq] },
            }
          : {
              code: 'missing-ack',
              text: `${name} never sent ACK ${seq}${earlier ? ` (incarnation ${earlier.incarnation} had already acknowledged it, so it was not redelivered)` : ''}`,
              subject: { process, seqs: [seq] },
            },
      );
    }
    if (!unexpected.length && !left.length)
      problems.push({ code: 'ack-order', text: `${name} sent ACKs in the order ${got.join(', ')}, expected ${want.acks.join(', ')}`, subject: { process } });
  }
  return problems;
}

/**
 * The consumer's expected final cursor: the scenario's `final_last`; for `resync`, the cursor the
 * publisher's first RESYNC answered (a consumer whose log moved on must stop there, exiting
 * non-zero, never paper over it) — unless that cursor was behind an ACK the consumer had already
 * sent, whose event the publisher may rightly have forgotten: then the consumer lost its place,
 * and the whole script stays expected. No RESYNC: the whole script.
 */
export function expectedFinalLast(journal: readonly JournalEntry[], stream: string, finalLast: number | 'resync' | undefined, scriptLast: number): number {
  if (finalLast !== 'resync') return finalLast ?? scriptLast;
  const resumeOf = new Map<number, number>();
  let acked = -1;
  for (const e of journal) {
    if (e.type !== 'wire' || e.stream !== stream) continue;
    if (e.kind === 'recv' && !e.error) {
      const resume = /^RESUME (-?\d+)\n$/.exec(e.line);
      if (resume && !resumeOf.has(e.conn)) resumeOf.set(e.conn, Number(resume[1]));
      const ack = /^ACK (\d+)\n$/.exec(e.line);
      if (ack) acked = Math.max(acked, Number(ack[1]));
    }
    if (e.kind === 'send' && e.line.startsWith('RESYNC ')) {
      const cursor = resumeOf.get(e.conn);
      return cursor !== undefined && cursor >= acked ? cursor : scriptLast;
    }
  }
  return scriptLast;
}
