// The live console reporter, fed the entries of golden journals (recorded from real runs) as the
// runner would, with a fake clock and a fake output: line mode (not a terminal, --quiet),
// terminal mode (status line, progress bar), the end-of-scenario verdict from the run's view,
// and the final table.
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { createConsoleReporter } from '../../../harness/report/console.js';
import { reportsPathShower } from '../../../harness/base/paths.js';
import { viewOf } from '../../../harness/report/view.js';
import { batchViewOf } from '../../../harness/report/batch-view.js';
import { at, cutAfter, find, foreignEvent, golden, withOutput, writeRunFolder } from '../../helpers/journals.js';

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

/** ack-crash against the ack-before-commit mutant, up to the start of its second process. */
function mutantUntilRestart(): JournalEntry[] {
  const journal = golden('ack-crash-ack-before-commit');
  return cutAfter(
    journal,
    find(journal, 'process-start', (e) => e.role === 'consumer' && e.incarnation === 2),
  );
}

/** cuts (a real 300-event run), up to the moment its first network cut is applied. */
function cutsUntilFirstCut(): { head: JournalEntry[]; rest: JournalEntry[] } {
  const journal = golden('cuts-pass');
  const head = cutAfter(
    journal,
    find(journal, 'fault', (e) => e.name === 'cut-1' && e.action === 'apply'),
  );
  return { head, rest: journal.slice(head.length) };
}

const lastStatus = (text: string) => text.slice(text.lastIndexOf('\r\x1b[2K'));

t.test('line mode (not a terminal): a line per milestone, a "still" line after a quiet second, no escapes', async (t) => {
  const out = sink();
  const c = clock();
  const r = createConsoleReporter({ tty: false, quiet: false, out, now: c.now, interval: false, cwd: '/' });
  r.scenarioStarted('ack-crash');
  for (const e of mutantUntilRestart()) {
    c.advance(20);
    r.onJournal(e);
  }
  t.match(out.text, /^ {2}ack-crash: starting\n/);
  t.match(out.text, /\n {2}ack-crash \[0\.\d{3} s\] toxiproxy 2\.12\.0 at http:\/\/127\.0\.0\.1:39533\n/);
  t.match(out.text, /\] control started \(pid 13669\)\n/);
  t.match(out.text, /\] consumer #1 started \(pid 13670, fault exit@ack:1\)\n/);
  t.match(out.text, /\] consumer #1 exited 86 after 0\.362 s\n/);
  t.match(out.text, /\] consumer #1's file: last 1, total 12, 2 rows\n/, 'the file read, in the lab’s words');
  t.match(out.text, /\] consumer #2 started \(pid 13691\)\n$/);

  const before = out.text;
  c.advance(400);
  r.tick();
  t.equal(out.text, before, 'nothing within a second of the last line');
  c.advance(700);
  r.tick();
  t.match(out.text.slice(before.length), /^ {2}ack-crash \[\d\.\d{3} s\] still consumer #2 running · 2\/3 committed\n$/, 'ACK 0 and ACK 1 of 3 events');
  c.advance(1000);
  r.tick();
  t.equal(out.text.split('still').length - 1, 2, 'and again each further second');
  t.notMatch(out.text, /\x1b|\r/, 'plain text only');
  r.close();

  // A run with network faults: applied, active while quiet, lifted.
  const faults = sink();
  const f = createConsoleReporter({ tty: false, quiet: false, out: faults, now: c.now, interval: false, cwd: '/' });
  const { head, rest } = cutsUntilFirstCut();
  f.scenarioStarted('cuts');
  for (const e of head) {
    c.advance(5);
    f.onJournal(e);
  }
  t.match(faults.text, /\] fault cut-1 \(proxy-down\) applied proxy disabled \(connections closed, new ones refused\)\n$/);
  c.advance(1100);
  f.tick();
  t.match(faults.text, /\] still consumer #1 running · fault cut-1 active · 35\/300 committed\n$/);
  for (const e of rest) f.onJournal(e);
  t.match(faults.text, /\] consumer #1 exited 6 after 0\.492 s\n/);
  t.match(faults.text, /\] fault cut-1 \(proxy-down\) lifted\n/);
  t.equal(faults.text.split(' applied ').length - 1, 3, 'three cuts applied');
  t.equal(faults.text.split(') lifted').length - 1, 3, 'three lifted');
  t.match(faults.text, /\] consumer #6 exited 0 after 0\.704 s\n/);
  t.notMatch(faults.text, /\x1b|\r/, 'plain text only');
  f.close();
});

t.test('the end of a failing scenario: the verdict first, then the smallest diff; then the table and where the report is', async (t) => {
  const dir = t.testdir();
  const journal = golden('ack-crash-ack-before-commit');
  const view = viewOf(journal);
  const runDir = writeRunFolder(join(dir, '20261130-234759-ack-crash-6bg1'), journal);
  writeFileSync(join(runDir, 'report.html'), '');
  symlinkSync('20261130-234759-ack-crash-6bg1', join(dir, 'latest'));
  const out = sink(100);
  const r = createConsoleReporter({ tty: false, quiet: true, out, interval: false, cwd: dir });
  r.scenarioStarted('ack-crash');
  for (const e of journal) r.onJournal(e);
  r.tick();
  t.equal(out.text, '', '--quiet: nothing while it runs');
  const outcome = r.scenarioFinished('ack-crash', { status: 'fail', runDir, view });
  const text = out.text;
  t.same(outcome, { name: 'ack-crash', status: 'fail', durationMs: 908.994, reason: view.headline, runDir, detail: text.slice(1, -1).split('\n') });
  t.match(
    text,
    /^\nFAIL {2}ack-crash {2}\(0\.909 s\)\n {2}Why: incarnation 1 sent ACK 1 at 0\.589 s, which it must not send: the process was ended at fault point ack:1, after COMMIT and before the ACK is written, so this ACK was written before seq 1 was committed\n {2}- incarnation 2 never sent ACK 1 \(incarnation 1 had already acknowledged it, so it was not redelivered\)\n {2}Smallest diff:\n {4}incarnation 1: ACKs 0, 1 — expected 0 \(extra: ACK 1 at 0\.589 s\)\n/,
  );
  t.equal(
    text,
    [
      '',
      'FAIL  ack-crash  (0.909 s)',
      `  Why: ${view.headline}`,
      ...view.findings.slice(1).map((f) => `  - ${f.text}`),
      '  Smallest diff:',
      ...view.diff.map((d) => `    ${d}`),
      '',
    ].join('\n'),
    'every finding and every diff line of the verdict, nothing else',
  );
  r.finalTable();
  const table = out.text.slice(text.length).split('\n');
  t.match(table[1], /^scenario {3}verdict {5}time {2}reason$/);
  t.match(table[2], /^ack-crash {2}FAIL {5}0\.909 s {2}incarnation 1 sent ACK 1 at 0\.589 s, which it must not send: the pro…$/, 'one line, cut to the width');
  t.ok(table[2]!.length <= 100);
  t.equal(table[3], 'report: 20261130-234759-ack-crash-6bg1/report.html  (also latest/report.html)');
  r.close();
});

t.test('paths as given: an absolute --out prints absolute report paths, a relative one (or none) paths relative to the cwd', async (t) => {
  const dir = t.testdir();
  const journal = golden('ack-crash-ack-before-commit');
  const runDir = writeRunFolder(join(dir, 'out', '20261130-234759-ack-crash-6bg1'), journal);
  writeFileSync(join(runDir, 'report.html'), '');
  symlinkSync('20261130-234759-ack-crash-6bg1', join(dir, 'out', 'latest'));
  const tableOf = (showPath: (path: string) => string) => {
    const out = sink(100);
    const r = createConsoleReporter({ tty: false, quiet: true, out, interval: false, cwd: join(dir, 'elsewhere'), showPath });
    r.scenarioStarted('ack-crash');
    r.scenarioFinished('ack-crash', { status: 'fail', runDir, view: viewOf(journal) });
    r.finalTable();
    r.close();
    return out.text.split('\n').filter((l) => l.startsWith('report: '));
  };
  t.same(tableOf(reportsPathShower({ out: join(dir, 'out') }, join(dir, 'elsewhere'))), [
    `report: ${join(runDir, 'report.html')}  (also ${join(dir, 'out', 'latest')}/report.html)`,
  ]);
  t.same(tableOf(reportsPathShower({ out: '../out' }, join(dir, 'elsewhere'))), [
    'report: ../out/20261130-234759-ack-crash-6bg1/report.html  (also ../out/latest/report.html)',
  ]);
  t.equal(reportsPathShower({}, '/w')('/w/reports/x/report.html'), 'reports/x/report.html', 'the default reports/ is relative');
  t.equal(reportsPathShower({ reports: '/abs' }, '/w')('/abs/x'), '/abs/x', '--reports, the older name, too');
  t.equal(reportsPathShower({ out: 'r' }, '/w')('/w'), '.');
});

t.test('terminal mode: one status line redrawn in place, a progress bar for several scenarios, colour', async (t) => {
  const dir = t.testdir();
  const out = sink(120);
  const c = clock();
  const r = createConsoleReporter({ tty: true, quiet: false, out, now: c.now, interval: false, color: true, cwd: dir, verbose: true });
  r.scenarioStarted('cuts', { index: 0, total: 2 });
  const cuts = golden('cuts-pass');
  const pass = writeRunFolder(join(dir, 'r1'), cuts);
  for (const e of cutsUntilFirstCut().head) r.onJournal(e);
  c.advance(1500);
  r.tick();
  t.match(lastStatus(out.text), /^\r\x1b\[2K. \[░{16}\] 0\/2 done · cuts \d+\.\d s · consumer #1 running · fault cut-1 active · 35\/300 committed$/);
  r.scenarioFinished('cuts', { status: 'pass', runDir: pass, view: viewOf(cuts) });
  t.match(out.text, /\x1b\[32mPASS\x1b\[0m {2}cuts {2}\(4\.031 s\)\n/);

  r.scenarioStarted('ack-crash', { index: 1, total: 2 });
  r.tick();
  t.match(lastStatus(out.text), /\[█{8}░{8}\] 1\/2 done · ack-crash/);
  r.onJournal(at(1, { type: 'process-start', role: 'consumer', incarnation: 1, pid: 9, command: 'c', env: {} }));
  t.match(out.text, /\r\x1b\[2K {2}ack-crash \[\d\.\d{3} s\] consumer #1 started \(pid 9\)\n\r\x1b\[2K/, 'a milestone clears the status line, prints, redraws');
  const mutant = golden('ack-crash-ack-before-commit');
  const fail = writeRunFolder(join(dir, 'r2'), mutant);
  r.scenarioFinished('ack-crash', { status: 'fail', runDir: fail, view: viewOf(mutant) });
  r.finalTable();
  t.match(out.text, /1\/2 passed\nreports:\n {2}cuts {7}r1\/report\.html\n {2}ack-crash {2}r2\/report\.html\n$/);
  t.match(out.text, /\x1b\[31mFAIL\x1b\[0m {2}ack-crash {2}\(0\.909 s\) {2}incarnation 1 sent ACK 1/, 'in a batch, one line per run');
  r.close();
});

t.test('unknown entries, a run without a view, a harness error', async (t) => {
  const dir = t.testdir();
  const out = sink();
  const r = createConsoleReporter({ tty: false, quiet: false, out, interval: false, cwd: dir });
  r.scenarioStarted('x');
  for (let i = 0; i < 5; i++) r.onJournal(at(i, foreignEvent('step', { step: `phase ${i}` })));
  t.equal(out.text.split('step phase').length - 1, 3, 'an unknown entry type is shown, at most three times');
  r.onJournal(at(8, { type: 'fault', action: 'apply', name: 'kill-1', kind: 'signal', detail: 'SIGKILL to consumer incarnation 1 (pid 5)', incarnation: 1 }));
  t.match(out.text, /fault kill-1 \(signal\): SIGKILL to consumer incarnation 1 \(pid 5\)\n/, 'a signal is reported once, not as an active fault');
  r.onJournal(
    at(8.5, {
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
    }),
  );
  t.match(out.text, /consumer #3 killed at the deadline after 60\.000 s\n/);
  const beforeSeal = out.text;
  r.onJournal(at(8.7, { type: 'seal', uid: 61003, allowed: { packets: 9, bytes: 900 }, rejected: { packets: 0, bytes: 0 } }));
  t.equal(out.text, beforeSeal, 'the firewall counters are no milestone');
  r.onJournal(at(9, { type: 'harness-error', message: 'toxiproxy went away' }));
  t.match(out.text, /harness error: toxiproxy went away\n/);
  r.onJournal(at(10, { type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'HELLO\u0007\n', error: 'unknown command' }));
  t.match(out.text, /consumer sent a line that breaks the grammar: HELLO\\x07 \(unknown command\)/);
  t.notMatch(out.text, /still .*fault kill-1 active/, 'the signal never counted as an active fault');
  const o = r.scenarioFinished('x', { status: 'error', runDir: join(dir, 'nowhere'), error: 'could not start' });
  t.match(o, { status: 'error', reason: 'could not start' });
  t.match(out.text, /ERROR {2}x {2}\(\d+\.\d{3} s\)\n {2}Why: could not start\n/);
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
  t.match(lastStatus(out.text), /\[░{16}\] 0\/3 done \(2 running\) · b /);
  const pass = golden('ack-crash-pass');
  r.scenarioFinished('b', { status: 'pass', runDir: writeRunFolder(join(dir, 'b'), pass), view: viewOf(pass) });
  r.tick();
  t.match(lastStatus(out.text), /\] 1\/3 done · a /, 'b is done: a is shown again');
  const mutant = golden('ack-crash-ack-before-commit');
  r.scenarioFinished('a', { status: 'fail', runDir: writeRunFolder(join(dir, 'a'), mutant), view: viewOf(mutant) });
  const before = out.text;
  r.tick();
  t.equal(out.text, before, 'nothing running: no status line');
  r.close();
});

t.test('the end of a batch: only the runs that did not pass, in full, with the consumer’s stderr; -v lists every run', async (t) => {
  const dir = t.testdir();
  const pass = golden('ack-crash-pass');
  const fail = withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr: 'Traceback (most recent call last):\nValueError: 1\n' });
  const runs = [
    { label: 'ack-crash #1', runDir: writeRunFolder(join(dir, 'r1'), pass), view: viewOf(pass) },
    { label: 'ack-crash #2', runDir: writeRunFolder(join(dir, 'r2'), fail), view: viewOf(fail) },
  ];
  const batch = batchViewOf(dir, { name: 'ack-crash-x2', startedAt: '', endedAt: '', commandLine: 'chaoslab run ack-crash --repeat 2' }, runs);
  const play = (verbose: boolean) => {
    const out = sink(100);
    const c = clock();
    const r = createConsoleReporter({ tty: false, quiet: false, out, interval: false, cwd: dir, verbose, now: c.now });
    const outcomes = runs.map((run, index) => {
      r.scenarioStarted(run.label, { index, total: 2 });
      r.onJournal(at(1, { type: 'process-start', role: 'consumer', incarnation: 1, pid: 9, command: 'c', env: {} }));
      c.advance(1500);
      r.tick();
      return r.scenarioFinished(run.label, { status: run.view.status as 'pass' | 'fail', runDir: run.runDir, view: run.view });
    });
    const progress = out.text;
    r.batchFinished(outcomes, batch, { verbose });
    r.close();
    return { progress, end: out.text.slice(progress.length) };
  };
  t.match(
    play(true).progress,
    /\[1\/2\] ack-crash #1\n {2}ack-crash #1 \[0\.000 s\] consumer #1 started \(pid 9\)\n {2}ack-crash #1 \[1\.500 s\] still consumer #1 running\n/,
    '-v: every milestone',
  );
  const { progress, end } = play(false);
  t.equal(
    progress,
    [
      '[1/2] ack-crash #1',
      'PASS  ack-crash #1  (0.688 s)',
      '[2/2] ack-crash #2',
      `FAIL  ack-crash #2  (0.909 s)  ${runs[1]!.view.headline.slice(0, 57)}…`,
      '',
    ].join('\n'),
    'while it runs: one line per run',
  );
  t.equal(
    end,
    [
      '',
      'Did not pass (1):',
      '',
      'FAIL  ack-crash #2  (0.909 s)',
      `  Why: ${runs[1]!.view.headline}`,
      ...runs[1]!.view.findings.slice(1).map((f) => `  - ${f.text}`),
      '  Smallest diff:',
      ...runs[1]!.view.diff.map((d) => `    ${d}`),
      '  The consumer said (stderr of incarnation 1, last 2 lines):',
      '    │ Traceback (most recent call last):',
      '    │ ValueError: 1',
      '  report: r2/report.html',
      '',
      '1 passed, 1 failed — index.html',
      '',
    ].join('\n'),
    'at the end: the failure again, in full, then one line of totals',
  );
  t.notMatch(end, /r1\/report\.html/, 'a pass is not listed again');

  const verbose = play(true).end;
  t.match(verbose, /\nscenario +verdict +time +reason\nack-crash #1 +PASS +0\.688 s +—\nack-crash #2 +FAIL/, '-v: a table of every run');
  t.match(verbose, /reports:\n {2}ack-crash #1 {2}r1\/report\.html\n {2}ack-crash #2 {2}r2\/report\.html\n\n1 passed, 1 failed — index\.html\n$/);

  const allPass = sink();
  const r = createConsoleReporter({ tty: false, quiet: false, out: allPass, interval: false, cwd: dir, color: true });
  r.batchFinished([{ name: 'x', status: 'pass', durationMs: 1, reason: '' }], batchViewOf(dir, batch, [runs[0]!]));
  t.equal(allPass.text, '\n\x1b[32m1 passed\x1b[0m — index.html\n', 'all passed: the total alone');
  const noDetail = sink();
  createConsoleReporter({ tty: false, quiet: false, out: noDetail, interval: false, cwd: dir }).batchFinished(
    [{ name: 'y', status: 'error', durationMs: 1, reason: 'gone' }],
    batch,
  );
  t.match(noDetail.text, /\nERROR {2}y\n/);
  const cut = sink();
  createConsoleReporter({ tty: false, quiet: false, out: cut, interval: false, cwd: dir }).batchFinished(
    [{ name: 'x', status: 'interrupted', durationMs: 1, reason: 'stopped' }],
    batchViewOf(dir, { ...batch, notStarted: [{ label: 'gap', scenario: 'gap' }] }, [{ ...runs[0]!, view: { ...runs[0]!.view, status: 'interrupted' } }]),
  );
  t.match(cut.text, /\nNot started \(interrupted\): gap\n\n1 interrupted, 1 not started — index\.html\n$/, 'an interrupted batch names what never started');
});

t.test('a single failing run shows the consumer’s stderr under its verdict', async (t) => {
  const out = sink();
  const r = createConsoleReporter({ tty: false, quiet: true, out, interval: false, cwd: '/' });
  const journal = withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr: 'boom\n' });
  r.scenarioStarted('ack-crash');
  r.scenarioFinished('ack-crash', { status: 'fail', runDir: '/x', view: viewOf(journal) });
  t.match(out.text, /\n {2}The consumer said \(stderr of incarnation 1, last 1 lines\):\n {4}│ boom\n$/);
});
