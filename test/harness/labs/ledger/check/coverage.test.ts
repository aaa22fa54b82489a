// Whether each fault of a ledger scenario took effect, judged from small hand-made journals: each
// rule once where it took effect and once where it did not, with the reason in its words.
import t from 'tap';
import { ledgerCoverage, misbehaviourKind } from '../../../../../harness/labs/ledger/check/coverage.js';
import { incarnationFacts } from '../../../../../harness/labs/ledger/check/incarnations.js';
import type { LedgerPlan } from '../../../../../harness/labs/ledger/scenario/load.js';
import type { Misbehaviour } from '../../../../../publisher/ledger/misbehaviour.js';
import type { JournalEntry } from '../../../../../harness/record/journal.js';
import type { FaultPlan, Scenario } from '../../../../../harness/scenario/types.js';

const SCRIPT = [7, 5, -3, 4, 2, -6, 8, 1].map((delta, seq) => ({ seq, delta }));

function planOf(
  lab: { misbehaviour?: Misbehaviour[]; moves?: { connection: number; to: number }[]; hooks?: string[]; bad?: LedgerPlan['consumer']['badEnvironment'] },
  faults: FaultPlan[] = [],
): Scenario<LedgerPlan> {
  return {
    file: 'x.yaml',
    source: '',
    name: 'x',
    description: 'x',
    protocol: 'ledger',
    timeoutMs: 2000,
    deadlineMs: 60000,
    timeScale: 1,
    faults,
    lab: {
      events: SCRIPT,
      eventSource: { kind: 'explicit' },
      publisher: {
        window: 16,
        retentionStart: 0,
        redeliverUnacked: false,
        ackDeadlineMs: 5000,
        forgetAcked: false,
        retentionMoves: lab.moves ?? [],
        misbehaviour: lab.misbehaviour ?? [],
      },
      consumer: {
        incarnations: (lab.hooks ?? ['']).map((fault) => ({ ...(fault ? { fault } : {}), expectExit: 'any' as const })),
        ...(lab.bad ? { badEnvironment: lab.bad } : {}),
      },
      expect: {},
    },
  };
}

/** A journal built line by line: a consumer process's connection, what went down it, how it ended. */
class Journal {
  readonly entries: JournalEntry[] = [
    { t: 0, type: 'stream', role: 'control', stream: 'control', host: '127.0.0.1', port: 1, db: 'control.db' },
    { t: 0, type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 2, db: 'consumer.db' },
  ];
  private t = 1;
  private add(e: Record<string, unknown>): this {
    this.entries.push({ t: this.t++, ...e } as JournalEntry);
    return this;
  }
  start(n: number, env: Record<string, string> = {}) {
    return this.add({ type: 'process-start', role: 'consumer', incarnation: n, pid: 100 + n, command: 'c', env });
  }
  /** Connection `conn` of process `n`, which sends RESUME `resume`. */
  connect(n: number, conn: number, resume: number) {
    this.add({ type: 'wire', stream: 'consumer', conn, kind: 'open', owner: { role: 'consumer', incarnation: n } });
    return this.add({ type: 'wire', stream: 'consumer', conn, kind: 'recv', line: `RESUME ${resume}\n` });
  }
  /** EVENT seq down `conn`, and its ACK back unless `acked` is false. */
  event(conn: number, seq: number, acked = true) {
    this.add({ type: 'wire', stream: 'consumer', conn, kind: 'send', line: `EVENT ${seq} ${SCRIPT[seq]!.delta}\n` });
    return acked ? this.add({ type: 'wire', stream: 'consumer', conn, kind: 'recv', line: `ACK ${seq}\n` }) : this;
  }
  send(conn: number, line: string, note?: string) {
    return this.add({ type: 'wire', stream: 'consumer', conn, kind: 'send', line, ...(note ? { note } : {}) });
  }
  note(conn: number, text: string) {
    return this.add({ type: 'wire', stream: 'consumer', conn, kind: 'note', text });
  }
  close(conn: number, by: 'consumer' | 'publisher' | 'reset', reason = 'closed') {
    return this.add({ type: 'wire', stream: 'consumer', conn, kind: 'close', by, reason });
  }
  stopped(n: number) {
    return this.add({ type: 'process-stopped', role: 'consumer', incarnation: n });
  }
  /** Process n exits; its file then holds `last`. */
  exit(n: number, code: number | null, last: number, signal: string | null = null) {
    this.add({
      type: 'process-exit',
      role: 'consumer',
      incarnation: n,
      code,
      signal,
      durationMs: 1,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
    });
    const store = { exists: true, checkpoint: [{ id: 1, last, total: 0 }], ledger: [] };
    return this.add({ type: 'store-read', role: 'consumer', incarnation: n, when: 'after-exit', db: 'consumer.db', store });
  }
  /** Process 1 reads seqs 0..upTo and exits 0 when the publisher closes. */
  static plain(upTo: number): Journal {
    const j = new Journal().start(1).connect(1, 1, -1);
    for (let seq = 0; seq <= upTo; seq++) j.event(1, seq);
    return j.close(1, 'publisher', 'all events acknowledged').exit(1, 0, upTo);
  }
}

const coverage = (plan: Scenario<LedgerPlan>, j: Journal) => ledgerCoverage(j.entries, plan, 'consumer', incarnationFacts(j.entries, plan, 'consumer'));

t.test("a misbehaviour's kind comes from what it sends", async (t) => {
  const kind = (action: Misbehaviour['action'], bytes?: string) => misbehaviourKind({ action, seq: 4, ...(bytes === undefined ? {} : { bytes }) }, SCRIPT);
  t.equal(kind('duplicate'), 'duplicate');
  t.equal(kind('skip'), 'gap');
  t.equal(kind('silence'), 'stall');
  t.equal(kind('close'), 'close');
  t.equal(kind('insert', 'EVENT 2 99\n'), 'conflict', 'an earlier seq with another delta');
  t.equal(kind('insert', 'EVENT 2 -3\n'), 'resend', 'an earlier seq with its own delta');
  t.equal(kind('insert', 'EVENT 6 8\n'), 'gap', 'a later seq: a jump');
  t.equal(kind('insert', 'RESYNC 3\n'), 'resync');
  t.equal(kind('insert', 'EVENT 3 +4\n'), 'malformed');
  t.equal(kind('insert', '\n'), 'malformed', 'an empty line');
  t.equal(kind('replace', 'A'.repeat(10240)), 'oversized', '64 bytes or more without LF');
  t.equal(kind('close', 'EVENT 3 4'), 'fragment', 'fewer without LF');
  t.equal(kind('silence', 'A'.repeat(10240)), 'oversized', 'the bytes before a silence decide');
});

t.test('a duplicate took effect when both copies went down the connection', async (t) => {
  const plan = planOf({ misbehaviour: [{ action: 'duplicate', seq: 3 }] });
  const met = new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).event(1, 2).event(1, 3).event(1, 3).event(1, 4);
  t.match(coverage(plan, met), [
    { fault: 'duplicate at EVENT 3 on connection 1', kind: 'duplicate', took: true, how: /^EVENT 3 reached process 1 on connection 1 twice, at/ },
  ]);
  const early = new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).event(1, 2).close(1, 'consumer').exit(1, 1, 2);
  t.match(coverage(plan, early), [
    {
      took: false,
      how: /^the duplicate of EVENT 3 reached no consumer: process 1's connection 1 ended at .* \(closed by the consumer\) after EVENT 2, before EVENT 3 was due$/,
    },
  ]);
  const elsewhere = planOf({ misbehaviour: [{ action: 'duplicate', seq: 3, connection: 2 }] });
  t.match(coverage(elsewhere, Journal.plain(7)), [{ took: false, how: /connection 2 never opened \(the consumer's stream had only 1 connection\)$/ }]);
});

t.test('a gap took effect when a later EVENT came without the skipped one', async (t) => {
  const plan = planOf({ misbehaviour: [{ action: 'skip', seq: 3 }] });
  const met = new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).event(1, 2).event(1, 4, false).close(1, 'consumer').exit(1, 1, 2);
  t.match(coverage(plan, met), [{ kind: 'gap', took: true, how: /^EVENT 3 was left out on connection 1: process 1 got EVENT 4 at .* without it$/ }]);
  const last = planOf({ misbehaviour: [{ action: 'skip', seq: 7 }] });
  const noHole = new Journal().start(1).connect(1, 1, -1);
  for (let seq = 0; seq < 7; seq++) noHole.event(1, seq);
  t.match(coverage(last, noHole.close(1, 'publisher', 'all events acknowledged').exit(1, 0, 6)), [
    { took: false, how: /EVENT 7 was left out on connection 1, but no EVENT followed it there, so process 1 met no hole/ },
  ]);
  const past = planOf({ misbehaviour: [{ action: 'skip', seq: 3, connection: 2 }] });
  const resumedPast = Journal.plain(4).start(2).connect(2, 2, 4).event(2, 5).event(2, 6);
  t.match(coverage(past, resumedPast), [{ took: false, how: /process 2's connection 2 resumed from 4, past EVENT 3$/ }]);
});

t.test('bytes of a misbehaviour took effect when the publisher sent them', async (t) => {
  const plan = planOf({ misbehaviour: [{ action: 'insert', seq: 4, bytes: 'EVENT 2 99\n' }] });
  const met = new Journal()
    .start(1)
    .connect(1, 1, -1)
    .event(1, 0)
    .event(1, 1)
    .event(1, 2)
    .event(1, 3)
    .send(1, 'EVENT 2 99\n', 'misbehaviour: insert at EVENT 4');
  t.match(coverage(plan, met), [{ kind: 'conflict', took: true, how: /^the conflicting line `EVENT 2 99` reached process 1 on connection 1 at/ }]);
  const resync = new Journal().start(1).connect(1, 1, -1).send(1, 'RESYNC 5\n').close(1, 'publisher', 'resync required').exit(1, 1, -1);
  t.match(coverage(plan, resync), [
    { took: false, how: /^the conflicting line `EVENT 2 99` reached no consumer: process 1's connection 1 was answered with RESYNC 5/ },
  ]);
  const empty = planOf({ misbehaviour: [{ action: 'insert', seq: 3, bytes: '\n' }] });
  const sent = new Journal().start(1).connect(1, 1, -1).send(1, '\n', 'misbehaviour: insert at EVENT 3');
  t.match(coverage(empty, sent), [{ kind: 'malformed', took: true, how: /^the malformed line \(an empty line\) reached process 1/ }]);
});

t.test('a silence took effect when the publisher fell silent on a connection it held; an early close when it closed there', async (t) => {
  const silence = planOf({ misbehaviour: [{ action: 'silence', seq: 3 }] });
  const met = new Journal()
    .start(1)
    .connect(1, 1, -1)
    .event(1, 0)
    .event(1, 1)
    .event(1, 2)
    .note(1, 'misbehaviour: silent from EVENT 3 on, connection kept open')
    .close(1, 'consumer');
  t.match(coverage(silence, met), [
    {
      kind: 'stall',
      took: true,
      how: /^the publisher fell silent at EVENT 3 on connection 1 at .*, with process 1 connected, until the consumer closed it at/,
    },
  ]);
  t.match(coverage(silence, new Journal().start(1).connect(1, 1, -1).event(1, 0).close(1, 'reset').exit(1, 1, 0)), [
    { took: false, how: /^the silence from EVENT 3 reached no consumer: .* \(reset by the consumer\) after EVENT 0/ },
  ]);
  const close = planOf({ misbehaviour: [{ action: 'close', seq: 2 }] });
  const closed = new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).close(1, 'publisher', 'misbehaviour: close at EVENT 2');
  t.match(coverage(close, closed), [{ kind: 'close', took: true, how: /^the publisher closed connection 1 of process 1 early, at EVENT 2/ }]);
  t.match(coverage(close, new Journal().start(1).connect(1, 1, -1).event(1, 0).close(1, 'consumer').exit(1, 1, 0)), [
    { took: false, how: /^the early close at EVENT 2 reached no consumer/ },
  ]);
});

t.test('a retention move took effect when the consumer resumed behind the new start', async (t) => {
  const plan = planOf({ moves: [{ connection: 2, to: 5 }] });
  const away = () => new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).event(1, 2).close(1, 'consumer').exit(1, 86, 2).start(2);
  const resync = away().note(2, 'retention moved to 5 (the consumer was away)').connect(2, 2, 2).send(2, 'RESYNC 5\n');
  t.match(coverage(plan, resync), [
    {
      fault: 'retention move to 5 at connection 2',
      kind: 'retention',
      took: true,
      how: /process 2 resumed from 2, behind it: the publisher answered RESYNC 5$/,
    },
  ]);
  const boundary = planOf({ moves: [{ connection: 2, to: 3 }] });
  const served = away().note(2, 'retention moved to 3 (the consumer was away)').connect(2, 2, 2).event(2, 3);
  t.match(coverage(boundary, served), [{ took: true, how: /the boundary cursor 2, which the log still serves$/ }]);
  const early = planOf({ moves: [{ connection: 2, to: 1 }] });
  const past = away().note(2, 'retention moved to 1 (the consumer was away)').connect(2, 2, 2).event(2, 3);
  t.match(coverage(early, past), [{ took: false, how: /asked nothing of the consumer: process 2 resumed from 2 there, past the log's new start$/ }]);
  t.match(coverage(plan, away().connect(2, 2, 2)), [{ took: false, how: /moved nothing: the log already started at 5 or later when connection 2 opened$/ }]);
  t.match(coverage(plan, Journal.plain(7)), [{ took: false, how: /reached no consumer: connection 2 never opened/ }]);
});

t.test('an exit or raise hook took effect when the process exited with its status at that event', async (t) => {
  const upTo = (n: number) => {
    const j = new Journal().start(1).connect(1, 1, -1);
    for (let seq = 0; seq < n; seq++) j.event(1, seq);
    return j;
  };
  const exit = planOf({ hooks: ['exit@apply:3'] });
  t.match(coverage(exit, upTo(3).event(1, 3, false).exit(1, 86, 2)), [
    { fault: 'hook exit@apply:3 in process 1', kind: 'hook', took: true, how: /^process 1 got EVENT 3 and exited with status 86 at its hook exit@apply:3/ },
  ]);
  t.match(coverage(exit, upTo(3).event(1, 3, false).exit(1, 0, 3)), [
    { took: false, how: /^process 1 got EVENT 3 but exited with status 0 \(.*\), not with the status 86 its hook exit@apply:3 calls for$/ },
  ]);
  // A window sends EVENT 3 early; a process that ended at seq 1 never applied it.
  const ended = new Journal().start(1).connect(1, 1, -1).event(1, 0).send(1, 'EVENT 1 5\n').send(1, 'EVENT 2 -3\n').send(1, 'EVENT 3 4\n').exit(1, 1, 0);
  t.match(coverage(exit, ended), [
    { took: false, how: /^the hook exit@apply:3 never fired: process 1 exited with status 1 \(.*\) having committed up to seq 0, before seq 3$/ },
  ]);
  const raise = planOf({ hooks: ['raise@ack:2'] });
  t.match(coverage(raise, upTo(2).event(1, 2, false).exit(1, 1, 2)), [{ took: true, how: /exited with status 1 at its hook raise@ack:2/ }]);
  t.match(coverage(raise, upTo(2).event(1, 2, false).exit(1, null, 2, 'SIGKILL')), [
    { took: false, how: /but was killed by SIGKILL \(.*\), not with the non-zero status its hook raise@ack:2 calls for$/ },
  ]);
});

t.test('hooks are met in the contract order: an ending hook leaves the later ones unfired, a stop counts its own stops', async (t) => {
  const plan = planOf({ hooks: ['exit@ack:4,stop@apply:2,stop@apply:6'] });
  const j = new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).stopped(1).event(1, 2).event(1, 3).event(1, 4, false).exit(1, 86, 4);
  t.match(coverage(plan, j), [
    { fault: 'hook stop@apply:2 in process 1', took: true, how: /^process 1 stopped itself at its hook stop@apply:2 \(its stop 1\)/ },
    { fault: 'hook exit@ack:4 in process 1', took: true },
    { fault: 'hook stop@apply:6 in process 1', took: false, how: /^the hook stop@apply:6 never fired: process 1 had already ended at its hook exit@ack:4$/ },
  ]);
  const unstopped = new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).event(1, 2).event(1, 3).event(1, 4, false).exit(1, 86, 4);
  t.match(coverage(plan, unstopped)[0], { took: false, how: /^process 1 got EVENT 2 but never stopped itself at its hook stop@apply:2$/ });
  // Process 2's hook at a seq it resumed past: nothing there is newly applied.
  const second = planOf({ hooks: ['', 'exit@apply:2'] });
  const resumed = Journal.plain(4).start(2).connect(2, 2, 4).close(2, 'publisher', 'all events acknowledged').exit(2, 0, 4);
  t.match(coverage(second, resumed), [
    { fault: 'hook exit@apply:2 in process 2', took: false, how: /process 2 resumed from 4, and a hook fires only for an event newly applied$/ },
  ]);
  t.match(coverage(second, Journal.plain(7)), [{ took: false, how: /^the hook exit@apply:2 never fired: process 2 never ran$/ }]);
});

t.test('a bad environment took effect when the consumer was started with it', async (t) => {
  const plan = planOf({ bad: { set: { CHAOSLAB_PORT: 'not-a-port' }, unset: ['CHAOSLAB_DB'] } });
  const bad = new Journal().start(1, { CHAOSLAB_PORT: 'not-a-port', CHAOSLAB_HOST: '127.0.0.1' }).exit(1, 64, -1);
  t.match(coverage(plan, bad), [
    {
      fault: 'bad environment (CHAOSLAB_PORT was "not-a-port" and CHAOSLAB_DB was unset)',
      kind: 'bad-environment',
      took: true,
      how: 'process 1 was started with the bad environment (CHAOSLAB_PORT was "not-a-port" and CHAOSLAB_DB was unset)',
    },
  ]);
  const good = new Journal().start(1, { CHAOSLAB_PORT: '5555', CHAOSLAB_DB: 'x.db' }).exit(1, 0, -1);
  t.match(coverage(plan, good), [{ took: false, how: /^the bad environment reached no consumer: process 1 was started without it$/ }]);
  t.match(coverage(plan, new Journal()), [{ took: false, how: /no consumer process was started$/ }]);
});

t.test("the shared faults' rows come first, worded with the lab's fault points", async (t) => {
  const kill: FaultPlan = { name: 'kill-1', effect: { kind: 'signal', signal: 'SIGKILL' }, start: { kind: 'point', point: 'before_event', value: 30 } };
  const plan = planOf({ misbehaviour: [{ action: 'duplicate', seq: 3 }] }, [kill]);
  const j = new Journal().start(1).connect(1, 1, -1).event(1, 0).event(1, 1).event(1, 2).event(1, 3).event(1, 3);
  t.match(coverage(plan, j), [
    { fault: 'kill-1', kind: 'kill', took: false, how: 'the kill fault never started: its trigger (before EVENT 30) never came' },
    { kind: 'duplicate', took: true },
  ]);
});
