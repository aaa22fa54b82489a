// The ledger checker judged from hand-made journals and SQLite files: no process, no network.
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type JournalEntry, JournalWriter, readJournal } from '../../../../harness/record/journal.js';
import { checkLedgerRun as checkRun } from '../../../../harness/labs/ledger/check/checker.js';
import { incarnationFacts } from '../../../../harness/labs/ledger/check/incarnations.js';
import { badValue, describeBadEnvironment, storeWritten } from '../../../../harness/labs/ledger/check/environment.js';
import { consumerEnv } from '../../../../harness/labs/ledger/run/run.js';
import type { LedgerPlan } from '../../../../harness/labs/ledger/scenario/load.js';
import { readStore } from '../../../../harness/labs/ledger/check/store-reader.js';
import { renderSummary } from '../../../../harness/report/summary.js';
import type { Scenario } from '../../../../harness/scenario/types.js';
import { findingTexts } from '../../../../harness/findings/verdict.js';

/** The checker on a journal whose `scenario` entry holds the plan; its verdict, plus the facts the tests look at. */
function checkLedgerRun(journal: JournalEntry[]) {
  const plan = { source: '', ...(journal.find((e) => e.type === 'scenario')!.plan as Omit<Scenario<LedgerPlan>, 'source'>) };
  const verdict = checkRun(journal, plan, (_role, db) => readStore(db));
  const [last, total, events] = verdict.state.rows[0]!.cells as number[];
  return {
    verdict,
    pass: verdict.status === 'pass',
    reasons: verdict.findings.map((f) => f.text),
    harnessErrors: verdict.harnessErrors.map((f) => f.text),
    expected: { last, total, events },
    incarnations: incarnationFacts(journal, plan, 'consumer'),
  };
}

const SCRIPT = [7, 5, -3].map((delta, seq) => ({ seq, delta }));

function makeStore(path: string, checkpoint: [number, number][] | null, ledger: [number, number][]): void {
  const db = new Database(path);
  db.exec('CREATE TABLE checkpoint (id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL)');
  db.exec('CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL)');
  for (const [last, total] of checkpoint ?? []) db.prepare('INSERT INTO checkpoint VALUES (1, ?, ?)').run(last, total);
  for (const [seq, delta] of ledger) db.prepare('INSERT INTO ledger VALUES (?, ?)').run(seq, delta);
  db.close();
}

interface Inc {
  fault?: string;
  expectExit?: 'zero' | 'nonzero' | 'any';
  lines: string[]; // consumer -> publisher lines on its one connection
  exit: { code: number | null; signal?: string; killedBy?: 'deadline' };
  after?: { last: number; total: number; ledger: [number, number][] };
}

function journalFor(
  dir: string,
  incs: Inc[],
  transcript?: { incarnation: number; resume: number; acks?: number[]; closedBy?: 'consumer' | 'publisher' }[],
): JournalEntry[] {
  const plan: Omit<Scenario<LedgerPlan>, 'source'> = {
    file: 'x.yaml',
    name: 'x',
    description: 'x',
    protocol: 'ledger',
    timeoutMs: 2000,
    deadlineMs: 60000,
    timeScale: 1,
    faults: [],
    lab: {
      events: SCRIPT,
      eventSource: { kind: 'explicit' },
      publisher: { window: 16, retentionStart: 0, redeliverUnacked: true, ackDeadlineMs: 5000, forgetAcked: false, retentionMoves: [], misbehaviour: [] },
      consumer: {
        incarnations: incs.map((i, n) => ({ ...(i.fault ? { fault: i.fault } : {}), expectExit: i.expectExit ?? (n === incs.length - 1 ? 'zero' : 'any') })),
      },
      expect: transcript ? { transcript } : {},
    },
  };
  let t = 0;
  const e: JournalEntry[] = [
    { t: t++, type: 'scenario', source: '', plan },
    { t: t++, type: 'stream', role: 'control', stream: 'control', host: '127.0.0.1', port: 1, db: join(dir, 'control.db') },
    { t: t++, type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 2, db: join(dir, 'consumer.db') },
  ];
  incs.forEach((inc, i) => {
    const n = i + 1;
    e.push({ t: t++, type: 'process-start', role: 'consumer', incarnation: n, pid: 1, command: 'x', env: {} });
    e.push({ t: t++, type: 'wire', stream: 'consumer', conn: n, kind: 'open', owner: { role: 'consumer', incarnation: n } });
    for (const line of inc.lines) e.push({ t: (t += 100), type: 'wire', stream: 'consumer', conn: n, kind: 'recv', line });
    e.push({
      t: t++,
      type: 'process-exit',
      role: 'consumer',
      incarnation: n,
      code: inc.exit.code,
      signal: inc.exit.signal ?? null,
      ...(inc.exit.killedBy ? { killedBy: inc.exit.killedBy } : {}),
      durationMs: 1,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
    });
    if (inc.after)
      e.push({
        t: t++,
        type: 'store-read',
        role: 'consumer',
        incarnation: n,
        when: 'after-exit',
        db: join(dir, 'consumer.db'),
        store: { exists: true, checkpoint: [{ id: 1, last: inc.after.last, total: inc.after.total }], ledger: inc.after.ledger },
      });
  });
  return e;
}

const GOOD: [number, number][] = [
  [0, 7],
  [1, 5],
  [2, -3],
];
const ACK_CRASH: Inc[] = [
  {
    fault: 'exit@ack:1',
    expectExit: 'nonzero',
    lines: ['RESUME -1\n', 'ACK 0\n'],
    exit: { code: 86 },
    after: {
      last: 1,
      total: 12,
      ledger: [
        [0, 7],
        [1, 5],
      ],
    },
  },
  { lines: ['RESUME 1\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 }, after: { last: 2, total: 9, ledger: GOOD } },
];
const ACK_CRASH_EXPECT = [
  { incarnation: 1, resume: -1, acks: [0] },
  { incarnation: 2, resume: 1, acks: [1, 2] },
];

function setup(t: Test, consumer: { checkpoint: [number, number][] | null; ledger: [number, number][] } | 'missing') {
  const dir = t.testdir();
  makeStore(join(dir, 'control.db'), [[2, 9]], GOOD);
  if (consumer !== 'missing') makeStore(join(dir, 'consumer.db'), consumer.checkpoint, consumer.ledger);
  return dir;
}

t.test('a correct ack-crash run passes', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const v = checkLedgerRun(journalFor(dir, ACK_CRASH, ACK_CRASH_EXPECT));
  t.same(v.reasons, []);
  t.same(v.harnessErrors, []);
  t.equal(v.pass, true);
  t.same(v.expected, { last: 2, total: 9, events: 3 });
  t.same(
    v.incarnations.map((i) => [i.resumes, i.acks.map((a) => a.seq)]),
    [
      [[-1], [0]],
      [[1], [1, 2]],
    ],
  );
});

t.test('an event applied twice is explained with its seq and totals', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 14]], ledger: GOOD });
  const v = checkLedgerRun(journalFor(dir, ACK_CRASH, ACK_CRASH_EXPECT));
  t.equal(v.pass, false);
  t.match(v.reasons[0], /^seq 1 applied twice: total 14, expected 9/);
  t.match(v.reasons.join('\n'), /consumer: total 14, expected 9/);
  t.match(v.reasons.join('\n'), /control consumer ended with last 2, total 9; the consumer under test with last 2, total 14/);
});

t.test('ledger/cursor invariants: missing, beyond the cursor, wrong delta, foreign seq, checkpoint rows', async (t) => {
  const cases: [string, { checkpoint: [number, number][] | null; ledger: [number, number][] } | 'missing', RegExp][] = [
    [
      'missing seq',
      {
        checkpoint: [[2, 4]],
        ledger: [
          [0, 7],
          [2, -3],
        ],
      },
      /seq 1 missing from the ledger although the cursor says last 2/,
    ],
    ['beyond cursor', { checkpoint: [[1, 9]], ledger: GOOD }, /ledger holds seq 2 beyond the cursor \(last 1\)/],
    [
      'wrong delta',
      {
        checkpoint: [[2, 10]],
        ledger: [
          [0, 7],
          [1, 6],
          [2, -3],
        ],
      },
      /seq 1 recorded with delta 6, but the script says 5/,
    ],
    ['foreign seq', { checkpoint: [[3, 10]], ledger: [...GOOD, [3, 1]] }, /ledger holds seq 3, which the script never had/],
    ['no checkpoint row', { checkpoint: null, ledger: [] }, /checkpoint has 0 rows/],
    ['not applied', { checkpoint: [[0, 7]], ledger: [[0, 7]] }, /cursor is last 0, expected 2 \(seqs 1, 2 never applied\)/],
    ['no file', 'missing', /no SQLite file was created/],
  ];
  for (const [name, store, reason] of cases) {
    const dir = setup(t, store);
    const v = checkLedgerRun(journalFor(dir, [{ lines: ['RESUME -1\n'], exit: { code: 0 } }]));
    t.equal(v.pass, false, name);
    t.match(v.reasons.join('\n'), reason, name);
  }
});

t.test('transcript expectations: unexpected ACK after an ack-point crash names the seq and the ordering bug', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const mutant: Inc[] = [
    { ...ACK_CRASH[0]!, lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n'] },
    { lines: ['RESUME 1\n', 'ACK 2\n'], exit: { code: 0 }, after: { last: 2, total: 9, ledger: GOOD } },
  ];
  const v = checkLedgerRun(journalFor(dir, mutant, ACK_CRASH_EXPECT));
  t.equal(v.pass, false);
  t.match(
    v.reasons[0],
    /^incarnation 1 sent ACK 1 at \d\.\d{3} s, which it must not send: the process was ended at fault point ack:1, after COMMIT and before the ACK is written, so this ACK was written before seq 1 was committed — write ACK s only after COMMIT returned \(CONTRACT\.md §4, ACK only after COMMIT\)$/,
  );
  t.match(v.reasons[1], /incarnation 2 never sent ACK 1 \(incarnation 1 had already acknowledged it, so it was not redelivered\)/);
  const ackLine = journalFor(dir, mutant, ACK_CRASH_EXPECT).find((e) => e.type === 'wire' && e.kind === 'recv' && e.conn === 1 && e.line === 'ACK 1\n')!;
  t.match(
    v.verdict.findings[0],
    { code: 'ack-before-commit', subject: { seqs: [1], t: ackLine.t, process: { role: 'consumer', incarnation: 1 } } },
    'the finding names its seq, time and process as data, for the reports to highlight',
  );
  t.match(v.verdict.findings[1], { code: 'missing-ack', subject: { seqs: [1], process: { incarnation: 2 } } });
});

t.test('transcript expectations: wrong RESUME, missing RESUME, order', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const fromScratch: Inc[] = [ACK_CRASH[0]!, { ...ACK_CRASH[1]!, lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'] }];
  const v = checkLedgerRun(journalFor(dir, fromScratch, ACK_CRASH_EXPECT));
  t.match(v.reasons.join('\n'), /incarnation 2 sent RESUME -1, expected RESUME 1/);
  t.match(v.reasons.join('\n'), /incarnation 2 sent RESUME -1, but its file's durable cursor was 1 when it started/);
  const silent: Inc[] = [ACK_CRASH[0]!, { ...ACK_CRASH[1]!, lines: [] }];
  t.match(
    checkLedgerRun(journalFor(dir, silent, ACK_CRASH_EXPECT)).reasons.join('\n'),
    /incarnation 2 never sent RESUME to the publisher \(expected RESUME 1\)/,
  );
  const reordered: Inc[] = [ACK_CRASH[0]!, { ...ACK_CRASH[1]!, lines: ['RESUME 1\n', 'ACK 2\n', 'ACK 1\n'] }];
  t.match(checkLedgerRun(journalFor(dir, reordered, ACK_CRASH_EXPECT)).reasons.join('\n'), /sent ACKs in the order 2, 1, expected 1, 2/);
});

t.test('an ACK is a promise: acknowledged but not in the file when the process ended', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const broken: Inc[] = [
    { fault: 'exit@apply:1', lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n'], exit: { code: 86 }, after: { last: 0, total: 7, ledger: [[0, 7]] } },
    { lines: ['RESUME 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 }, after: { last: 2, total: 9, ledger: GOOD } },
  ];
  const v = checkLedgerRun(journalFor(dir, broken));
  t.equal(v.pass, false, 'the final state is right, the promise was still broken');
  t.match(
    v.reasons.join('\n'),
    /incarnation 1 acknowledged seq 1 at \d\.\d{3} s, but when it ended its file did not hold seq 1 \(last 0\): the ACK was a broken promise/,
  );
  // Many broken promises: ten named one by one, the rest together, so a report stays readable.
  const many: Inc[] = [
    { lines: ['RESUME -1\n', ...Array.from({ length: 3 }, (_, i) => `ACK ${i}\n`)], exit: { code: 0 }, after: { last: -1, total: 0, ledger: [] } },
  ];
  const planned = journalFor(dir, many);
  // Thirty ACKs of a 3-event script are not possible on the wire; the invariant only counts what it saw.
  const thirty = planned.flatMap((e) =>
    e.type === 'wire' && e.kind === 'recv' && e.line === 'ACK 0\n'
      ? Array.from({ length: 30 }, (_, i): JournalEntry => ({ ...e, t: e.t + i, line: 'ACK 0\n' }))
      : [e],
  );
  const capped = checkLedgerRun(thirty).verdict.findings.filter((f) => f.code === 'broken-ack-promise');
  t.equal(capped.length, 11, 'ten findings, then one for the rest');
  t.match(capped[10]!.text, /incarnation 1 broke 22 more such promises/);
});

t.test('exits: hang killed at the deadline, wrong status, never started', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const hung = checkLedgerRun(journalFor(dir, [{ lines: ['RESUME -1\n'], exit: { code: null, signal: 'SIGKILL', killedBy: 'deadline' } }]));
  t.match(hung.reasons[0], /incarnation 1 did not end on its own: it was killed at the deadline \(60000 ms\)/);
  const bad = checkLedgerRun(journalFor(dir, [{ lines: ['RESUME -1\n'], exit: { code: 3 } }]));
  t.match(bad.reasons[0], /incarnation 1 exited with status 3, expected status 0/);
  const zero = checkLedgerRun(
    journalFor(dir, [
      { fault: 'raise@apply:1', expectExit: 'nonzero', lines: [], exit: { code: 0 } },
      { lines: [], exit: { code: 0 } },
    ]),
  );
  t.match(zero.reasons[0], /incarnation 1 exited with status 0, expected a non-zero status \(fault raise@apply:1 should have ended it\)/);
  const j = journalFor(dir, [{ lines: [], exit: { code: 0 } }]).filter((e) => e.type !== 'process-start' && e.type !== 'process-exit');
  t.match(checkLedgerRun(j).reasons[0], /incarnation 1 was never started/);
});

t.test('a control consumer that disagrees with the script is a harness error, not a consumer failure', async (t) => {
  const dir = t.testdir();
  makeStore(
    join(dir, 'control.db'),
    [[1, 12]],
    [
      [0, 7],
      [1, 5],
    ],
  );
  makeStore(join(dir, 'consumer.db'), [[2, 9]], GOOD);
  const v = checkLedgerRun(journalFor(dir, ACK_CRASH, ACK_CRASH_EXPECT));
  t.equal(v.pass, false);
  t.same(v.reasons, []);
  t.match(v.harnessErrors.join('\n'), /control consumer: cursor is last 1, expected 2/);
});

t.test('store reader: independent read-only connection, sees WAL content, reports unreadable files', async (t) => {
  const dir = t.testdir({ 'junk.db': 'this is not a database' });
  const path = join(dir, 'wal.db');
  const writer = new Database(path);
  writer.pragma('journal_mode = WAL');
  writer.exec('CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER, total INTEGER); CREATE TABLE ledger (seq INTEGER PRIMARY KEY, delta INTEGER)');
  writer.exec('INSERT INTO checkpoint VALUES (1, 0, 7); INSERT INTO ledger VALUES (0, 7)');
  // The writer stays open: committed rows live in the WAL, not yet in the main file.
  t.same(readStore(path), { exists: true, checkpoint: [{ id: 1, last: 0, total: 7 }], ledger: [[0, 7]] });
  writer.close();
  t.same(readStore(join(dir, 'none.db')), { exists: false, checkpoint: [], ledger: [] });
  t.match(readStore(join(dir, 'junk.db')), { exists: true, error: /not a database/ });
});

t.test('store reader: a ledger without a unique seq is read whole, each row with its own delta', async (t) => {
  const dir = t.testdir();
  const path = join(dir, 'loose.db');
  const writer = new Database(path);
  // A student's table with no primary key: seq repeats and rows sit out of order. The reader
  // reads seqs and deltas in two queries; both must pair up row by row.
  writer.exec('CREATE TABLE checkpoint (id INTEGER PRIMARY KEY, last INTEGER, total INTEGER); CREATE TABLE ledger (seq INTEGER, delta INTEGER)');
  writer.exec("INSERT INTO checkpoint VALUES (1, 2, 0); INSERT INTO ledger VALUES (2, 5), (0, 9), (1, -3), (0, 4), (1, -3), ('x', 1)");
  writer.close();
  t.same(readStore(path).ledger, [
    [0, 4],
    [0, 9],
    [1, -3],
    [1, -3],
    [2, 5],
    ['x', 1],
  ]);
});

t.test('journal: written line by line, a cut-off last line is ignored, a bad middle line names file and line', async (t) => {
  const dir = t.testdir();
  const path = join(dir, 'journal.jsonl');
  const w = new JournalWriter(path, () => 1.23456);
  w.write({ type: 'harness-error', message: 'a' });
  w.write({ type: 'run-end', status: 'error' });
  w.close();
  w.write({ type: 'harness-error', message: 'after close is dropped' });
  t.same(readJournal(path), [
    { t: 1.235, type: 'harness-error', message: 'a' },
    { t: 1.235, type: 'run-end', status: 'error' },
  ]);
  writeFileSync(path, '{"t":1,"type":"run-end","status":"pass"}\n{"t":2,"ty');
  t.equal(readJournal(path).length, 1, 'interrupted write tolerated');
  writeFileSync(path, '{"t":1,"type":"x"}\nnull\n');
  t.throws(() => readJournal(path), { message: /:2: not a journal entry \(an object with a number `t` and a string `type`\): null/ }, 'a null line');
  writeFileSync(path, '{"t":1,"type":"x"}\nnot json\n{"t":2,"type":"x"}\n');
  t.throws(() => readJournal(path), new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2: not a JSON journal entry`));
});

t.test('summary renders from a journal, complete or interrupted', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 14]], ledger: GOOD });
  const journal = journalFor(dir, ACK_CRASH, ACK_CRASH_EXPECT);
  const { verdict } = checkLedgerRun(journal);
  const md = renderSummary([
    {
      t: 0,
      type: 'run-start',
      schema: 2,
      protocol: 'ledger',
      runId: 'r1',
      scenario: { name: 'ack-crash', file: 'f', description: 'Proves things.' },
      harnessVersion: '0',
      node: 'v20',
      platform: 'linux',
      cwd: '/',
      consumerCommand: 'c',
      controlCommand: 'c',
    },
    ...journal,
    { t: 9, type: 'verdict', verdict },
    { t: 10, type: 'run-end', status: 'fail' },
  ]);
  t.match(md, /^# chaoslab: ack-crash — FAIL/);
  t.match(md, /## Why\n\n- seq 1 applied twice/);
  t.match(md, /\| \*\*consumer under test\*\* \| 2 \| 14 \| 3 \|/);
  t.match(md, /\| #1 \| exit@ack:1 \| [^|]+ \| -1 \| 0 \| exit 86 at /);
  t.same(
    findingTexts(verdict),
    [...verdict.harnessErrors, ...verdict.findings].map((f) => f.text),
  );
  t.match(renderSummary(journal.slice(0, 3)), /did not finish: this summary was rendered from a partial journal/);
});

t.test('mid-run reads: an inconsistent committed state is reported with the moment it was seen', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const splitCommit: Inc[] = [
    {
      fault: 'exit@apply:1',
      lines: ['RESUME -1\n', 'ACK 0\n'],
      exit: { code: 86 },
      after: {
        last: 0,
        total: 12,
        ledger: [
          [0, 7],
          [1, 5],
        ],
      },
    },
    { lines: ['RESUME 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 }, after: { last: 2, total: 9, ledger: GOOD } },
  ];
  const v = checkLedgerRun(journalFor(dir, splitCommit));
  t.match(v.reasons[0], /^when incarnation 1 ended, an independent read found seq 1 in the ledger beyond the cursor \(last 0\)/);
  const skipped: Inc[] = [
    {
      lines: ['RESUME -1\n'],
      exit: { code: 0 },
      after: {
        last: 2,
        total: 4,
        ledger: [
          [0, 7],
          [2, -3],
        ],
      },
    },
  ];
  t.match(checkLedgerRun(journalFor(dir, skipped)).reasons[0], /found seq 1 missing below the cursor \(last 2\)/);
  const unreadable = journalFor(dir, [{ lines: ['RESUME -1\n'], exit: { code: 0 } }]);
  unreadable.push({
    t: 99,
    type: 'store-read',
    role: 'consumer',
    incarnation: 1,
    when: 'after-exit',
    db: 'x',
    store: { exists: true, error: 'database is locked', checkpoint: [], ledger: [] },
  });
  const u = checkLedgerRun(unreadable);
  t.match(u.reasons[0], /when incarnation 1 ended, its file could not be read through an independent connection \(database is locked\)/);
  t.notMatch(u.reasons.join('\n'), /broken promise/, 'an unreadable file is not mistaken for an empty one');
});

/** Incarnation 1's store as the harness read it while the process was stopped at its hook. */
const readWhileStopped = (store: object): JournalEntry => ({
  t: 50,
  type: 'store-read',
  role: 'consumer',
  incarnation: 1,
  when: 'while-stopped',
  db: 'x',
  store,
});

t.test('a read while stopped inside the transaction of seq k must show the state before k', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const base = journalFor(dir, [{ fault: 'stop@apply:2', lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 } }]);
  const read = (last: number, total: number, ledger: [number, number][]) => readWhileStopped({ exists: true, checkpoint: [{ id: 1, last, total }], ledger });
  t.same(
    checkLedgerRun([
      ...base,
      read(1, 12, [
        [0, 7],
        [1, 5],
      ]),
    ]).reasons,
    [],
    'pre-event state: fine',
  );
  const leaked = checkLedgerRun([...base, read(1, 9, GOOD)]);
  t.match(
    leaked.reasons.join('\n'),
    /while incarnation 1 was stopped inside the transaction of seq 2, an independent read saw last 1 and a ledger row for seq 2/,
  );
});

t.test('a process stopped at ack:k must not have sent ACK k yet (ack-before-commit without an exit)', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const base = journalFor(dir, [{ fault: 'stop@ack:1', lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 } }]);
  const atT = (t: number): JournalEntry => ({
    ...readWhileStopped({ exists: true, checkpoint: [{ id: 1, last: 1, total: 12 }], ledger: GOOD.slice(0, 2) }),
    t,
  });
  // ACK 1 reached the publisher at 305 (journalFor: a line every 100 ms after the start).
  const early = checkLedgerRun([...base, atT(350)]);
  t.same(
    early.verdict.findings.map((f) => f.code),
    ['ack-before-commit'],
  );
  t.match(early.reasons, [/^incarnation 1 sent ACK 1 at 0\.305 s, before it stopped at fault point ack:1 \(read at 0\.350 s\), which comes after COMMIT/]);
  t.same(checkLedgerRun([...base, atT(250)]).reasons, [], 'the reference: ACK 1 only after the stop');
});

t.test('a read while stopped that finds the store locked says the process ran past its hook', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const base = journalFor(dir, [{ fault: 'stop@apply:2', lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 } }]);
  const read = (error: string) => readWhileStopped({ exists: true, error, checkpoint: [], ledger: [] });
  const locked = checkLedgerRun([...base, read('database is locked (SQLITE_BUSY)')]);
  t.match(locked.verdict.findings, [{ code: 'unreadable-mid-run' }]);
  t.match(
    locked.reasons[0],
    /^while incarnation 1 was stopped, the store was locked for writing \(a transaction still open\) while the process was stopped at its hook: the process ran past its hook/,
  );
  t.match(locked.reasons[0], /send SIGSTOP to the calling thread \(tgkill\)/, 'says how to stop at once');
  t.match(locked.reasons[0], /\[database is locked \(SQLITE_BUSY\)\]$/, "SQLite's own words kept as evidence");
  const corrupt = checkLedgerRun([...base, read('file is not a database (SQLITE_NOTADB)')]);
  t.match(
    corrupt.reasons[0],
    /was stopped, its file could not be read through an independent connection \(file is not a database/,
    'another error keeps its words',
  );
});

t.test('with several stop hooks, the i-th read while stopped is judged by the i-th stop the consumer meets', async (t) => {
  const dir = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const upTo = (last: number): [number, number][] => GOOD.slice(0, last + 1);
  const totalOf = (last: number) => upTo(last).reduce((a, [, d]) => a + d, 0);
  const read = (t: number, last: number, incarnation = 1): JournalEntry => ({
    t,
    type: 'store-read',
    role: 'consumer',
    incarnation,
    when: 'while-stopped',
    db: 'x',
    store: { exists: true, checkpoint: [{ id: 1, last, total: totalOf(last) }], ledger: upTo(last) },
  });
  const run = (fault: string, lasts: number[]) =>
    checkLedgerRun([
      ...journalFor(dir, [{ fault, lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 } }]),
      ...lasts.map((last, i) => read(50 + i, last)),
    ]);
  // Listed out of order, as a scenario may: met by seq, apply before ack.
  t.same(run('stop@apply:1,stop@apply:0', [-1, 0]).reasons, [], 'two apply stops, each read the state before its seq');
  t.same(run('stop@ack:1,stop@apply:1', [0, 1]).reasons, [], 'apply then ack of the same seq: before it, then with it committed');
  t.same(run('stop@apply:2,stop@apply:2', [1, 1]).reasons, [], 'an item listed twice fires twice');
  const shifted = run('stop@apply:0,stop@apply:1', [-1, 1]);
  t.match(shifted.reasons, [
    /^while incarnation 1 was stopped inside the transaction of seq 1, an independent read saw last 1 and a ledger row for seq 1; it must see the state before seq 1 \(last 0\)/,
  ]);
  t.same(
    shifted.verdict.findings.map((f) => f.subject?.seqs),
    [[1]],
    "the finding names the second stop's seq",
  );
  const early = run('stop@ack:1', [0]);
  t.same(
    early.verdict.findings.map((f) => f.code),
    ['commit-not-visible'],
  );
  t.match(early.reasons, [
    /after the COMMIT of seq 1 \(before its ACK\), an independent read saw last 0 and no row for seq 1; it must see seq 1 committed \(last 1\)/,
  ]);
  const restarted = checkLedgerRun([
    ...journalFor(dir, [
      { fault: 'exit@ack:0', lines: ['RESUME -1\n'], exit: { code: 86 }, after: { last: 0, total: totalOf(0), ledger: upTo(0) } },
      { fault: 'stop@apply:0,stop@apply:2', lines: ['RESUME 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 0 } },
    ]),
    read(60, 1, 2),
  ]);
  t.same(restarted.reasons, [], 'a stop at or below the RESUME never fires: the one read belongs to seq 2');
});

t.test('closed_by, final_last, harness errors in the journal, restarts beyond the listed incarnations', async (t) => {
  const dir = setup(t, {
    checkpoint: [[1, 12]],
    ledger: [
      [0, 7],
      [1, 5],
    ],
  });
  const j = journalFor(
    dir,
    [{ lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n'], exit: { code: 7 }, expectExit: 'nonzero' }],
    [{ incarnation: 1, resume: -1, acks: [0, 1], closedBy: 'consumer' }],
  );
  (j[0] as { plan: { lab: { expect: { finalLast?: number } } } }).plan.lab.expect.finalLast = 1;
  j.push({ t: 60, type: 'wire', stream: 'consumer', conn: 1, kind: 'close', by: 'publisher', reason: 'ack deadline' });
  const v = checkLedgerRun(j);
  t.match(v.reasons, [/incarnation 1's connection was closed by the publisher \(ack deadline\), but the consumer must close it/]);
  const reset = [...j.slice(0, -1), { t: 60, type: 'wire', stream: 'consumer', conn: 1, kind: 'close', by: 'reset', reason: 'ECONNRESET' } as JournalEntry];
  t.same(checkLedgerRun(reset).reasons, [], 'a reset is the consumer hanging up (the contract allows it)');
  t.equal(v.expected.last, 1, 'the expected state is the prefix up to final_last');
  const rows = v.verdict.state.rows;
  t.same(
    rows.map((r) => [r.label, r.cells[0], r.ok]),
    [
      ['expected (from the script)', 1, undefined],
      ['consumer under test', 1, true],
      ['control consumer', 2, undefined],
    ],
    'the consumer is judged against the prefix, the control against the whole script: neither row is wrong (the control, right, is neutral)',
  );
  t.match(
    v.verdict.state.note,
    /expects the consumer under test to stop at seq 1; the always-connected control consumer is judged against the whole script \(last 2/,
  );
  j.push({ t: 61, type: 'harness-error', message: 'fault cut could not be applied' });
  t.same(checkLedgerRun(j).harnessErrors, ['harness: fault cut could not be applied']);
  // A restart the scenario did not list may end either way; it is still an incarnation.
  const restarted = journalFor(dir, [
    { lines: ['RESUME -1\n'], exit: { code: 6 } },
    { lines: ['RESUME 1\n'], exit: { code: 6 } },
  ]);
  const plan = (restarted[0] as { plan: { lab: LedgerPlan } }).plan.lab;
  plan.consumer.incarnations = [{ expectExit: 'any' }];
  plan.expect.finalLast = 1;
  const r = checkLedgerRun(restarted);
  t.equal(r.incarnations.length, 2);
  t.same(r.reasons, []);
});

/** Puts publisher lines on connection `conn` right after the consumer line `after` (journal order is what counts). */
function withSends(journal: JournalEntry[], conn: number, after: string, lines: string[]): JournalEntry[] {
  const at = journal.findIndex((e) => e.type === 'wire' && e.conn === conn && e.kind === 'recv' && e.line === after);
  const t0 = journal[at]!.t;
  const sends = lines.map((line, i) => ({ t: t0 + 1 + i, type: 'wire', stream: 'consumer', conn, kind: 'send', line }) as JournalEntry);
  return [...journal.slice(0, at + 1), ...sends, ...journal.slice(at + 1)];
}

const SIX: [number, number][] = [7, 5, -3, 4, 2, -6].map((d, s) => [s, d]);
const MALFORMED_EXPECT = [
  { incarnation: 1, resume: -1, acks: [0, 1, 2], closedBy: 'consumer' as const },
  { incarnation: 2, resume: 2, acks: [3, 4, 5] },
];
/** malformed-plus-sign, with incarnation 1 doing `lines` after the broken line and ending with `close` and `exit`. */
function plusSign(t: Test, after: string[], close: 'publisher' | 'reset', code: number, broken = 'EVENT 3 +4\n', fileAfter?: Inc['after']) {
  const dir = t.testdir();
  makeStore(join(dir, 'control.db'), [[5, 9]], SIX);
  makeStore(join(dir, 'consumer.db'), [[5, 9]], SIX);
  let j = journalFor(
    dir,
    [
      { lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n', ...after], exit: { code }, expectExit: 'nonzero', ...(fileAfter ? { after: fileAfter } : {}) },
      { lines: ['RESUME 2\n', 'ACK 3\n', 'ACK 4\n', 'ACK 5\n'], exit: { code: 0 } },
    ],
    MALFORMED_EXPECT,
  );
  const plan = (j[0] as { plan: { lab: LedgerPlan } }).plan.lab;
  plan.events = SIX.map(([seq, delta]) => ({ seq, delta }));
  j = withSends(j, 1, 'ACK 2\n', broken.endsWith('\n') ? [broken, 'EVENT 3 4\n', 'EVENT 4 2\n', 'EVENT 5 -6\n'] : [broken]);
  const exitAt = j.findIndex((e) => e.type === 'process-exit');
  j.splice(exitAt, 0, {
    t: j[exitAt]!.t,
    type: 'wire',
    stream: 'consumer',
    conn: 1,
    kind: 'close',
    by: close,
    reason: close === 'reset' ? 'ECONNRESET' : 'all events acknowledged',
  });
  return checkLedgerRun(j);
}

t.test('a malformed line: the verdict leads with what the consumer did with it, each fact once', async (t) => {
  // The lenient parser: applies EVENT 3 +4 (ACK 3), then takes the real EVENT 3 4 as a duplicate (ACK 3 again).
  const lenient = plusSign(t, ['ACK 3\n', 'ACK 3\n', 'ACK 4\n', 'ACK 5\n'], 'publisher', 0);
  t.equal(lenient.verdict.findings[0]!.code, 'malformed-applied');
  t.match(
    lenient.verdict.headline,
    /^incarnation 1 accepted the malformed line `EVENT 3 \+4` \(a "\+" sign, which the grammar forbids\): it acknowledged it \(ACK 3\) instead of rejecting it — on a malformed line a consumer applies and acknowledges nothing from it on, closes the connection at once and exits non-zero \(CONTRACT\.md §3\)$/,
  );
  t.same(lenient.verdict.findings[0]!.subject, { process: { role: 'consumer', incarnation: 1 }, t: lenient.verdict.findings[0]!.subject!.t, seqs: [3] });
  t.equal(new Set(lenient.reasons).size, lenient.reasons.length, 'no finding is listed twice');
  t.match(
    lenient.reasons.filter((r) => /sent ACK 3/.test(r)),
    [/^incarnation 1 sent ACK 3 at \d+\.\d{3} s and again at \d+\.\d{3} s, which it must not send$/],
    'the ACK sent twice is one finding',
  );
  t.notOk(
    lenient.reasons.some((r) => /closed by the publisher/.test(r)),
    'who closed is part of the malformed-line finding, not said again',
  );
  t.ok(lenient.reasons.some((r) => /exited with status 0, expected a non-zero status/.test(r)));

  // Skips the bad line and reads on: the later EVENT 3 4 is applied and acknowledged once.
  const readOn = plusSign(t, ['ACK 3\n', 'ACK 4\n', 'ACK 5\n'], 'publisher', 0);
  t.equal(readOn.verdict.findings[0]!.code, 'malformed-read-on');
  t.match(
    readOn.verdict.headline,
    /^incarnation 1 read on past the malformed line `EVENT 3 \+4` .*: it acknowledged later lines on the same connection \(ACK 3, 4, 5\) instead of closing it at once/,
  );

  // Acknowledges nothing, but waits for the publisher to hang up.
  const waits = plusSign(t, [], 'publisher', 2);
  t.equal(waits.verdict.findings[0]!.code, 'malformed-not-closed');
  t.match(
    waits.verdict.headline,
    /^incarnation 1 did not close the connection after the malformed line `EVENT 3 \+4` .*: the publisher closed it \(all events acknowledged\)/,
  );

  // The contract's way: close at once (a reset is fine), acknowledge nothing, exit non-zero.
  const good = plusSign(t, [], 'reset', 2);
  t.same(good.reasons, []);
  t.equal(good.pass, true);

  // EVENT 3 -0 applied as (3, 0): the real EVENT 3 4 is then a conflict, so ACK 3 came once; the file tells.
  const minusZero = (ledger: [number, number][]) =>
    plusSign(t, ['ACK 3\n'], 'reset', 4, 'EVENT 3 -0\n', { last: 3, total: ledger.reduce((sum, [, d]) => sum + d, 0), ledger });
  t.match(
    minusZero([...GOOD, [3, 0]]).verdict.headline,
    /^incarnation 1 accepted the malformed line `EVENT 3 -0` \(a "-0", which the grammar forbids\): it acknowledged it \(ACK 3\)/,
  );
  t.match(
    minusZero([...GOOD, [3, 4]]).verdict.headline,
    /^incarnation 1 read on past the malformed line `EVENT 3 -0`/,
    'the file holds the script’s delta: a later line was applied',
  );

  // ACKs of EVENTs sent before the broken line (still in flight) may rightly come after it.
  const inFlight = (() => {
    const dir = t.testdir();
    makeStore(join(dir, 'control.db'), [[5, 9]], SIX);
    makeStore(join(dir, 'consumer.db'), [[5, 9]], SIX);
    let j = journalFor(
      dir,
      [
        { lines: ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 2 }, expectExit: 'nonzero' },
        { lines: ['RESUME 2\n', 'ACK 3\n', 'ACK 4\n', 'ACK 5\n'], exit: { code: 0 } },
      ],
      MALFORMED_EXPECT,
    );
    (j[0] as { plan: { lab: LedgerPlan } }).plan.lab.events = SIX.map(([seq, delta]) => ({ seq, delta }));
    j = withSends(j, 1, 'RESUME -1\n', ['EVENT 0 7\n', 'EVENT 1 5\n', 'EVENT 2 -3\n', 'EVENT 3 +4\n']);
    return checkLedgerRun(j);
  })();
  t.same(inFlight.reasons, [], 'ACK 0, 1, 2 after the broken line answer lines sent before it');

  // A short fragment at the close is not a line until the stream ends: only the publisher can close then.
  const fragment = plusSign(t, [], 'publisher', 2, 'EVENT 3 4');
  t.notOk(fragment.verdict.findings.some((f) => f.code.startsWith('malformed-')));
  const oversized = plusSign(t, [], 'publisher', 2, 'A'.repeat(100));
  t.match(
    oversized.verdict.headline,
    /^incarnation 1 did not close the connection after the malformed line `AAAA.*…` \(longer than 64 bytes, which the grammar forbids\)/,
  );
});

/** bad-environment-port: one process given CHAOSLAB_PORT=not-a-port, which did `lines` (none: it never connected). */
function badPort(t: Test, lines: string[], exit: Inc['exit'], consumerStore?: [number, number][]) {
  const dir = t.testdir();
  makeStore(join(dir, 'control.db'), [[2, 9]], GOOD);
  if (consumerStore) makeStore(join(dir, 'consumer.db'), [[consumerStore.length - 1, consumerStore.reduce((s, [, d]) => s + d, 0)]], consumerStore);
  let j = journalFor(dir, [{ lines, exit, expectExit: 'nonzero' }]);
  (j[0] as { plan: { lab: LedgerPlan } }).plan.lab.consumer.badEnvironment = { set: { CHAOSLAB_PORT: 'not-a-port' }, unset: [] };
  if (lines.length === 0) j = j.filter((e) => !(e.type === 'wire' && e.kind === 'open'));
  return checkLedgerRun(j);
}

t.test('a bad environment: exit 64 at once, nothing connected, nothing written', async (t) => {
  const good = badPort(t, [], { code: 64 });
  t.same(good.reasons, []);
  t.equal(good.pass, true);
  t.equal(good.verdict.headline, 'the consumer exited 64 when CHAOSLAB_PORT was "not-a-port", without connecting or writing its store');
  t.same(
    good.verdict.state.rows.map((r) => [r.label, r.ok]),
    [
      ['expected (from the script)', undefined],
      ['consumer under test', true],
      ['control consumer', undefined],
    ],
    'no file is what a consumer that exits 64 leaves',
  );
  t.match(good.verdict.state.note, /must exit 64 before opening its store/);
  t.same(good.verdict.diff, []);

  const one = badPort(t, [], { code: 1 });
  t.same(one.reasons, [
    'the consumer exited 1 instead of 64 when CHAOSLAB_PORT was "not-a-port": a consumer given a missing or invalid CHAOSLAB_* variable must name it on stderr and exit 64 before connecting',
  ]);
  t.same(one.verdict.diff, ['exit: exit 1, expected 64']);

  const connected = badPort(t, ['RESUME -1\n', 'ACK 0\n', 'ACK 1\n', 'ACK 2\n'], { code: 0 }, GOOD);
  t.match(connected.reasons, [
    /^the consumer exited 0 instead of 64 when CHAOSLAB_PORT was "not-a-port"/,
    /^the consumer connected anyway when CHAOSLAB_PORT was "not-a-port" \(one connection, RESUME -1, 3 ACKs\)/,
    /^the consumer wrote to its store when CHAOSLAB_PORT was "not-a-port" \(last 2, total 9, 3 ledger rows\)/,
  ]);
  t.same(connected.verdict.diff, ['exit: exit 0, expected 64', 'connections: at least one, expected none', 'store: written, expected untouched']);
  t.equal(connected.verdict.state.rows[1]!.ok, false, 'a written store differs from the untouched one expected');

  const hangs = badPort(t, [], { code: null, signal: 'SIGKILL', killedBy: 'deadline' });
  t.match(hangs.reasons, [/^the consumer was still running after 60 s when CHAOSLAB_PORT was "not-a-port", and was killed at the deadline/]);
  const killed = badPort(t, [], { code: null, signal: 'SIGSEGV' });
  t.match(killed.reasons, [/^the consumer was killed by SIGSEGV instead of 64 when/]);
});

t.test('bad environment values and their words', async (t) => {
  const cases: [string, string, string | undefined][] = [
    ['CHAOSLAB_PORT', 'not-a-port', 'not a TCP port 1..65535'],
    ['CHAOSLAB_PORT', '0', 'not a TCP port 1..65535'],
    ['CHAOSLAB_PORT', '65536', 'not a TCP port 1..65535'],
    ['CHAOSLAB_PORT', '41234', undefined],
    ['CHAOSLAB_TIMEOUT_MS', '0', 'not a positive number of milliseconds'],
    ['CHAOSLAB_TIMEOUT_MS', '2147483648', 'not a positive number of milliseconds'],
    ['CHAOSLAB_TIMEOUT_MS', '3000', undefined],
    ['CHAOSLAB_FAULT', '', 'set but empty'],
    ['CHAOSLAB_FAULT', 'exit@ack', 'not a fault plan'],
    ['CHAOSLAB_FAULT', 'exit@ack:1', undefined],
    ['CHAOSLAB_HOST', '', 'empty'],
    ['CHAOSLAB_DB', 'x.db', undefined],
  ];
  for (const [name, value, why] of cases) t.equal(badValue(name, value), why, `${name}=${JSON.stringify(value)}`);
  t.equal(describeBadEnvironment({ set: { CHAOSLAB_PORT: '0' }, unset: ['CHAOSLAB_DB'] }), 'CHAOSLAB_PORT was "0" and CHAOSLAB_DB was unset');
  t.equal(storeWritten({ exists: false, checkpoint: [], ledger: [] }), false);
  t.equal(storeWritten({ exists: true, checkpoint: [{ id: 1, last: -1, total: 0 }], ledger: [] }), false, 'an opened, empty store is untouched');
  t.equal(storeWritten({ exists: true, checkpoint: [{ id: 1, last: 0, total: 7 }], ledger: [[0, 7]] }), true);
  t.same(consumerEnv({ CHAOSLAB_PORT: '1', CHAOSLAB_DB: 'x', CHAOSLAB_HOST: 'h' }, { set: { CHAOSLAB_PORT: 'no' }, unset: ['CHAOSLAB_DB'] }), {
    CHAOSLAB_PORT: 'no',
    CHAOSLAB_HOST: 'h',
  });
  const plain = { CHAOSLAB_PORT: '1' };
  t.equal(consumerEnv(plain, undefined), plain, 'no bad environment: the environment as it is');
});

t.test('the cause leads the verdict: a checkpoint reset on opening, a row committed without its cursor', async (t) => {
  // reset-on-open, as its killer ack-crash saw it: incarnation 2 reset the row, resumed from -1 and
  // failed on EVENT 0's row; the checker finds the inconsistent read and the RESUME first.
  const reset = setup(t, { checkpoint: [[-1, 0]], ledger: GOOD.slice(0, 2) });
  const resetRun: Inc[] = [ACK_CRASH[0]!, { lines: ['RESUME -1\n'], exit: { code: 1 }, after: { last: -1, total: 0, ledger: GOOD.slice(0, 2) } }];
  const v = checkLedgerRun(journalFor(reset, resetRun, ACK_CRASH_EXPECT));
  t.match(
    v.verdict.headline,
    /^the checkpoint row was reset on opening: incarnation 2 started from a file whose cursor was last 1, and when it ended the checkpoint said last -1, total 0 while the ledger still held seqs 0, 1 — .*INSERT OR IGNORE.*\(CONTRACT\.md §4\)$/,
  );
  t.equal(v.verdict.findings[0]!.code, 'checkpoint-reset');
  t.ok(
    v.reasons.slice(1).some((r) => /durable cursor was 1/.test(r)),
    'the RESUME is still reported, after its cause',
  );
  t.notOk(
    v.verdict.findings.some((f) => f.code === 'row-beyond-cursor'),
    'rows "beyond" a reset cursor are not blamed on a split transaction',
  );

  // split-commit: the row of seq 1 committed, its cursor not, when the apply hook ended the process.
  const split = setup(t, { checkpoint: [[2, 9]], ledger: GOOD });
  const splitRun: Inc[] = [
    {
      fault: 'exit@apply:1',
      expectExit: 'nonzero',
      lines: ['RESUME -1\n', 'ACK 0\n'],
      exit: { code: 86 },
      after: { last: 0, total: 7, ledger: GOOD.slice(0, 2) },
    },
    { lines: ['RESUME 0\n', 'ACK 1\n', 'ACK 2\n'], exit: { code: 1 }, after: { last: 0, total: 7, ledger: GOOD.slice(0, 2) } },
  ];
  const s = checkLedgerRun(journalFor(split, splitRun));
  t.equal(s.verdict.findings[0]!.code, 'row-beyond-cursor', s.verdict.findings.map((f) => f.code).join());
  t.match(
    s.verdict.headline,
    /^when incarnation 1 ended, an independent read found seq 1 in the ledger beyond the cursor \(last 0\): the event's row was committed without its cursor — .*one BEGIN IMMEDIATE transaction.*\(CONTRACT\.md §4\)$/,
  );
});
