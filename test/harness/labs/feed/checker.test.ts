// The feed-lab checker on hand-built runs: journals written through the real JournalWriter (so
// every entry is a JournalEntry) with a clock the test sets, stores built from the simulated
// chain. Each test breaks one thing a consumer can get wrong and checks that the verdict names
// it with its code and subject — and that the correct run passes.
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { encodePing, encodePong, encodeReset, encodeRevoke, encodeSnapshot, encodeSubscribe } from '../../../../protocol/feed/encode.js';
import type { RealEvent } from '../../../../publisher/feed/server/misbehaviour.js';
import { encodeRealEvent } from '../../../../publisher/feed/outbox/events.js';
import { simulate } from '../../../../harness/labs/feed/scenario/chain-script.js';
import { checkFeedRun } from '../../../../harness/labs/feed/check/checker.js';
import { type ReadWhen, SIGTERM_FAULT } from '../../../../harness/labs/feed/check/facts.js';
import type { FeedPlan } from '../../../../harness/labs/feed/scenario/plan.js';
import { journalRead } from '../../../../harness/labs/feed/run/stores.js';
import { effectOn, type SentSnapshot } from '../../../../harness/labs/feed/check/state.js';
import type { FeedStoreSnapshot } from '../../../../harness/labs/feed/check/store-reader.js';
import { type JournalEvent, JournalWriter, type Role } from '../../../../harness/record/journal.js';
import { loadScenario, type Scenario } from '../../../../harness/catalogue/load.js';
import type { Verdict } from '../../../../harness/findings/verdict.js';

const ROOT = join(import.meta.dirname, '../../../..');
const HAPPY = loadScenario(join(ROOT, 'scenarios', 'feed', 'feed-happy-path.yaml')) as Scenario<FeedPlan>;
const sim = simulate(HAPPY.lab.chain, HAPPY.lab.topicIndexes);
const topics = HAPPY.lab.topics;
const chainId = sim.chain.chainId;

/** The snapshot a consumer gets at safe block `block`: its last log, its hash, the topics' balances there. */
function snapshotAt(block: number): SentSnapshot {
  const b = sim.chain.canonicalAt(block)!;
  const all = sim.chain.balancesAt(block);
  const logIndex = Math.max(0, b.logs.length - 1);
  return {
    cursor: `${chainId}:${String(block).padStart(14, '0')}:${String(logIndex).padStart(4, '0')}`,
    blockHash: b.hash,
    balances: Object.fromEntries(topics.map((a) => [a, (all.get(a) ?? 0n).toString()])),
  };
}

const SNAP = snapshotAt(7);
const ABOVE = sim.events.filter((e) => e.cursor > SNAP.cursor);

/** A store holding `snap` and `events`, consistent (balances from the snapshot plus the events), unless told otherwise. */
function store(
  snap: SentSnapshot | undefined,
  events: readonly RealEvent[],
  change: Partial<{ cursor: string | null; balance: [string, string] }> = {},
): FeedStoreSnapshot {
  const balances = topics.map((a): [string, string] => {
    let amount = BigInt(snap?.balances[a] ?? '0');
    for (const e of events) amount += effectOn(e.type, e.payload, a);
    return [a, change.balance?.[0] === a ? change.balance[1] : amount.toString()];
  });
  const last = events.at(-1);
  return {
    exists: true,
    state: [
      {
        id: 1,
        cursor: change.cursor !== undefined ? change.cursor : (last?.cursor ?? snap?.cursor ?? null),
        block_hash: last?.payload.blockHash ?? snap?.blockHash ?? null,
        snapshot_cursor: snap?.cursor ?? null,
        snapshot_block_hash: snap?.blockHash ?? null,
      },
    ],
    events: events.map((e) => [e.cursor, e.type, JSON.stringify(e.payload)]),
    balances: snap ? balances.sort((a, b) => (a[0] < b[0] ? -1 : 1)) : [],
  };
}
const FRESH = store(undefined, []);
const DONE = store(SNAP, ABOVE);

/** Writes a run's journal through the real writer, at times the test chooses. */
class Run {
  now = 0;
  readonly journal: JournalWriter;
  private readonly conns: Record<Role, number> = { consumer: 0, control: 0 };

  constructor(t: Test) {
    this.journal = new JournalWriter(join(t.testdir(), 'journal.jsonl'), () => this.now);
    t.teardown(() => this.journal.close());
    this.write({ type: 'stream', role: 'control', stream: 'control', host: '127.0.0.1', port: 1, db: '/x/control.db' });
    this.write({ type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 2, db: '/x/consumer.db' });
  }

  write(e: JournalEvent, at = this.now + 1): this {
    this.now = at;
    this.journal.write(e);
    return this;
  }

  start(role: Role, n: number, fault?: string): this {
    return this.write({ type: 'process-start', role, incarnation: n, pid: 100 + n, command: 'x', env: fault ? { CHAOSLAB_FAULT: fault } : {} });
  }

  /** A new connection of `role`'s stream, owned by process `n`; returns its number through `conn`. */
  connect(role: Role, n: number, cursor: string | null, hash: string | null, read: FeedStoreSnapshot): this {
    const conn = ++this.conns[role];
    const owner = { role, incarnation: n };
    this.write({ type: 'wire', stream: role, conn, kind: 'open', owner });
    const client = role === 'control' ? 'c1-control' : 'c1';
    this.write({ type: 'wire', stream: role, conn, kind: 'recv', line: encodeSubscribe({ client, topics, cursor, blockHash: hash }) });
    journalRead({ journal: this.journal }, role, n, 'at-subscribe', `/x/${role}.db`, { ...read, conn });
    return this;
  }

  send(role: Role, line: string, note?: string): this {
    return this.write({ type: 'wire', stream: role, conn: this.conns[role], kind: 'send', line, ...(note ? { note } : {}) });
  }

  recv(role: Role, line: string): this {
    return this.write({ type: 'wire', stream: role, conn: this.conns[role], kind: 'recv', line });
  }

  snapshot(role: Role, s: SentSnapshot): this {
    return this.send(
      role,
      encodeSnapshot(
        s.cursor,
        s.blockHash,
        Object.entries(s.balances).map(([a, v]) => [a, BigInt(v)] as const),
      ),
    );
  }

  events(role: Role, events: readonly RealEvent[]): this {
    for (const e of events) this.send(role, encodeRealEvent(e));
    return this;
  }

  close(role: Role, by: 'consumer' | 'publisher', reason: string): this {
    return this.write({ type: 'wire', stream: role, conn: this.conns[role], kind: 'close', by, reason });
  }

  read(role: Role, n: number, when: ReadWhen, s: FeedStoreSnapshot): this {
    this.now++;
    journalRead({ journal: this.journal }, role, n, when, `/x/${role}.db`, s);
    return this;
  }

  sigterm(role: Role, n: number): this {
    return this.write({
      type: 'fault',
      action: 'apply',
      name: SIGTERM_FAULT[role],
      kind: 'signal',
      detail: 'SIGTERM',
      ...(role === 'consumer' ? { incarnation: n } : {}),
    });
  }

  exit(role: Role, n: number, code: number | null, startedAt: number, extra: { killedBy?: 'harness' | 'deadline'; signal?: string } = {}): this {
    this.now += 10;
    return this.write({
      type: 'process-exit',
      role,
      incarnation: n,
      code,
      signal: extra.signal ?? null,
      ...(extra.killedBy ? { killedBy: extra.killedBy } : {}),
      durationMs: this.now + 1 - startedAt,
      stdoutTail: '',
      stderrTail: code === 1 ? 'feed consumer: boom\n' : '',
      stdoutBytes: 0,
      stderrBytes: 0,
    });
  }

  check(plan: Scenario<FeedPlan>, finals: Record<Role, FeedStoreSnapshot>): Verdict {
    return checkFeedRun({ journal: this.journal.entries, plan, read: (role) => finals[role] });
  }
}

/** The control's whole life, correct, then the consumer's first connection starts. */
function withControl(run: Run): Run {
  return run.start('control', 1).connect('control', 1, null, null, FRESH).snapshot('control', SNAP).events('control', ABOVE);
}

/** Both consumers end correctly: converged reads, SIGTERM, exit 0. */
function ending(run: Run, consumer: number, consumerStore = DONE): Run {
  const start = run.journal.entries.find((e) => e.type === 'process-start' && e.role === 'consumer' && e.incarnation === consumer)!.t;
  return run
    .read('consumer', consumer, 'converging', consumerStore)
    .read('control', 1, 'converging', DONE)
    .sigterm('consumer', consumer)
    .sigterm('control', 1)
    .exit('consumer', consumer, 0, start)
    .exit('control', 1, 0, 1);
}

/** A whole correct run of the happy path. */
function happyRun(t: Test): Run {
  const run = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
  return ending(run, 1);
}

const codes = (v: Verdict) => v.findings.map((f) => f.code);

t.test("a correct run passes, in the feed's words", async (t) => {
  const v = happyRun(t).check(HAPPY, { consumer: DONE, control: DONE });
  t.equal(v.status, 'pass', JSON.stringify(v.findings));
  t.same(v.harnessErrors, []);
  t.match(v.headline, new RegExp(`activity list matches the chain: ${ABOVE.length} events after its snapshot at 7:`));
  t.same(
    v.tables.map((x) => x.id),
    ['activity', 'balances', 'processes', 'connections'],
  );
  t.equal(v.state.rows.length, 3);
  t.same(
    v.state.rows.map((r) => r.ok),
    [undefined, true, undefined],
    'the control is the reference: neutral when right',
  );
  t.same(v.diff, []);
});

t.test('the activity list: missing, revoked-but-kept, other content', async (t) => {
  // An Approval changes no balance: its absence shows in the activity list alone.
  const missing = ABOVE.find((e) => e.type === 'Approval')!;
  t.ok(missing, 'the chain has an Approval for the followed accounts');
  const lacking = store(
    SNAP,
    ABOVE.filter((e) => e !== missing),
  );
  const v = ending(
    withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE),
    1,
    lacking,
  ).check(HAPPY, {
    consumer: lacking,
    control: DONE,
  });
  t.equal(v.status, 'fail');
  t.same(codes(v), ['not-converged', 'missing-events']);
  const f = v.findings.find((x) => x.code === 'missing-events')!;
  t.match(f.text, `consumer: 1 event of the chain missing from its activity list: ${missing.cursor}`);
  t.same(f.subject?.cursors, [missing.cursor]);
  t.same(f.subject?.seqs, [Number(missing.cursor.split(':')[1])], 'the block, for the diagram');
  // Its cursor is the chain's last: the wait may have ended early (converge.ts), and the finding says where the store stands.
  t.ok(missing !== ABOVE.at(-1), 'the missing event is not the last');
  t.match(v.findings[0]!.text, /the consumer's store stands at the chain's end \(cursor [0-9:]+\) but does not match the chain: its last read/);
  t.match(v.diff[0], /^consumer: 1 event missing/);
  t.equal(v.state.rows[1]!.ok, false);
  // Short of the chain's end: the wait lasted converge_ms.
  const short = store(SNAP, ABOVE.slice(0, -1));
  const behind = ending(
    withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE),
    1,
    short,
  ).check(HAPPY, { consumer: short, control: DONE });
  t.match(
    behind.findings.find((x) => x.code === 'not-converged')?.text,
    /the consumer's store did not reach the chain's end within 15\.000 s after the script: its last read/,
  );

  // An event of an abandoned block left in place, and an event stored with other content.
  const ghost: RealEvent = {
    ...ABOVE[5]!,
    cursor: ABOVE[5]!.cursor.replace(/:(\d{4})$/, ':0099'),
    payload: { ...ABOVE[5]!.payload, blockHash: `0x${'ab'.repeat(32)}` },
  };
  const changed: RealEvent = { ...ABOVE[6]!, payload: { ...ABOVE[6]!.payload, txHash: '0xdead' } };
  const odd = store(
    SNAP,
    [...ABOVE.map((e) => (e === ABOVE[6] ? changed : e)), ghost].sort((a, b) => (a.cursor < b.cursor ? -1 : 1)),
    { cursor: ABOVE.at(-1)!.cursor },
  );
  const w = happyRun(t).check(HAPPY, { consumer: odd, control: DONE });
  t.ok(codes(w).includes('revoked-kept'), codes(w).join());
  t.match(w.findings.find((x) => x.code === 'revoked-kept')!.text, /which a reorganisation abandoned: it was revoked but not removed/);
  t.match(w.findings.find((x) => x.code === 'wrong-content')!.text, new RegExp(`event ${changed.cursor} is stored as ${changed.type}`));
});

t.test('balances: an event applied twice is named', async (t) => {
  const transfer = ABOVE.find(
    (e) => e.type === 'Transfer' && topics.includes(e.payload.to as string) && e.payload.amount !== '0' && e.payload.from !== e.payload.to,
  )!;
  const account = transfer.payload.to as string;
  const good = store(SNAP, ABOVE);
  const doubled = (BigInt(good.balances.find(([a]) => a === account)![1] as string) + BigInt(transfer.payload.amount as string)).toString();
  const twice = store(SNAP, ABOVE, { balance: [account, doubled] });
  const v = happyRun(t).check(HAPPY, { consumer: twice, control: DONE });
  const f = v.findings.find((x) => x.code === 'applied-twice');
  t.ok(f, codes(v).join());
  t.match(
    f!.text,
    new RegExp(
      `the balance of ${account} is ${doubled}, the chain says .*applied twice\\?\\) — an event at or below the stored cursor is a duplicate .*\\(CONTRACT\\.md §4\\)`,
    ),
  );
  t.equal(v.headline, f!.text, 'the duplicate applied twice leads, ahead of the store that never converged');
});

t.test("a control consumer that fails is a harness error, never the consumer's failure", async (t) => {
  const wrong = store(SNAP, ABOVE.slice(0, -2));
  const v = happyRun(t).check(HAPPY, { consumer: DONE, control: wrong });
  t.equal(v.status, 'error');
  t.same(v.findings, []);
  t.ok(
    v.harnessErrors.some((e) => e.code === 'control-missing-events' && e.subject?.process?.role === 'control'),
    v.harnessErrors.map((e) => e.code).join(),
  );
  t.match(v.headline, /^control consumer: 2 events of the chain missing/);
});

t.test('subscribes carry the durable cursor; snapshots must be justified', async (t) => {
  const half = ABOVE.slice(0, 10);
  const atHalf = store(SNAP, half);
  const first = (run: Run) =>
    withControl(run)
      .start('consumer', 1)
      .connect('consumer', 1, null, null, FRESH)
      .snapshot('consumer', SNAP)
      .events('consumer', half)
      .close('consumer', 'consumer', 'closed');

  t.test('an unneeded snapshot', async (t) => {
    const run = first(new Run(t)).connect('consumer', 1, null, null, atHalf).snapshot('consumer', SNAP).events('consumer', ABOVE);
    const v = ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE });
    t.same(codes(v), ['unneeded-snapshot']);
    t.match(
      v.findings[0]!.text,
      new RegExp(`process 1, connection 2 subscribed with cursor null, but its store held cursor ${half.at(-1)!.cursor} and nothing called for a snapshot`),
    );
    t.same(v.findings[0]!.subject?.process, { role: 'consumer', incarnation: 1 });
  });

  t.test('a cursor that is not the durable one', async (t) => {
    const older = half[7]!;
    const run = first(new Run(t)).connect('consumer', 1, older.cursor, older.payload.blockHash, atHalf).events('consumer', ABOVE.slice(8));
    const v = ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE });
    t.same(codes(v), ['not-durable-cursor']);
    t.match(
      v.findings[0]!.text,
      new RegExp(`subscribed with cursor ${older.cursor}, but the cursor durable in its store at that moment was ${half.at(-1)!.cursor}`),
    );
  });

  t.test('the durable cursor with another block hash', async (t) => {
    const run = first(new Run(t)).connect('consumer', 1, half.at(-1)!.cursor, '0xbad', atHalf).events('consumer', ABOVE.slice(10));
    const v = ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE });
    t.same(codes(v), ['wrong-subscribe-hash']);
  });

  t.test('after reset stale-cursor, a snapshot is needed — unless the reset may have been lost', async (t) => {
    const stale = (run: Run, cut: boolean) => {
      withControl(run).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', half);
      if (cut) run.write({ type: 'fault', action: 'apply', name: 'cut', kind: 'proxy-down', detail: 'proxy disabled' });
      run.send('consumer', encodeReset('stale-cursor')).close('consumer', 'publisher', 'stale cursor');
      if (cut) run.write({ type: 'fault', action: 'lift', name: 'cut', kind: 'proxy-down', detail: 'proxy enabled' });
      return run.connect('consumer', 1, half.at(-1)!.cursor, half.at(-1)!.payload.blockHash, atHalf).events('consumer', ABOVE.slice(10));
    };
    const v = ending(stale(new Run(t), false), 1).check(HAPPY, { consumer: DONE, control: DONE });
    t.same(codes(v), ['snapshot-needed']);
    t.match(
      v.findings[0]!.text,
      new RegExp(
        `^after \`reset stale-cursor\` at .*, process 1, connection 2 subscribed with the stale cursor ${half.at(-1)!.cursor} again, and no snapshot was installed since: it must subscribe with cursor null`,
      ),
    );
    const lost = ending(stale(new Run(t), true), 1).check(HAPPY, { consumer: DONE, control: DONE });
    t.same(codes(lost), [], 'a cut while the reset was on its way: either subscribe is accepted');
  });

  t.test('after reset slow-consumer, a snapshot is unneeded, and the finding says which reset came', async (t) => {
    const run = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', half);
    run.send('consumer', encodeReset('slow-consumer')).close('consumer', 'publisher', 'slow consumer');
    run.connect('consumer', 1, null, null, atHalf).snapshot('consumer', SNAP).events('consumer', ABOVE);
    const v = ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE });
    t.same(codes(v), ['unneeded-snapshot']);
    t.match(
      v.findings[0]!.text,
      new RegExp(
        `^after \`reset slow-consumer\` at .*, process 1, connection 2 subscribed with cursor null, but its store held cursor ${half.at(-1)!.cursor}: that reset asks to resume from the stored cursor`,
      ),
    );
    const resumed = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', half);
    resumed.send('consumer', encodeReset('slow-consumer')).close('consumer', 'publisher', 'slow consumer');
    resumed.connect('consumer', 1, half.at(-1)!.cursor, half.at(-1)!.payload.blockHash, atHalf).events('consumer', ABOVE.slice(10));
    t.same(codes(ending(resumed, 1).check(HAPPY, { consumer: DONE, control: DONE })), [], 'resuming from the stored cursor is right');
  });

  t.test('a snapshot after a stale-cursor reset is justified', async (t) => {
    const run = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', half);
    run.send('consumer', encodeReset('stale-cursor')).close('consumer', 'publisher', 'stale cursor');
    run.connect('consumer', 1, null, null, atHalf).snapshot('consumer', SNAP).events('consumer', ABOVE);
    const v = ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE });
    t.same(codes(v), []);
  });

  t.test('a snapshot the server never sent', async (t) => {
    const forged = { ...SNAP, cursor: SNAP.cursor.replace(/:(\d{4})$/, ':0042') };
    const v = happyRun(t).check(HAPPY, { consumer: store(forged, ABOVE), control: DONE });
    t.ok(codes(v).includes('snapshot-not-sent'), codes(v).join());
  });
});

t.test('processes: crashes, SIGTERM, the expected count', async (t) => {
  const crashed = (t: Test, code: number, fault?: string) => {
    const run = withControl(new Run(t))
      .start('consumer', 1, fault)
      .connect('consumer', 1, null, null, FRESH)
      .snapshot('consumer', SNAP)
      .events('consumer', ABOVE.slice(0, 3));
    run.exit('consumer', 1, code, run.now - 5).read('consumer', 1, 'after-exit', store(SNAP, ABOVE.slice(0, 3)));
    run
      .start('consumer', 2)
      .connect('consumer', 2, ABOVE[2]!.cursor, ABOVE[2]!.payload.blockHash, store(SNAP, ABOVE.slice(0, 3)))
      .events('consumer', ABOVE.slice(3));
    return ending(run, 2);
  };
  const two = loadScenario(writePlan(t, 'two', ['  processes: [{}, {}]'])) as Scenario<FeedPlan>;
  const v = crashed(t, 1).check(two, { consumer: DONE, control: DONE });
  t.same(codes(v), ['crashed']);
  t.match(v.findings[0]!.text, /process 1 exited with status 1 while the feed was running \("feed consumer: boom"\); nothing asked it to end/);
  t.same(codes(crashed(t, 1).check(HAPPY, { consumer: DONE, control: DONE })), ['crashed', 'process-count'], 'happy path expects one process');

  const sigterm = (t: Test, code: number | null, extra: { killedBy?: 'harness'; signal?: string } = {}) => {
    const run = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
    return run
      .read('consumer', 1, 'converging', DONE)
      .read('control', 1, 'converging', DONE)
      .sigterm('consumer', 1)
      .sigterm('control', 1)
      .exit('consumer', 1, code, 2, extra)
      .exit('control', 1, 0, 1)
      .check(HAPPY, { consumer: DONE, control: DONE });
  };
  t.same(codes(sigterm(t, 143)), ['sigterm-status']);
  const killed = sigterm(t, null, { killedBy: 'harness', signal: 'SIGKILL' });
  t.same(codes(killed), ['sigterm-ignored']);
  t.match(killed.findings[0]!.text, /did not exit within 2 s of SIGTERM/);
});

t.test('crash hooks: what the file must hold after exit@apply and exit@commit', async (t) => {
  const hooked = (t: Test, fault: string, after: readonly RealEvent[]) => {
    const plan = loadScenario(writePlan(t, 'hooked', ['  processes:', `    - fault: "${fault}"`])) as Scenario<FeedPlan>;
    const run = withControl(new Run(t))
      .start('consumer', 1, fault)
      .connect('consumer', 1, null, null, FRESH)
      .snapshot('consumer', SNAP)
      .events('consumer', ABOVE.slice(0, 4));
    const read = store(SNAP, after);
    run.exit('consumer', 1, 86, run.now - 5).read('consumer', 1, 'after-exit', read);
    const last = after.at(-1)!;
    run.start('consumer', 2).connect('consumer', 2, last.cursor, last.payload.blockHash, read).events('consumer', ABOVE.slice(after.length));
    return ending(run, 2).check(plan, { consumer: DONE, control: DONE });
  };
  t.same(codes(hooked(t, 'exit@apply:3', ABOVE.slice(0, 2))), [], 'ended inside the 3rd event: two events committed');
  const survived = hooked(t, 'exit@apply:3', ABOVE.slice(0, 3));
  t.same(codes(survived), ['uncommitted-survived']);
  t.match(
    survived.findings[0]!.text,
    new RegExp(`process 1 was ended inside the transaction of event ${ABOVE[2]!.cursor} \\(its 3rd new event\\), and its file then held`),
  );
  t.same(survived.findings[0]!.subject?.cursors, [ABOVE[2]!.cursor]);
  t.same(codes(hooked(t, 'exit@commit:3', ABOVE.slice(0, 3))), [], 'ended right after the 3rd COMMIT: three events');
  const lost = hooked(t, 'exit@commit:3', ABOVE.slice(0, 2));
  t.same(codes(lost), ['commit-not-durable']);

  // The hook points count new events only: a resent event is a duplicate and no hook fires for it.
  const plan = loadScenario(writePlan(t, 'dups', ['  processes:', '    - fault: "exit@apply:3"'])) as Scenario<FeedPlan>;
  const run = withControl(new Run(t)).start('consumer', 1, 'exit@apply:3').connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP);
  run.events('consumer', ABOVE.slice(0, 2)).events('consumer', ABOVE.slice(0, 2)).events('consumer', ABOVE.slice(2, 4));
  const read = store(SNAP, ABOVE.slice(0, 2));
  run.exit('consumer', 1, 86, run.now - 5).read('consumer', 1, 'after-exit', read);
  run.start('consumer', 2).connect('consumer', 2, ABOVE[1]!.cursor, ABOVE[1]!.payload.blockHash, read).events('consumer', ABOVE.slice(2));
  t.same(codes(ending(run, 2).check(plan, { consumer: DONE, control: DONE })), []);
});

t.test('a process that stops itself inside a transaction: uncommitted work must be invisible', async (t) => {
  const plan = loadScenario(writePlan(t, 'stop', ['  processes:', '    - fault: "stop@apply:2"'])) as Scenario<FeedPlan>;
  const stopped = (t: Test, seen: readonly RealEvent[]) => {
    const run = withControl(new Run(t))
      .start('consumer', 1, 'stop@apply:2')
      .connect('consumer', 1, null, null, FRESH)
      .snapshot('consumer', SNAP)
      .events('consumer', ABOVE);
    run.write({ type: 'process-stopped', role: 'consumer', incarnation: 1 }).read('consumer', 1, 'while-stopped', store(SNAP, seen));
    run.write({ type: 'process-continued', role: 'consumer', incarnation: 1 });
    return ending(run, 1).check(plan, { consumer: DONE, control: DONE });
  };
  t.same(codes(stopped(t, ABOVE.slice(0, 1))), []);
  const v = stopped(t, ABOVE.slice(0, 2));
  t.same(codes(v), ['uncommitted-visible']);
  t.match(
    v.findings[0]!.text,
    /stopped itself inside the transaction of event .* \(its 2nd new event\), and an independent read saw .* 2 events; uncommitted work must be invisible: it must see .* 1 event/,
  );
});

t.test('a read while stopped that finds the store locked says the process ran past its hook', async (t) => {
  const plan = loadScenario(writePlan(t, 'locked', ['  processes:', '    - fault: "stop@apply:2"'])) as Scenario<FeedPlan>;
  const run = withControl(new Run(t))
    .start('consumer', 1, 'stop@apply:2')
    .connect('consumer', 1, null, null, FRESH)
    .snapshot('consumer', SNAP)
    .events('consumer', ABOVE);
  const locked: FeedStoreSnapshot = { exists: true, error: 'database is locked (SQLITE_BUSY)', state: [], events: [], balances: [] };
  run.write({ type: 'process-stopped', role: 'consumer', incarnation: 1 }).read('consumer', 1, 'while-stopped', locked);
  run.write({ type: 'process-continued', role: 'consumer', incarnation: 1 });
  const v = ending(run, 1).check(plan, { consumer: DONE, control: DONE });
  const f = v.findings.find((x) => x.code === 'unreadable-mid-run');
  t.match(
    f?.text,
    /^process 1: while it was stopped by its own hook \([^)]*\), the store was locked for writing \(a transaction still open\) while the process was stopped at its hook: the process ran past its hook/,
  );
  t.match(f?.text, /\[database is locked \(SQLITE_BUSY\)\]$/);
});

t.test('hooks counted from frames in doubt are not judged', async (t) => {
  // A half-open link swallows the rest of connection 1, its revoke included; the process's first
  // revoke is the one at subscribe on connection 2, from a state without the swallowed events.
  const plan = loadScenario(writePlan(t, 'doubt', ['  processes:', '    - fault: "stop@revoke:1"'])) as Scenario<FeedPlan>;
  const blackhole = (run: Run, action: 'apply' | 'lift') =>
    run.write({ type: 'fault', action, name: 'half-open', kind: 'toxic', detail: action === 'apply' ? 'timeout downstream timeout=0' : 'timeout removed' });
  const swallowed = (lossy: boolean) => {
    const run = withControl(new Run(t)).start('consumer', 1, 'stop@revoke:1').connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP);
    run.events('consumer', ABOVE.slice(0, 2));
    if (lossy) blackhole(run, 'apply');
    run.events('consumer', ABOVE.slice(2, 4)).send('consumer', encodeRevoke(ABOVE[1]!.cursor));
    run.close('consumer', 'consumer', 'closed');
    if (lossy) blackhole(run, 'lift');
    const held = store(SNAP, ABOVE.slice(0, 2));
    run.connect('consumer', 1, ABOVE[1]!.cursor, ABOVE[1]!.payload.blockHash, held).send('consumer', encodeRevoke(ABOVE[1]!.cursor));
    run.write({ type: 'process-stopped', role: 'consumer', incarnation: 1 }).read('consumer', 1, 'while-stopped', held);
    run.write({ type: 'process-continued', role: 'consumer', incarnation: 1 }).events('consumer', ABOVE.slice(1));
    return ending(run, 1).check(plan, { consumer: DONE, control: DONE });
  };
  t.same(codes(swallowed(false)), ['uncommitted-visible'], 'without the fault, connection 1 was read to its end: the revoke there is the first');
  t.same(codes(swallowed(true)), [], 'a frame sent into the half-open link may never have arrived');

  // A SIGKILL fault may end the process before its exit hook fires: its file says nothing about the hook.
  const killed = loadScenario(writePlan(t, 'killed', ['  processes:', '    - fault: "exit@apply:3"'])) as Scenario<FeedPlan>;
  const run = withControl(new Run(t)).start('consumer', 1, 'exit@apply:3').connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP);
  run.events('consumer', ABOVE.slice(0, 4));
  const read = store(SNAP, ABOVE.slice(0, 1));
  run.exit('consumer', 1, null, run.now - 5, { killedBy: 'harness', signal: 'SIGKILL' }).read('consumer', 1, 'after-exit', read);
  run.start('consumer', 2).connect('consumer', 2, ABOVE[0]!.cursor, ABOVE[0]!.payload.blockHash, read).events('consumer', ABOVE.slice(1));
  t.same(codes(ending(run, 2).check(killed, { consumer: DONE, control: DONE })), []);
});

t.test('mid-run reads must show a committed state', async (t) => {
  const split = store(SNAP, ABOVE.slice(0, 3), { cursor: ABOVE[1]!.cursor });
  const run = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
  run.read('consumer', 1, 'converging', split);
  const v = ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE });
  t.ok(codes(v).includes('inconsistent-store'), codes(v).join());
  t.match(
    v.findings.find((f) => f.code === 'inconsistent-store')!.text,
    new RegExp(`cursor ${ABOVE[1]!.cursor} while its greatest event is ${ABOVE[2]!.cursor}`),
  );
});

t.test('exit hooks must end the process', async (t) => {
  const plan = loadScenario(writePlan(t, 'never', ['  processes:', '    - fault: "exit@apply:999"'])) as Scenario<FeedPlan>;
  const run = withControl(new Run(t))
    .start('consumer', 1, 'exit@apply:999')
    .connect('consumer', 1, null, null, FRESH)
    .snapshot('consumer', SNAP)
    .events('consumer', ABOVE);
  const v = ending(run, 1).check(plan, { consumer: DONE, control: DONE });
  t.same(codes(v), ['hook-not-fired']);
});

t.test('pings must be answered', async (t) => {
  const run = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
  run.send('consumer', encodePing(1)).send('consumer', encodePing(2)).recv('consumer', encodePong(2));
  const v = ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE });
  t.same(codes(v), ['ping-unanswered']);
  t.match(v.findings[0]!.text, /left 1 ping of 2 unanswered, first ping 1 at/);

  // The last ping, unanswered, counts once the connection stayed open long enough after it.
  const late = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
  late.send('consumer', encodePing(1));
  late.now += 100;
  t.same(codes(ending(late, 1).check(HAPPY, { consumer: DONE, control: DONE })), [], 'not yet: 100 ms');
  const later = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
  later.send('consumer', encodePing(1));
  later.now += HAPPY.lab.server.idleMs + 1;
  t.same(codes(ending(later, 1).check(HAPPY, { consumer: DONE, control: DONE })), ['ping-unanswered']);
});

t.test('a link that drops bytes excuses a lost ping and a lost subscribe', async (t) => {
  const blackhole = (run: Run, action: 'apply' | 'lift') =>
    run.write({ type: 'fault', action, name: 'half-open', kind: 'toxic', detail: action === 'apply' ? 'timeout downstream timeout=0' : 'timeout removed' });
  const run = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
  blackhole(run, 'apply');
  run.send('consumer', encodePing(1));
  run.now += HAPPY.lab.server.idleMs + 1;
  run.close('consumer', 'publisher', `idle: nothing received for ${HAPPY.lab.server.idleMs} ms`);
  run.write({ type: 'wire', stream: 'consumer', conn: 2, kind: 'open', owner: { role: 'consumer', incarnation: 1 } });
  run.now += HAPPY.lab.server.idleMs + 1;
  run.write({ type: 'wire', stream: 'consumer', conn: 2, kind: 'close', by: 'publisher', reason: `idle: nothing received for ${HAPPY.lab.server.idleMs} ms` });
  blackhole(run, 'lift');
  t.same(codes(ending(run, 1).check(HAPPY, { consumer: DONE, control: DONE })), []);

  // The same without the toxic: both are the consumer's doing.
  const plain = withControl(new Run(t)).start('consumer', 1).connect('consumer', 1, null, null, FRESH).snapshot('consumer', SNAP).events('consumer', ABOVE);
  plain.send('consumer', encodePing(1));
  plain.now += HAPPY.lab.server.idleMs + 1;
  plain.close('consumer', 'publisher', 'idle');
  plain.write({ type: 'wire', stream: 'consumer', conn: 2, kind: 'open', owner: { role: 'consumer', incarnation: 1 } });
  plain.now += HAPPY.lab.server.idleMs + 1;
  plain.write({ type: 'wire', stream: 'consumer', conn: 2, kind: 'close', by: 'publisher', reason: 'idle: nothing received' });
  t.same(codes(ending(plain, 1).check(HAPPY, { consumer: DONE, control: DONE })), ['no-subscribe', 'ping-unanswered']);
});

/** A scenario like the happy path, with these lines added under `consumer:` (no expected process count). */
function writePlan(t: Test, name: string, consumerLines: string[]): string {
  const text = [
    `name: ${name}`,
    'description: Virtual time runs 10 times faster than real time.',
    'protocol: feed',
    'time_scale: 0.1',
    'chain: { seed: 17, accounts: 6, confirmations: 3, block_interval_ms: 2500, logs_per_block: { min: 0, max: 3 }, amount_bits: 48, initial_blocks: 10 }',
    'time: { duration_ms: 100000, converge_ms: 15000 }',
    'consumer:',
    '  topics: [0, 2, 3]',
    ...consumerLines,
    '',
  ].join('\n');
  const dir = t.testdir({ [`${name}.yaml`]: text });
  return join(dir, `${name}.yaml`);
}
