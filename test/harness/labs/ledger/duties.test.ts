// The ledger's wire duties (harness/labs/ledger/check/duties.ts), judged from hand-made transcripts:
// every EVENT read is acknowledged, a Conflict is never acknowledged nor read past, an exit
// fault's event is never acknowledged, and `final_last: resync` expects the cursor the first
// RESYNC answered. None needs a per-incarnation ACK list.
import t from 'tap';
import type { JournalEntry } from '../../../../harness/record/journal.js';
import type { IncarnationFacts } from '../../../../harness/labs/ledger/check/incarnations.js';
import { expectedFinalLast } from '../../../../harness/labs/ledger/check/checker.js';
import { conflictProblems, connectionsOf, exitFaultAckProblems, unacknowledgedProblems } from '../../../../harness/labs/ledger/check/duties.js';

const SCRIPT = [7, 5, -3, 4, 2, -6].map((delta, seq) => ({ seq, delta }));
const NONE = new Set<number>();

/** One connection per item: `>` lines the publisher sent, `<` lines it received, in order. */
function transcript(conns: { incarnation: number; lines: string[] }[]): JournalEntry[] {
  let t = 0;
  const out: JournalEntry[] = [];
  conns.forEach((c, i) => {
    const conn = i + 1;
    out.push({ t: t++, type: 'wire', stream: 'consumer', conn, kind: 'open', owner: { role: 'consumer', incarnation: c.incarnation } });
    for (const l of c.lines) {
      const line = `${l.slice(2)}\n`;
      out.push({ t: (t += 10), type: 'wire', stream: 'consumer', conn, kind: l.startsWith('>') ? 'send' : 'recv', line });
    }
  });
  return out;
}

const conns = (lines: string[], incarnation = 1) => connectionsOf(transcript([{ incarnation, lines }]), 'consumer', SCRIPT);
const texts = (findings: { text: string }[]) => findings.map((f) => f.text);

t.test('every EVENT read is acknowledged, duplicates too; what was in flight proves nothing', async (t) => {
  const fine = ['< RESUME -1', '> EVENT 0 7', '> EVENT 1 5', '> EVENT 1 5', '< ACK 0', '< ACK 1', '< ACK 1', '> EVENT 2 -3', '< ACK 2'];
  t.same(unacknowledgedProblems(conns(fine), NONE), []);
  // The duplicate of 1 got one ACK, and the ACK of 2 (sent after both copies) proves both were read.
  const once = ['< RESUME -1', '> EVENT 0 7', '> EVENT 1 5', '> EVENT 1 5', '< ACK 0', '< ACK 1', '> EVENT 2 -3', '< ACK 2'];
  t.match(texts(unacknowledgedProblems(conns(once), NONE)), [
    /^incarnation 1 acknowledged seq 1 only once, but it received EVENT 1 twice on connection 1 \(it acknowledged the later EVENT 2 at/,
  ]);
  // No ACK of a later EVENT: the copy may still have been in flight when the connection ended.
  t.same(unacknowledgedProblems(conns(['< RESUME -1', '> EVENT 0 7', '> EVENT 0 7', '< ACK 0']), NONE), []);
  // A plain EVENT skipped while later ones were acknowledged.
  t.match(texts(unacknowledgedProblems(conns(['< RESUME -1', '> EVENT 0 7', '> EVENT 1 5', '< ACK 1']), NONE)), [
    /^incarnation 1 never acknowledged EVENT 0, although it read on past it on connection 1/,
  ]);
  // An incarnation whose ACKs the scenario lists is judged by that list.
  t.same(unacknowledgedProblems(conns(once), new Set([1])), []);
});

t.test('a Conflict is neither acknowledged nor read past; a consumer that hangs up is fine', async (t) => {
  const base = ['< RESUME -1', '> EVENT 0 7', '> EVENT 1 5', '> EVENT 2 -3', '< ACK 0', '< ACK 1', '< ACK 2'];
  t.same(conflictProblems(conns([...base, '> EVENT 1 99', '> EVENT 3 4'])), [], 'hung up at the conflicting line');
  t.match(texts(conflictProblems(conns([...base, '> EVENT 1 99', '< ACK 1', '> EVENT 3 4', '< ACK 3']))), [
    /^incarnation 1 acknowledged the conflicting line `EVENT 1 99` \(seq 1 again, with another delta than the script's 5\): same seq with another delta is a Conflict/,
  ]);
  t.match(texts(conflictProblems(conns([...base, '> EVENT 1 99', '> EVENT 3 4', '< ACK 3']))), [
    /^incarnation 1 read on past the conflicting line `EVENT 1 99` .*\(ACK 3\)/,
  ]);
  // A seq held through the RESUME cursor counts too; an unknown seq ahead of the consumer is a gap, not a conflict.
  t.match(texts(conflictProblems(conns(['< RESUME 2', '> EVENT 0 1', '< ACK 0']))), [/acknowledged the conflicting line `EVENT 0 1`/]);
  t.same(conflictProblems(conns(['< RESUME -1', '> EVENT 0 7', '< ACK 0', '> EVENT 4 9', '< ACK 4'])), []);
  // An ACK of an EVENT in flight before the conflict is no reading on.
  t.same(conflictProblems(conns(['< RESUME -1', '> EVENT 0 7', '> EVENT 1 5', '> EVENT 0 3', '< ACK 0', '< ACK 1'])), []);
});

const facts = (f: Partial<IncarnationFacts> & { incarnation: number }): IncarnationFacts => ({ resumes: [], acks: [], closes: [], ...f });
const store = (last: number) => ({ exists: true, checkpoint: [{ id: 1, last, total: 0 }], ledger: [] });
const exited86 = { t: 1, code: 86, signal: null, durationMs: 1 };

t.test('an exit or raise fault ends the process inside its event: that ACK must not have been sent', async (t) => {
  const acked = facts({
    incarnation: 1,
    fault: 'exit@ack:1',
    acks: [
      { seq: 0, t: 5 },
      { seq: 1, t: 9 },
    ],
    exit: exited86,
    fileAfter: store(1),
  });
  t.match(texts(exitFaultAckProblems([acked], NONE)), [
    /^incarnation 1 sent ACK 1 at 0\.009 s, which it must not send: the process was ended at fault point ack:1, after COMMIT and before the ACK is written, so this ACK was written before seq 1 was committed — write ACK s only after COMMIT returned \(CONTRACT\.md §4, ACK only after COMMIT\)$/,
  ]);
  t.same(exitFaultAckProblems([{ ...acked, acks: [{ seq: 0, t: 5 }] }], NONE), [], 'the reference: no ACK 1');
  t.same(exitFaultAckProblems([{ ...acked, exit: { ...exited86, code: 1 } }], NONE), [], 'not ended by the fault');
  t.same(exitFaultAckProblems([acked], new Set([1])), [], 'judged by the listed ACKs');
  // The step that fired is the first beyond the cursor the process started from, and its file must agree.
  const restart = facts({ incarnation: 2, fault: 'exit@ack:0,exit@apply:3', acks: [{ seq: 3, t: 4 }], exit: exited86, fileAfter: store(2) });
  t.match(texts(exitFaultAckProblems([facts({ incarnation: 1, fileAfter: store(1) }), restart], NONE)), [
    /sent ACK 3 .* fault point apply:3, inside the transaction/,
  ]);
  t.same(exitFaultAckProblems([facts({ incarnation: 1, fileAfter: store(1) }), { ...restart, fileAfter: store(3) }], NONE), [], 'a file that disagrees');
  // A raise at ack:k ends the process after COMMIT and before the ACK as surely (seed 1, run 18 drew raise@ack:1).
  const raised = { ...acked, fault: 'raise@ack:1', exit: { ...exited86, code: 1 } };
  t.match(texts(exitFaultAckProblems([raised], NONE)), [
    /^incarnation 1 sent ACK 1 at 0\.009 s, which it must not send: an error was raised at fault point ack:1, after COMMIT/,
  ]);
  t.same(exitFaultAckProblems([{ ...raised, acks: [{ seq: 0, t: 5 }] }], NONE), [], 'the reference: no ACK 1');
  t.same(exitFaultAckProblems([{ ...raised, fileAfter: store(0) }], NONE), [], 'an error before the step: its file says so');
  t.same(exitFaultAckProblems([{ ...raised, exit: exited86 }], NONE), [], 'status 86 is no raise');
  t.same(exitFaultAckProblems([{ ...raised, exit: { ...exited86, code: 0 } }], NONE), [], 'status 0: the error was swallowed, judged elsewhere');
});

t.test('final_last: resync — the cursor the first RESYNC answered, unless behind an ACK already sent', async (t) => {
  const resynced = transcript([
    { incarnation: 1, lines: ['< RESUME -1', '> EVENT 0 7', '< ACK 0', '> EVENT 1 5', '< ACK 1'] },
    { incarnation: 2, lines: ['< RESUME 1', '> RESYNC 4'] },
  ]);
  t.equal(expectedFinalLast(resynced, 'consumer', 'resync', 5), 1);
  t.equal(expectedFinalLast(resynced, 'consumer', 3, 5), 3, 'a number is the number');
  t.equal(expectedFinalLast(resynced, 'consumer', undefined, 5), 5, 'default: the whole script');
  t.equal(expectedFinalLast(transcript([{ incarnation: 1, lines: ['< RESUME -1', '> EVENT 0 7', '< ACK 0'] }]), 'consumer', 'resync', 5), 5, 'no RESYNC');
  const behind = transcript([
    { incarnation: 1, lines: ['< RESUME -1', '> EVENT 0 7', '< ACK 0', '> EVENT 1 5', '< ACK 1'] },
    { incarnation: 2, lines: ['< RESUME 0', '> RESYNC 2'] },
  ]);
  t.equal(expectedFinalLast(behind, 'consumer', 'resync', 5), 5, 'a consumer that resumed behind its own ACKs lost its place');
});
