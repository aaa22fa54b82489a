// §6 of make bench, in a process of its own so its peak memory is its own:
//   node bench/checker-child.mjs make|floor|check <dir> <rows>
// make: two stores of <rows> rows (control.db, consumer.db); floor: both read, nothing else;
// check: the ledger checker on them (reads, compares, invariants); check-wire: the same with the
// journal's wire lines (an EVENT and its ACK for every row, on one consumer connection), as a run
// of that many events journals them. Prints {seconds, maxRssMiB}.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { checkLedgerRun } from '../dist/harness/labs/ledger/check/checker.js';
import { readStore } from '../dist/harness/labs/ledger/check/store-reader.js';

const [mode, dir, rowsText] = process.argv.slice(2);
const rows = Number(rowsText);
const delta = (seq) => ((seq * 7919) % 21) - 10;
const db = (role) => join(dir, `${role}.db`);

function make(file) {
  const store = new Database(file);
  store.pragma('journal_mode = OFF');
  store.pragma('synchronous = OFF');
  store.exec(`CREATE TABLE checkpoint(id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL, total INTEGER NOT NULL);
              CREATE TABLE ledger(seq INTEGER PRIMARY KEY, delta INTEGER NOT NULL);`);
  const insert = store.prepare('INSERT INTO ledger(seq, delta) VALUES (?, ?)');
  let total = 0;
  store.transaction(() => {
    for (let seq = 0; seq < rows; seq++) {
      insert.run(seq, delta(seq));
      total += delta(seq);
    }
    store.prepare('INSERT INTO checkpoint VALUES (1, ?, ?)').run(rows - 1, total);
  })();
  store.close();
}

let t0 = process.hrtime.bigint();
if (mode === 'make') for (const role of ['control', 'consumer']) make(db(role));
else if (mode === 'floor') for (const role of ['control', 'consumer']) readStore(db(role), { writerGone: true });
else {
  const events = Array.from({ length: rows }, (_, seq) => ({ seq, delta: delta(seq) }));
  const plan = {
    file: join(dir, 'big.yaml'),
    source: '',
    name: 'big',
    description: 'two stores of a million rows',
    protocol: 'ledger',
    timeoutMs: 2000,
    deadlineMs: 600000,
    timeScale: 1,
    faults: [],
    lab: {
      events,
      eventSource: { kind: 'generated', count: rows, seed: 1, min: -10, max: 10 },
      publisher: { window: 16, retentionStart: 0, redeliverUnacked: false, ackDeadlineMs: 5000, forgetAcked: false, retentionMoves: [], misbehaviour: [] },
      consumer: { incarnations: [{ expectExit: 'zero' }] },
      expect: {},
    },
  };
  let journal = [
    { t: 0, type: 'stream', role: 'control', stream: 'control', host: '127.0.0.1', port: 1, db: db('control') },
    { t: 0, type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 2, db: db('consumer') },
    { t: 1, type: 'process-start', role: 'control', incarnation: 1, pid: 1, command: 'control', env: {} },
    { t: 1, type: 'process-start', role: 'consumer', incarnation: 1, pid: 2, command: 'consumer', env: {} },
    {
      t: 2,
      type: 'process-exit',
      role: 'consumer',
      incarnation: 1,
      code: 0,
      signal: null,
      durationMs: 1,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
    },
    {
      t: 2,
      type: 'process-exit',
      role: 'control',
      incarnation: 1,
      code: 0,
      signal: null,
      durationMs: 1,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
    },
  ];
  if (mode === 'check-wire') {
    // Before the exits: the stream's one connection, owned by incarnation 1, every EVENT and its ACK.
    const wire = [{ t: 1, type: 'wire', stream: 'consumer', conn: 1, kind: 'open', owner: { role: 'consumer', incarnation: 1 } }];
    wire.push({ t: 1, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'RESUME -1\n' });
    for (const { seq, delta: d } of events)
      wire.push(
        { t: 1 + seq / rows, type: 'wire', stream: 'consumer', conn: 1, kind: 'send', line: `EVENT ${seq} ${d}\n` },
        { t: 1 + (seq + 0.5) / rows, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: `ACK ${seq}\n` },
      );
    wire.push({ t: 2, type: 'wire', stream: 'consumer', conn: 1, kind: 'close', by: 'publisher', reason: 'all events acknowledged' });
    journal = [...journal.slice(0, 4), ...wire, ...journal.slice(4)];
  }
  // The clock starts once the script and the journal are built and the script was read once: a
  // run has them in memory (loaded with the scenario, written while it streamed, every event
  // sent) before its check starts. A million objects' first reading costs 0.13 s here.
  let sent = 0;
  for (const e of events) sent += e.delta;
  if (Number.isNaN(sent)) throw new Error('unreachable'); // the sum is used, so the loop stays
  t0 = process.hrtime.bigint();
  const verdict = checkLedgerRun(journal, plan, (_role, file) => readStore(file, { writerGone: true }));
  if (process.env.BENCH_DEBUG) console.error(JSON.stringify(verdict).slice(0, 2000));
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ seconds, maxRssMiB: process.resourceUsage().maxRSS / 1024 }));
