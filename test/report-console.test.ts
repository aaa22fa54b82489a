// The live console reporter, fed journal entries as the runner would, with a fake clock and
// a fake output: line mode (not a terminal, --quiet), terminal mode (status line, progress
// bar), the end-of-scenario explanation and the final table.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { JournalEntry } from '../harness/journal.js';
import { createConsoleReporter } from '../harness/report/console.js';

type Entry = Record<string, unknown>;

function failingRun(): JournalEntry[] {
  const plan = {
    events: [
      { seq: 0, delta: 7 },
      { seq: 1, delta: 5 },
      { seq: 2, delta: -3 },
    ],
    consumer: { incarnations: [{ fault: 'exit@ack:1', expectExit: 'nonzero' }, { expectExit: 'zero' }] },
    expect: { transcript: [{ incarnation: 1, resume: -1, acks: [0] }] },
  };
  const full = [
    [0, 7],
    [1, 5],
    [2, -3],
  ];
  const e: Entry[] = [];
  let t = 0;
  const w = (x: Entry) => e.push({ t: (t += 100), ...x });
  w({
    type: 'run-start',
    schema: 1,
    runId: '20260101-000000-ack-crash-abcd',
    scenario: { name: 'ack-crash', file: 'a.yaml', description: 'd' },
    harnessVersion: '0',
    node: 'v20',
    platform: 'linux',
    cwd: '/',
    consumerCommand: 'c',
    controlCommand: 'c',
  });
  w({ type: 'scenario', source: 'name: ack-crash\n', plan });
  w({ type: 'toxiproxy', url: 'http://127.0.0.1:8474', version: '2.12.0', owned: true });
  w({ type: 'stream', role: 'consumer', stream: 'consumer', host: 'h', port: 1, db: 'c.db' });
  w({ type: 'proxy', action: 'create', name: 'p' });
  w({ type: 'process-start', role: 'consumer', incarnation: 1, pid: 41, command: 'c', env: { CHAOSLAB_FAULT: 'exit@ack:1' } });
  w({ type: 'fault', action: 'apply', name: 'slow-link', kind: 'latency', detail: 'latency=100ms' });
  w({ type: 'wire', stream: 'consumer', conn: 1, kind: 'open', tag: 'incarnation 1' });
  w({ type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'RESUME -1\n' });
  for (const [s, d] of full) w({ type: 'wire', stream: 'consumer', conn: 1, kind: 'send', line: `EVENT ${s} ${d}\n` });
  w({ type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'ACK 0\n' });
  w({ type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'ACK 1\n' });
  w({
    type: 'process-exit',
    role: 'consumer',
    incarnation: 1,
    code: 86,
    signal: null,
    durationMs: 700,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  w({
    type: 'store-read',
    role: 'consumer',
    incarnation: 1,
    when: 'after-exit',
    db: 'c.db',
    store: { exists: true, checkpoint: [{ id: 1, last: 1, total: 12 }], ledger: full.slice(0, 2) },
  });
  w({ type: 'process-start', role: 'consumer', incarnation: 2, pid: 42, command: 'c', env: {} });
  return e as unknown as JournalEntry[];
}

function ending(pass: boolean): JournalEntry[] {
  const full = [
    [0, 7],
    [1, 5],
    [2, -3],
  ];
  const reasons = pass
    ? []
    : ['incarnation 1 sent ACK 1 at 1.400 s, which it must not send: the process was ended at fault point ack:1', 'incarnation 2 never sent ACK 1'];
  return [
    { t: 1600, type: 'wire', stream: 'consumer', conn: 2, kind: 'open', tag: 'incarnation 2' },
    { t: 1700, type: 'fault', action: 'lift', name: 'slow-link', kind: 'latency' },
    { t: 1800, type: 'wire', stream: 'consumer', conn: 2, kind: 'recv', line: 'ACK 2\n' },
    {
      t: 1900,
      type: 'process-exit',
      role: 'consumer',
      incarnation: 2,
      code: 0,
      signal: null,
      durationMs: 300,
      stdoutTail: '',
      stderrTail: '',
      stdoutBytes: 0,
      stderrBytes: 0,
    },
    {
      t: 2000,
      type: 'store-read',
      role: 'consumer',
      when: 'final',
      db: 'c.db',
      store: { exists: true, checkpoint: [{ id: 1, last: 2, total: 9 }], ledger: full },
    },
    { t: 2100, type: 'verdict', pass, reasons, details: {} },
    { t: 2412, type: 'run-end', status: pass ? 'pass' : 'fail' },
  ] as unknown as JournalEntry[];
}

function sink(columns?: number) {
  const out = {
    text: '',
    columns,
    write: (s: string) => {
      out.text += s;
      return true;
    },
  };
  return out;
}

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function runFolder(dir: string, name: string, journal: JournalEntry[]): string {
  const runDir = join(dir, name);
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'journal.jsonl'), journal.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return runDir;
}

t.test('line mode (not a terminal): a line per milestone, a "still" line after a quiet second, no escapes', async (t) => {
  const out = sink();
  const c = clock();
  const r = createConsoleReporter({ tty: false, quiet: false, out, now: c.now, interval: false, cwd: '/' });
  r.scenarioStarted('ack-crash');
  for (const e of failingRun()) {
    c.advance(20);
    r.onJournal(e);
  }
  t.match(out.text, /ack-crash \[0\.\d{3} s\] toxiproxy 2\.12\.0 at http:\/\/127\.0\.0\.1:8474\n/);
  t.match(out.text, /consumer #1 started \(pid 41, fault exit@ack:1\)\n/);
  t.match(out.text, /fault slow-link \(latency\) applied latency=100ms\n/);
  t.match(out.text, /consumer #1 exited 86 after 0\.700 s\n/);
  t.match(out.text, /consumer #1's file: last 1, total 12, 2 rows\n/);
  t.match(out.text, /consumer #2 started \(pid 42\)\n/);

  const before = out.text;
  c.advance(400);
  r.tick();
  t.equal(out.text, before, 'nothing within a second of the last line');
  c.advance(700);
  r.tick();
  t.match(out.text.slice(before.length), /^ {2}ack-crash \[\d\.\d{3} s\] still consumer #2 running · fault slow-link active · 2\/3 committed\n$/);
  c.advance(1000);
  r.tick();
  t.equal(out.text.split('still').length - 1, 2, 'and again each further second');

  for (const e of ending(false)) r.onJournal(e);
  t.match(out.text, /fault slow-link \(latency\) lifted\n/);
  t.notMatch(out.text, /\x1b|\r/, 'plain text only');
  r.close();
});

t.test('the end of a failing scenario: the explanation first, then the smallest diff; then the table and where the report is', async (t) => {
  const dir = t.testdir();
  const runDir = runFolder(dir, '20260101-000000-ack-crash-abcd', [...failingRun(), ...ending(false)]);
  writeFileSync(join(runDir, 'report.html'), '');
  symlinkSync('20260101-000000-ack-crash-abcd', join(dir, 'latest'));
  const out = sink(100);
  const r = createConsoleReporter({ tty: false, quiet: true, out, interval: false, cwd: dir });
  r.scenarioStarted('ack-crash');
  for (const e of failingRun()) r.onJournal(e);
  r.tick();
  t.equal(out.text, '', '--quiet: nothing while it runs');
  const outcome = r.scenarioFinished('ack-crash', { status: 'fail', runDir });
  t.match(outcome, { name: 'ack-crash', status: 'fail', durationMs: 2412, reason: /^incarnation 1 sent ACK 1 at 1\.400 s/ });
  const text = out.text;
  t.match(
    text,
    /\nFAIL {2}ack-crash {2}\(2\.412 s\)\n {2}Why: incarnation 1 sent ACK 1 at 1\.400 s, which it must not send: the process was ended at fault point ack:1\n {2}- incarnation 2 never sent ACK 1\n {2}Smallest diff:\n {4}incarnation 1: ACKs 0, 1 — expected 0 \(extra: ACK 1 at 1\.400 s\)\n/,
  );
  r.finalTable();
  const table = out.text.slice(text.length).split('\n');
  t.match(table[1], /^scenario {3}verdict {5}time {2}reason$/);
  t.match(table[2], /^ack-crash {2}FAIL {5}2\.412 s {2}incarnation 1 sent ACK 1 at 1\.400 s, which it must not send: the pro…$/, 'one line, cut to the width');
  t.ok(table[2]!.length <= 100);
  t.equal(table[3], `report: 20260101-000000-ack-crash-abcd/report.html  (also latest/report.html)`);
  r.close();
});

t.test('terminal mode: one status line redrawn in place, a progress bar for several scenarios, colour', async (t) => {
  const dir = t.testdir();
  const out = sink(120);
  const c = clock();
  const r = createConsoleReporter({ tty: true, quiet: false, out, now: c.now, interval: false, color: true, cwd: dir });
  r.scenarioStarted('happy-path', { index: 0, total: 2 });
  const pass = runFolder(dir, 'r1', [...failingRun(), ...ending(true)]);
  for (const e of failingRun()) r.onJournal(e);
  c.advance(1500);
  r.tick();
  const status = out.text.slice(out.text.lastIndexOf('\r\x1b[2K'));
  t.match(status, /^\r\x1b\[2K. \[░{16}\] 0\/2 done · happy-path \d+\.\d s · consumer #2 running · fault slow-link active · 2\/3 committed$/);
  r.scenarioFinished('happy-path', { status: 'pass', runDir: pass });
  t.match(out.text, /\x1b\[32mPASS\x1b\[0m {2}happy-path/);

  r.scenarioStarted('ack-crash', { index: 1, total: 2 });
  r.tick();
  t.match(out.text.slice(out.text.lastIndexOf('\r\x1b[2K')), /\[█{8}░{8}\] 1\/2 done · ack-crash/);
  r.onJournal({ t: 1, type: 'process-start', role: 'consumer', incarnation: 1, pid: 9, command: 'c', env: {} } as JournalEntry);
  t.match(out.text, /\r\x1b\[2K {2}ack-crash \[\d\.\d{3} s\] consumer #1 started \(pid 9\)\n\r\x1b\[2K/, 'a milestone clears the status line, prints, redraws');
  const fail = runFolder(dir, 'r2', [...failingRun(), ...ending(false)]);
  r.scenarioFinished('ack-crash', { status: 'fail', runDir: fail });
  r.finalTable();
  t.match(out.text, /1\/2 passed\nreports:\n {2}happy-path {2}r1\/report\.html\n {2}ack-crash {3}r2\/report\.html\n$/);
  t.match(out.text, /\x1b\[31mFAIL/);
  r.close();
});

t.test('unknown entries, a missing journal, a harness error', async (t) => {
  const dir = t.testdir();
  const out = sink();
  const r = createConsoleReporter({ tty: false, quiet: false, out, interval: false, cwd: dir });
  r.scenarioStarted('x');
  for (let i = 0; i < 5; i++) r.onJournal({ t: i, type: 'step', step: `phase ${i}` } as unknown as JournalEntry);
  t.equal(out.text.split('step phase').length - 1, 3, 'an unknown entry type is shown, at most three times');
  r.onJournal({ t: 8, type: 'fault', action: 'apply', name: 'kill-1', kind: 'signal', detail: 'SIGKILL to consumer incarnation 1 (pid 5)' } as JournalEntry);
  t.match(out.text, /fault kill-1 \(signal\): SIGKILL to consumer incarnation 1 \(pid 5\)\n/, 'a signal is reported once, not as an active fault');
  r.onJournal({
    t: 8.5,
    type: 'process-exit',
    role: 'consumer',
    incarnation: 3,
    code: null,
    signal: 'SIGKILL',
    killedBy: 'deadline',
    durationMs: 60000,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  } as JournalEntry);
  t.match(out.text, /consumer #3 killed at the deadline after 60\.000 s\n/);
  r.onJournal({ t: 9, type: 'harness-error', message: 'toxiproxy went away' } as JournalEntry);
  t.match(out.text, /harness error: toxiproxy went away\n/);
  r.onJournal({ t: 10, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'HELLO\u0007\n', error: 'unknown command' } as JournalEntry);
  t.match(out.text, /consumer sent a line that breaks the grammar: HELLO\\x07 \(unknown command\)/);
  const o = r.scenarioFinished('x', { status: 'error', runDir: join(dir, 'nowhere'), error: 'could not start' });
  t.match(o, { status: 'error', reason: 'could not start' });
  t.match(out.text, /ERROR {2}x {2}\(\d+\.\d{3} s\)\n {2}Why: could not start/);
  r.finalTable([]);
  r.close();
});

t.test('several scenarios at once (--jobs): the status follows the newest one still running', async (t) => {
  const dir = t.testdir();
  const out = sink(160);
  const r = createConsoleReporter({ tty: true, quiet: false, out, interval: false, color: false, cwd: dir });
  r.scenarioStarted('a', { index: 0, total: 3 });
  r.scenarioStarted('b', { index: 1, total: 3 });
  r.tick();
  t.match(out.text.slice(out.text.lastIndexOf('\r\x1b[2K')), /\[░{16}\] 0\/3 done \(2 running\) · b /);
  r.scenarioFinished('b', { status: 'pass', runDir: runFolder(dir, 'b', [...failingRun(), ...ending(true)]) });
  r.tick();
  t.match(out.text.slice(out.text.lastIndexOf('\r\x1b[2K')), /\] 1\/3 done · a /, 'b is done: a is shown again');
  r.scenarioFinished('a', { status: 'fail', runDir: runFolder(dir, 'a', [...failingRun(), ...ending(false)]) });
  const before = out.text;
  r.tick();
  t.equal(out.text, before, 'nothing running: no status line');
  r.close();
});
