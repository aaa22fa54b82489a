// make bench: renders the reports of a synthetic 100 000-event run and checks the budget —
// renderRunFolder (journal read + summary.md + report.html + junit.xml) under 2 s, report.html
// under 5 MB. Timings are measured here, never asserted in tests (docs/testing.md).
//
// The journal is shaped like a real run: the control consumer and two consumer incarnations
// (the first crashes at seq 50 000, the second resumes), a network fault applied and lifted,
// every EVENT sent and every ACK received on both streams: ~400 000 wire entries.
//   node bench/render.bench.mjs [events=100000]
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { checkLedgerRun } from '../dist/harness/labs/ledger/check/checker.js';
import { renderRunFolder } from '../dist/harness/report/render-all.js';

const EVENTS = Number(process.argv[2] ?? 100_000);
const BUDGET_MS = 2000;
const BUDGET_BYTES = 5 * 1024 * 1024;

export function syntheticJournal(dir, events = EVENTS) {
  const crashAt = Math.floor(events / 2);
  const deltas = Array.from({ length: events }, (_, i) => ((i * 7919) % 21) - 10);
  const plan = {
    file: '/bench/long-run.yaml',
    name: 'long-run',
    description: 'synthetic 100 000-event run for make bench',
    protocol: 'ledger',
    timeoutMs: 2000,
    deadlineMs: 600000,
    timeScale: 1,
    faults: [],
    lab: {
      events: deltas.map((delta, seq) => ({ seq, delta })),
      eventSource: { kind: 'generated', count: events, seed: 1, min: -10, max: 10 },
      publisher: { window: 16, retentionStart: 0, redeliverUnacked: true, ackDeadlineMs: 5000, forgetAcked: false, retentionMoves: [], misbehaviour: [] },
      consumer: { incarnations: [{ fault: `exit@ack:${crashAt}`, expectExit: 'nonzero' }, { expectExit: 'zero' }] },
      expect: {},
    },
  };
  const total = deltas.reduce((a, b) => a + b, 0);
  const lines = [];
  let t = 0;
  const entries = [];
  const w = (e) => {
    const entry = { t: Math.round((t += 0.01) * 1000) / 1000, ...e };
    entries.push(entry);
    lines.push(JSON.stringify(entry));
  };
  const db = (role) => join(dir, `${role}.db`);
  w({
    type: 'run-start',
    schema: 2,
    protocol: 'ledger',
    runId: '20260101-000000-long-run-bnch',
    scenario: { name: 'long-run', file: plan.file, description: plan.description },
    harnessVersion: '0.1.0',
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cwd: '/bench',
    consumerCommand: 'node consumer.js',
    controlCommand: 'node control.js',
  });
  w({ type: 'scenario', source: 'name: long-run\nevents:\n  generate: {count: 100000, seed: 1}\n', plan });
  w({ type: 'toxiproxy', url: 'http://127.0.0.1:8474', version: '2.12.0', owned: true });
  w({ type: 'stream', role: 'control', stream: 'control', host: '127.0.0.1', port: 1, db: db('control') });
  w({ type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 2, db: db('consumer') });
  w({ type: 'process-start', role: 'control', incarnation: 1, pid: 100, command: 'node control.js', env: {} });
  w({
    type: 'process-start',
    role: 'consumer',
    incarnation: 1,
    pid: 101,
    command: 'node consumer.js',
    env: { CHAOSLAB_FAULT: plan.lab.consumer.incarnations[0].fault },
  });
  w({ type: 'wire', stream: 'control', conn: 1, kind: 'open', owner: { role: 'control', incarnation: 1 } });
  w({ type: 'wire', stream: 'control', conn: 1, kind: 'recv', line: 'RESUME -1\n' });
  w({ type: 'wire', stream: 'consumer', conn: 1, kind: 'open', owner: { role: 'consumer', incarnation: 1 } });
  w({ type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'RESUME -1\n' });
  let conn = 1;
  for (let seq = 0; seq < events; seq++) {
    if (seq === Math.floor(events / 5)) w({ type: 'fault', action: 'apply', name: 'slow-link', kind: 'latency', detail: { latency: 50, jitter: 10 } });
    if (seq === Math.floor((events * 3) / 10)) w({ type: 'fault', action: 'lift', name: 'slow-link', kind: 'latency' });
    w({ type: 'wire', stream: 'control', conn: 1, kind: 'send', line: `EVENT ${seq} ${deltas[seq]}\n` });
    w({ type: 'wire', stream: 'control', conn: 1, kind: 'recv', line: `ACK ${seq}\n` });
    w({ type: 'wire', stream: 'consumer', conn, kind: 'send', line: `EVENT ${seq} ${deltas[seq]}\n` });
    if (seq === crashAt) {
      w({ type: 'wire', stream: 'consumer', conn, kind: 'close', by: 'consumer', reason: 'closed' });
      w({
        type: 'process-exit',
        role: 'consumer',
        incarnation: 1,
        code: 86,
        signal: null,
        durationMs: Math.round(t),
        stdoutTail: 'applied 50000 events\n',
        stderrTail: 'fault exit@ack: exiting\n',
        stdoutBytes: 1_200_000,
        stderrBytes: 24,
      });
      w({
        type: 'store-read',
        role: 'consumer',
        incarnation: 1,
        when: 'after-exit',
        db: db('consumer'),
        store: {
          exists: true,
          checkpoint: [{ id: 1, last: seq, total: deltas.slice(0, seq + 1).reduce((a, b) => a + b, 0) }],
          ledger: deltas.slice(0, seq + 1).map((d, s) => [s, d]),
        },
      });
      w({ type: 'process-start', role: 'consumer', incarnation: 2, pid: 102, command: 'node consumer.js', env: {} });
      conn = 2;
      w({ type: 'wire', stream: 'consumer', conn, kind: 'open', owner: { role: 'consumer', incarnation: 2 } });
      w({ type: 'wire', stream: 'consumer', conn, kind: 'recv', line: `RESUME ${seq}\n` });
      w({ type: 'wire', stream: 'consumer', conn, kind: 'send', line: `EVENT ${seq} ${deltas[seq]}\n` });
    }
    w({ type: 'wire', stream: 'consumer', conn, kind: 'recv', line: `ACK ${seq}\n` });
  }
  w({ type: 'wire', stream: 'control', conn: 1, kind: 'close', by: 'publisher', reason: 'all events acknowledged' });
  w({ type: 'wire', stream: 'consumer', conn, kind: 'close', by: 'publisher', reason: 'all events acknowledged' });
  w({
    type: 'process-exit',
    role: 'control',
    incarnation: 1,
    code: 0,
    signal: null,
    durationMs: Math.round(t),
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  w({
    type: 'process-exit',
    role: 'consumer',
    incarnation: 2,
    code: 0,
    signal: null,
    durationMs: Math.round(t),
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  const ledger = deltas.map((d, s) => [s, d]);
  const store = { exists: true, checkpoint: [{ id: 1, last: events - 1, total }], ledger };
  w({ type: 'store-read', role: 'consumer', incarnation: 2, when: 'after-exit', db: db('consumer'), store });
  w({ type: 'store-read', role: 'consumer', when: 'final', db: db('consumer'), store });
  w({ type: 'store-read', role: 'control', when: 'final', db: db('control'), store });
  // The verdict the real checker gives on this journal (its stores as read above).
  const verdict = checkLedgerRun(entries, { source: '', ...plan }, () => store);
  w({ type: 'verdict', verdict });
  w({ type: 'run-end', status: verdict.status });
  writeFileSync(join(dir, 'journal.jsonl'), `${lines.join('\n')}\n`);
  return lines.length;
}

// Run as a script (make bench's §7 imports syntheticJournal only).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = mkdtempSync(join(tmpdir(), 'chaoslab-bench-'));
  try {
    const entries = syntheticJournal(dir);
    const journalBytes = statSync(join(dir, 'journal.jsonl')).size;
    console.log(`synthetic journal: ${EVENTS} events, ${entries} entries, ${(journalBytes / 1e6).toFixed(1)} MB`);
    const times = [];
    let result;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      result = renderRunFolder(dir);
      times.push(performance.now() - t0);
    }
    // The first call is the cold one a CLI pays (JIT warm-up included); the budget is checked on
    // the best of three, because on a shared machine other processes only ever add time.
    const cold = times[0];
    const best = Math.min(...times);
    const html = result.htmlBytes;
    console.log(
      `renderRunFolder: ${times.map((t) => `${t.toFixed(0)} ms`).join(', ')} (cold ${cold.toFixed(0)} ms, best ${best.toFixed(0)} ms; budget ${BUDGET_MS} ms)`,
    );
    console.log(
      `report.html: ${(html / 1024).toFixed(0)} KiB (budget ${BUDGET_BYTES / 1024 / 1024} MiB); diagram: ${result.diagram.rows} rows, ${result.diagram.arrows} arrows, ${result.diagram.bands} collapsed bands standing for ${result.diagram.collapsed} lines, ${result.diagram.faults} fault band(s)`,
    );
    const over = [];
    if (best > BUDGET_MS) over.push(`rendering took ${best.toFixed(0)} ms (best of 3) > ${BUDGET_MS} ms`);
    if (html > BUDGET_BYTES) over.push(`report.html is ${html} bytes > ${BUDGET_BYTES}`);
    if (result.diagram.faults < 1 || result.diagram.bands < 1) over.push('the diagram lost its fault band or its collapsed bands');
    if (over.length) {
      console.error(`bench: OVER BUDGET: ${over.join('; ')}`);
      process.exitCode = 1;
    } else console.log('bench: ok');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
