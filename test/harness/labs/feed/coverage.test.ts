// The feed lab's coverage rows (harness/labs/feed/check/coverage.ts), each rule taken and not
// taken, from small journals built by hand: what the consumer under test met decides, never
// what the control met nor what the harness merely planned.
import { join } from 'node:path';
import t from 'tap';
import { encodePing, encodeReset, encodeRevoke, encodeSnapshot, encodeSubscribe } from '../../../../protocol/feed/encode.js';
import { encodeRealEvent } from '../../../../publisher/feed/outbox/events.js';
import { feedCoverage } from '../../../../harness/labs/feed/check/coverage.js';
import { factsOf } from '../../../../harness/labs/feed/check/facts.js';
import { simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import type { JournalEntry } from '../../../../harness/record/journal.js';
import { loadScenario, type Scenario } from '../../../../harness/catalogue/load.js';
import type { FaultPlan } from '../../../../harness/scenario/types.js';

const ROOT = join(import.meta.dirname, '../../../..');
const load = (name: string) => loadScenario(join(ROOT, 'scenarios', 'feed', `${name}.yaml`)) as Scenario<FeedPlan>;
const REORG = load('feed-reorg'); // after block 16, depth 3: blocks 14–16 abandoned
const sim = simulate(REORG.lab.chain, REORG.lab.topicIndexes);
const cursor = (block: number, log = 0) => `1:${String(block).padStart(14, '0')}:${String(log).padStart(4, '0')}`;
const FORK = cursor(14);

/** The plan with some of its feed keys changed (48-bit amounts unless told: no big-amounts row). */
function planWith(change: (lab: FeedPlan) => void, faults: FaultPlan[] = []): Scenario<FeedPlan> {
  const lab: FeedPlan = structuredClone({ ...REORG.lab, chain: { ...REORG.lab.chain, amountBits: 48 } });
  change(lab);
  return { ...REORG, faults, lab };
}

/** A journal, entry by entry, at times the test gives: consumer process 1 and its connections, the control's connection 1. */
class J {
  readonly entries: JournalEntry[] = [
    { t: 0, type: 'stream', role: 'control', stream: 'control', host: 'h', port: 1, db: '/x/control.db' },
    { t: 0, type: 'stream', role: 'consumer', stream: 'consumer', host: 'h', port: 2, db: '/x/consumer.db' },
    { t: 1, type: 'process-start', role: 'control', incarnation: 1, pid: 1, command: 'c', env: {} },
    { t: 1, type: 'wire', stream: 'control', conn: 1, kind: 'open', owner: { role: 'control', incarnation: 1 } },
  ];
  start(t: number, n = 1, env: Record<string, string> = {}): this {
    return this.add({ t, type: 'process-start', role: 'consumer', incarnation: n, pid: 10 + n, command: 'c', env });
  }
  open(t: number, conn: number, cursor: string | null = null, n = 1): this {
    this.add({ t, type: 'wire', stream: 'consumer', conn, kind: 'open', owner: { role: 'consumer', incarnation: n } });
    const hash = cursor === null ? null : 'ab'.repeat(32);
    return this.add({
      t,
      type: 'wire',
      stream: 'consumer',
      conn,
      kind: 'recv',
      line: encodeSubscribe({ client: 'c1', topics: REORG.lab.topics, cursor, blockHash: hash }),
    });
  }
  send(t: number, conn: number, line: string, note?: string): this {
    if (note) this.note(t, conn, note);
    return this.add({ t, type: 'wire', stream: 'consumer', conn, kind: 'send', line, ...(note ? { note } : {}) });
  }
  note(t: number, conn: number, text: string, stream = 'consumer'): this {
    return this.add({ t, type: 'wire', stream, conn, kind: 'note', text });
  }
  close(t: number, conn: number): this {
    return this.add({ t, type: 'wire', stream: 'consumer', conn, kind: 'close', by: 'consumer', reason: 'closed' });
  }
  exit(t: number, n: number, code: number): this {
    return this.add({
      t,
      type: 'process-exit',
      role: 'consumer',
      incarnation: n,
      code,
      signal: null,
      durationMs: t,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
    });
  }
  add(e: JournalEntry): this {
    this.entries.push(e);
    return this;
  }
  coverage(plan: Scenario<FeedPlan>) {
    return feedCoverage({ journal: this.entries, plan, facts: factsOf(this.entries, 1), sim: simulate(plan.lab.chain, plan.lab.topicIndexes) });
  }
}

const snapshot = (c: string, balance = 5n) => encodeSnapshot(c, 'cd'.repeat(32), [[REORG.lab.topics[0]!, balance]]);
const event = (c: string) => encodeRealEvent({ ...sim.produced[0]!, cursor: c });
const reorgNote = (revoke: boolean) => `reorg from ${FORK} (depth 3): ${revoke ? 'revoke' : 'nothing sent here yet, no revoke'}`;

t.test('a reorganisation took effect when its revoke was delivered to the consumer, live or at its subscribe', async (t) => {
  const live = new J()
    .start(10)
    .open(20, 1)
    .send(30, 1, snapshot(cursor(7)))
    .send(40, 1, event(cursor(15)));
  live.note(2000, 1, reorgNote(true), 'control').note(2001, 1, reorgNote(true)).send(2002, 1, encodeRevoke(FORK));
  t.match(live.coverage(REORG), [
    {
      fault: 'reorganisation after block 16',
      kind: 'reorg',
      took: true,
      how: /reached process 1: the revoke from 14:0 was delivered on its connection 1 at 2\.002 s, live/,
    },
    { kind: 'big-amounts' },
  ]);
  const back = new J()
    .start(10)
    .open(20, 1)
    .send(30, 1, snapshot(cursor(7)))
    .send(40, 1, event(cursor(15)))
    .close(50, 1);
  back.note(2000, 1, reorgNote(true), 'control').open(3000, 2, cursor(15));
  back.send(3001, 2, encodeRevoke(FORK), undefined).note(3001, 2, `revoke from ${FORK} at subscribe: block 15 was abandoned`);
  t.match(back.coverage(planWith(() => {})), [{ took: true, how: /at its subscribe from the abandoned 15:0/ }]);
});

t.test('a reorganisation that reached no consumer is untested, and says where the consumer was', async (t) => {
  const control = (j: J) => j.note(2000, 1, reorgNote(true), 'control');
  const plan = planWith(() => {});
  const nothingSent = control(
    new J()
      .start(10)
      .open(20, 1)
      .send(30, 1, snapshot(cursor(7))),
  ).note(2001, 1, reorgNote(false));
  t.match(nothingSent.coverage(plan), [
    {
      took: false,
      how: /after block 16 \(blocks 14–16 abandoned\) reached no consumer: process 1's connection 1 had been sent nothing of the abandoned blocks/,
    },
  ]);
  const before = control(new J().start(10)).open(2500, 1);
  t.match(before.coverage(plan), [{ took: false, how: /it came at 2\.000 s, before the consumer subscribed \(at 2\.500 s\)/ }]);
  const past = control(
    new J()
      .start(10)
      .open(20, 1)
      .send(30, 1, snapshot(cursor(7)))
      .close(1000, 1),
  )
    .open(3000, 2, null)
    .send(3001, 2, snapshot(cursor(18)));
  t.match(past.coverage(plan), [
    { took: false, how: /process 1 was away when it came at 2\.000 s \(its connection 1 had closed at 1\.000 s\) and resumed at 3\.000 s with cursor null/ },
  ]);
  const control2 = new J()
    .start(10)
    .open(20, 1)
    .send(30, 1, snapshot(cursor(7)));
  t.match(control2.coverage(plan), [{ took: false, how: /never reached the server's connections/ }], 'no note anywhere: the script ended first');
  // The control met it; the consumer did not: only the consumer under test counts.
  const onlyControl = control(new J().start(10).open(20, 1)).add({ t: 2001, type: 'wire', stream: 'control', conn: 1, kind: 'send', line: encodeRevoke(FORK) });
  t.match(onlyControl.coverage(plan), [{ took: false }]);
});

t.test(
  'back from a cut across it: an abandoned cursor gets its reset or revoke, a canonical one counts only for a reorganisation drawn inside the cut',
  async (t) => {
    const cut: FaultPlan = {
      name: 'away',
      effect: { kind: 'proxy-down' },
      start: { kind: 'point', point: 'before_block', value: 13 },
      end: { kind: 'point', point: 'before_block', value: 20 },
    };
    const away = planWith(() => {}, [cut]);
    const journal = () =>
      new J()
        .start(10)
        .open(20, 1)
        .send(30, 1, snapshot(cursor(7)))
        .send(40, 1, event(cursor(12)))
        .close(50, 1)
        .note(2000, 1, reorgNote(true), 'control');
    const canonical = journal()
      .open(3000, 2, cursor(12))
      .send(3001, 2, event(cursor(14, 1)));
    const rows = canonical.coverage(away).filter((r) => r.kind !== 'cut');
    t.match(rows, [
      { kind: 'reorg-away', took: true, how: /came while process 1 was away: it came back across it, resubscribing at 3\.000 s from 12:0, below the fork/ },
    ]);
    t.match(
      canonical.coverage(planWith(() => {})),
      [{ kind: 'reorg', took: false, how: /resumed at 3\.000 s from 12:0, below the fork/ }],
      'outside a cut: no revoke, untested',
    );
    const stale = new J()
      .start(10)
      .open(20, 1)
      .send(30, 1, snapshot(cursor(7)))
      .send(40, 1, event(cursor(15)))
      .close(50, 1);
    stale.note(2000, 1, reorgNote(true), 'control').open(3000, 2, cursor(15)).send(3001, 2, encodeReset('stale-cursor'));
    t.match(
      stale.coverage(away).filter((r) => r.kind !== 'cut'),
      [{ took: true, how: /resumed from the abandoned 15:0 and got `reset stale-cursor`/ }],
    );
  },
);

t.test('server misbehaviour took effect when its line reached the consumer on the connection it names', async (t) => {
  const at = cursor(15, 2);
  const plan = planWith((lab) => {
    lab.chain.reorgs = [];
    lab.server.misbehaviour = [
      { action: 'malformed', form: 'truncated', at },
      { action: 'resend', count: 2, at, connection: 2 },
      { action: 'number-amount', at },
      { action: 'stall', at, ms: 500 },
      { action: 'unknown-op', at, connection: 3 },
    ];
    lab.server.anchors = ['event 4', 'event 4', 'event 4', 'event 4', 'event 4'];
  });
  const j = new J()
    .start(10)
    .open(20, 1)
    .send(30, 1, '{"op":"event","cursor":"1:15:2"\n', `misbehaviour: malformed at ${at} (truncated); the real event is not sent`);
  j.note(31, 1, `misbehaviour: number-amount at ${at} skipped: a Approval amount is not checked by consumers`);
  j.note(32, 1, `misbehaviour: stall at ${at}: silent for 500 ms`).close(40, 1);
  j.open(50, 2, cursor(12)).send(51, 2, event(cursor(12)), `misbehaviour: resend at ${at}: resend ${cursor(12)}`);
  t.match(j.coverage(plan), [
    { fault: 'malformed frame (truncated) at event 4', kind: 'malformed', took: true, how: /was delivered to process 1 on connection 1 at 0\.030 s/ },
    { fault: 'resend at event 4 on connection 2', kind: 'resend', took: true, how: /1 event it had been sent, sent again/ },
    { kind: 'number-amount', took: false, how: /never reached the consumer: number-amount at .* skipped: a Approval amount is not checked/ },
    { kind: 'stall', took: true, how: /the server fell silent on it for 500 ms/ },
    { fault: 'unknown op at event 4 on connection 3', kind: 'unknown-op', took: false, how: /its stream had 2 connection\(s\), not 3/ },
  ]);
  const notSent = new J().start(10).open(20, 1).close(40, 1).open(50, 2).send(60, 2, event(at));
  const rows = notSent.coverage(
    planWith((lab) => {
      lab.chain.reorgs = [];
      lab.server.misbehaviour = [{ action: 'unknown-op', at }];
      lab.server.anchors = ['block 15'];
    }),
  );
  t.match(rows, [{ took: false, how: /that event was never sent on connection 1, which closed at 0\.040 s \(closed\); it went out on connection 2/ }]);
});

t.test('a misbehaviour from a connection on follows the connection the transcript says it fired on', async (t) => {
  const at = cursor(15, 2);
  const plan = planWith((lab) => {
    lab.chain.reorgs = [];
    lab.server.misbehaviour = [
      { action: 'malformed', form: 'truncated', at, connection: { from: 2 } },
      { action: 'stall', at, connection: { from: 4 } },
      { action: 'resend', count: 2, at: cursor(12), connection: { from: 2 } },
    ];
    lab.server.anchors = ['event 4', 'event 4', 'event 1'];
  });
  // Connection 1 sent the event as it is; 2 closed before it; 3 carried the bad frame, 4 the real event again.
  const j = new J().start(10).open(20, 1).send(21, 1, event(at)).close(25, 1).open(30, 2).close(35, 2).open(40, 3);
  j.send(41, 3, '{"op":"event","cursor":"1:15:2"\n', `misbehaviour: malformed at ${at} (truncated); the real event is not sent`).close(45, 3);
  j.open(50, 4, cursor(12))
    .send(51, 4, event(cursor(12)))
    .send(52, 4, event(at));
  t.match(j.coverage(plan), [
    {
      fault: 'malformed frame (truncated) at event 4 from connection 2 on',
      kind: 'malformed',
      took: true,
      how: /was delivered to process 1 on connection 3 at 0\.041 s/,
    },
    {
      fault: 'stall at event 4 from connection 4 on',
      took: false,
      how: /did not fire: the event went out as it is on connection 4/,
    },
    { fault: 'resend at event 1 from connection 2 on', took: false, how: /resent nothing: no event of the consumer's accounts came before it/ },
  ]);
  const none = new J().start(10).open(20, 1).send(21, 1, event(at)).close(25, 1).open(30, 2);
  t.match(
    none.coverage(
      planWith((lab) => {
        lab.chain.reorgs = [];
        lab.server.misbehaviour = [{ action: 'resend', at, connection: { from: 3 } }];
        lab.server.anchors = ['event 4'];
      }),
    ),
    [{ took: false, how: /never reached the consumer: no connection from 3 on sent that event \(its stream had 2 connection\(s\)\)/ }],
  );
});

t.test('a hook took effect when it fired in its process: exit 86, a self-stop, a raise the model places', async (t) => {
  const plan = planWith((lab) => {
    lab.chain.reorgs = [];
    lab.consumer.processes = [{ fault: 'exit@snapshot:1' }, { fault: 'stop@apply:1' }, { fault: 'raise@apply:9' }];
  });
  const store = { exists: true, state: [], events: [], balances: [] };
  const j = new J().start(10, 1, { CHAOSLAB_FAULT: 'exit@snapshot:1' }).open(20, 1);
  j.add({ t: 20, type: 'store-read', role: 'consumer', incarnation: 1, when: 'at-subscribe', db: '/x/consumer.db', store: { ...store, conn: 1 } });
  j.send(30, 1, snapshot(cursor(7))).exit(40, 1, 86);
  j.start(50, 2, { CHAOSLAB_FAULT: 'stop@apply:1' }).add({ t: 60, type: 'process-stopped', role: 'consumer', incarnation: 2 });
  t.match(j.coverage(plan), [
    {
      fault: 'exit@snapshot:1 in process 1',
      kind: 'hook',
      took: true,
      how: /fired in process 1 in the transaction of the snapshot at 1:0+7:0000 \(its 1st snapshot\): it ended itself with status 86 at 0\.040 s/,
    },
    { fault: 'stop@apply:1 in process 2', took: true, how: /it stopped itself \(1 self-stop\)/ },
    { fault: 'raise@apply:9 in process 3', took: false, how: /consumer process 3 never ran \(2 did\)/ },
  ]);
  const never = new J().start(10, 1, { CHAOSLAB_FAULT: 'exit@snapshot:1' }).open(20, 1).exit(40, 1, 1);
  t.match(
    never.coverage(
      planWith((lab) => {
        lab.chain.reorgs = [];
        lab.consumer.processes = [{ fault: 'exit@snapshot:1' }];
      }),
    ),
    [{ took: false, how: /the hook exit@snapshot:1 never fired in process 1: it exited with status 1 at 0\.040 s before its snapshot 1 came/ }],
  );
});

t.test('resets, retention, the quiet ping, big amounts and a bad environment', async (t) => {
  const retention = planWith((lab) => {
    lab.chain.reorgs = [];
    lab.chain.retentionMs = 4 * lab.chain.blockIntervalMs;
  });
  const reset = new J()
    .start(10)
    .open(20, 1)
    .send(30, 1, snapshot(cursor(7)))
    .close(40, 1)
    .open(50, 2, cursor(9))
    .send(51, 2, encodeReset('stale-cursor'));
  t.match(reset.coverage(retention), [
    { fault: 'retention of 4 blocks', kind: 'retention', took: true, how: /`reset stale-cursor` reached process 1 on connection 2/ },
  ]);
  const quiet = new J()
    .start(10)
    .open(20, 1)
    .send(30, 1, snapshot(cursor(7)))
    .close(40, 1)
    .open(50, 2, cursor(9))
    .note(52, 2, 'caught up at block 30: live');
  t.match(quiet.coverage(retention), [{ took: true, how: /came back at 0\.050 s from 9:0, behind what retention had deleted \(through block 25\)/ }]);
  const near = new J().start(10).open(20, 1).close(40, 1).open(50, 2, cursor(28)).note(52, 2, 'caught up at block 30: live');
  t.match(near.coverage(retention), [{ took: false, how: /retention never reached the consumer/ }]);

  const slow = planWith((lab) => {
    lab.chain.reorgs = [];
    lab.consumer.applyDelayMs = 30;
  });
  t.match(new J().start(10).open(20, 1).send(30, 1, encodeReset('slow-consumer')).coverage(slow), [{ kind: 'slow-reader', took: true }]);
  t.match(new J().start(10).open(20, 1).send(30, 1, encodeReset('shutdown')).coverage(slow), [{ kind: 'slow-reader', took: false }]);

  const pinged = planWith((lab) => {
    lab.chain.reorgs = [];
    lab.expect.quietPing = true;
  });
  const converged = (j: J) => j.add({ t: 100, type: 'store-read', role: 'consumer', incarnation: 1, when: 'converging', db: '/x/consumer.db', store: {} });
  t.match(
    converged(new J().start(10).open(20, 1).send(50, 1, encodePing(1)))
      .send(150, 1, encodePing(2))
      .coverage(pinged),
    [{ kind: 'quiet-ping', took: true, how: /ping 2 reached process 1 on connection 1 at 0\.150 s/ }],
  );
  t.match(
    converged(new J().start(10).open(20, 1).send(50, 1, encodePing(1))).coverage(pinged),
    [{ kind: 'quiet-ping', took: false }],
    'a ping before convergence is not the quiet one',
  );

  const big = planWith((lab) => {
    lab.chain.reorgs = [];
    delete lab.chain.amountBits;
  });
  t.match(
    new J()
      .start(10)
      .open(20, 1)
      .send(30, 1, snapshot(cursor(7), 2n ** 60n))
      .coverage(big),
    [{ kind: 'big-amounts', took: true, how: /a balance above 2\^53/ }],
  );
  t.match(
    new J()
      .start(10)
      .open(20, 1)
      .send(30, 1, snapshot(cursor(7), 5n))
      .coverage(big),
    [{ kind: 'big-amounts', took: false }],
  );
  t.ok(BigInt(sim.produced[0]!.payload.amount as string) > 2n ** 53n, 'the chain of feed-reorg has big amounts');
  t.match(
    new J()
      .start(10)
      .open(20, 1)
      .send(30, 1, snapshot(cursor(7), 2n ** 60n))
      .send(40, 1, event(cursor(9)))
      .coverage(big),
    [{ kind: 'big-amounts', took: true, how: /an amount above 2\^53 \(.*, event 9:0\) reached process 1 at 0\.040 s/ }],
    'an event amount is named before a snapshot balance',
  );

  const bad = planWith((lab) => {
    lab.consumer.badEnvironment = { set: { CHAOSLAB_PORT: 'not-a-port' }, unset: ['CHAOSLAB_DB'] };
  });
  t.match(new J().start(10, 1, { CHAOSLAB_PORT: 'not-a-port' }).coverage(bad), [
    { fault: 'bad environment (CHAOSLAB_PORT, CHAOSLAB_DB)', kind: 'bad-environment', took: true, how: /process 1 started with it/ },
  ]);
  t.match(new J().start(10, 1, { CHAOSLAB_PORT: '1', CHAOSLAB_DB: 'x' }).coverage(bad), [
    { took: false, how: /CHAOSLAB_PORT, CHAOSLAB_DB not as the scenario sets them/ },
  ]);
  t.match(new J().coverage(bad), [{ took: false, how: /no consumer process started/ }]);
});
