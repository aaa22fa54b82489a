// report.html, the sequence diagram, renderRunFolder and the run folder (latest, clean), from
// hand-made journals shaped like real runs: no process, no network. Verdicts come from the
// real checker (checkLedgerRun), so the explanations tested here are the ones a user sees.
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import t from 'tap';
import * as cleanCommand from '../harness/commands/clean.js';
import * as reportCommand from '../harness/commands/report.js';
import type { JournalEntry } from '../harness/journal.js';
import { checkLedgerRun } from '../harness/labs/ledger/checker.js';
import type { StoreSnapshot } from '../harness/labs/ledger/store-reader.js';
import { explainRun, renderHtml, seqList } from '../harness/report/html.js';
import { renderRunFolder } from '../harness/report/render-all.js';
import { cleanRuns, latestTarget, listRuns, resolveRunFolders, switchLatest } from '../harness/report/run-folder.js';
import { escapeMarkup, renderSequenceDiagram, showLine } from '../harness/report/sequence-diagram.js';

type Entry = Record<string, unknown>;

/** A journal shaped like a real `ack-crash` run (taken from one), with options to vary it. */
function ackCrash(
  opts: { mutant?: boolean; fault?: 'lifted' | 'open'; stdout?: string; stderr?: string; extra?: Entry[]; wireLine?: string } = {},
): JournalEntry[] {
  const deltas = [7, 5, -3];
  const plan = {
    file: '/lab/scenarios/ack-crash.yaml',
    name: 'ack-crash',
    description: 'A consumer that crashes after committing an event but before acknowledging it loses nothing.',
    protocol: 'ledger',
    timeoutMs: 2000,
    deadlineMs: 60000,
    events: deltas.map((delta, seq) => ({ seq, delta })),
    eventSource: { kind: 'explicit' },
    publisher: { window: 16, retentionStart: 0, redeliverUnacked: true, ackDeadlineMs: 5000 },
    consumer: { incarnations: [{ fault: 'exit@ack:1', expectExit: 'nonzero' }, { expectExit: 'zero' }] },
    expect: {
      transcript: [
        { incarnation: 1, resume: -1, acks: [0] },
        { incarnation: 2, resume: 1, acks: [1, 2] },
      ],
    },
  };
  const entries: Entry[] = [];
  let t = 0;
  const w = (e: Entry) => entries.push({ t: Math.round((t += 1.5) * 1000) / 1000, ...e });
  const wire = (stream: string, conn: number, kind: string, rest: Entry = {}) => w({ type: 'wire', stream, conn, kind, ...rest });
  const full: [number, number][] = [
    [0, 7],
    [1, 5],
    [2, -3],
  ];
  const snap = (ledger: [number, number][], last: number, total: number): StoreSnapshot => ({ exists: true, checkpoint: [{ id: 1, last, total }], ledger });
  w({
    type: 'run-start',
    schema: 1,
    runId: '20260102-030405-ack-crash-test',
    scenario: { name: 'ack-crash', file: plan.file, description: plan.description },
    harnessVersion: '0.1.0',
    node: 'v20.0.0',
    platform: 'linux-x64',
    cwd: '/lab',
    consumerCommand: opts.mutant ? 'node mutant.js' : 'node client.js',
    controlCommand: 'node client.js',
  });
  w({ type: 'scenario', source: 'name: ack-crash\nevents:\n  deltas: [7, 5, -3]\n', plan });
  w({ type: 'toxiproxy', url: 'http://127.0.0.1:8474', version: '2.12.0', owned: true });
  w({ type: 'stream', role: 'control', stream: 'control', host: '127.0.0.1', port: 1, db: '/run/control.db' });
  w({ type: 'stream', role: 'consumer', stream: 'consumer', host: '127.0.0.1', port: 2, db: '/run/consumer.db' });
  w({ type: 'proxy', action: 'create', name: 'p', listen: '127.0.0.1:3', upstream: '127.0.0.1:2' });
  w({ type: 'process-start', role: 'control', incarnation: 1, pid: 10, command: 'node client.js', env: {} });
  w({ type: 'process-start', role: 'consumer', incarnation: 1, pid: 11, command: 'node client.js', env: { CHAOSLAB_FAULT: 'exit@ack:1' } });
  wire('control', 1, 'open');
  wire('control', 1, 'recv', { line: 'RESUME -1\n' });
  for (const [s, d] of full) wire('control', 1, 'send', { line: `EVENT ${s} ${d}\n` });
  for (const [s] of full) wire('control', 1, 'recv', { line: `ACK ${s}\n` });
  wire('control', 1, 'close', { by: 'publisher', reason: 'all events acknowledged' });
  w({
    type: 'process-exit',
    role: 'control',
    incarnation: 1,
    code: 0,
    signal: null,
    durationMs: 20,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  if (opts.fault) w({ type: 'fault', action: 'apply', name: 'slow-link', kind: 'latency', detail: { latency: 100 } });
  wire('consumer', 1, 'open', { tag: 'incarnation 1' });
  wire('consumer', 1, 'recv', { line: 'RESUME -1\n' });
  for (const [s, d] of full) wire('consumer', 1, 'send', { line: `EVENT ${s} ${d}\n` });
  wire('consumer', 1, 'recv', { line: 'ACK 0\n' });
  if (opts.mutant) wire('consumer', 1, 'recv', { line: 'ACK 1\n' });
  if (opts.wireLine) wire('consumer', 1, 'recv', { line: opts.wireLine, error: 'not a line of the protocol' });
  wire('consumer', 1, 'close', { by: 'consumer', reason: 'closed' });
  if (opts.fault === 'lifted') w({ type: 'fault', action: 'lift', name: 'slow-link', kind: 'latency' });
  const out = opts.stdout ?? '';
  const err = opts.stderr ?? '';
  w({
    type: 'process-exit',
    role: 'consumer',
    incarnation: 1,
    code: 86,
    signal: null,
    durationMs: 40,
    stdoutTail: out,
    stderrTail: err,
    stdoutBytes: Buffer.byteLength(out),
    stderrBytes: Buffer.byteLength(err),
  });
  w({ type: 'store-read', role: 'consumer', incarnation: 1, when: 'after-exit', db: '/run/consumer.db', store: snap(full.slice(0, 2), 1, 12) });
  for (const e of opts.extra ?? []) w(e);
  w({ type: 'process-start', role: 'consumer', incarnation: 2, pid: 12, command: 'node client.js', env: {} });
  wire('consumer', 2, 'open', { tag: 'incarnation 2' });
  wire('consumer', 2, 'recv', { line: 'RESUME 1\n' });
  if (!opts.mutant) wire('consumer', 2, 'send', { line: 'EVENT 1 5\n' });
  wire('consumer', 2, 'send', { line: 'EVENT 2 -3\n' });
  if (!opts.mutant) wire('consumer', 2, 'recv', { line: 'ACK 1\n' });
  wire('consumer', 2, 'recv', { line: 'ACK 2\n' });
  wire('consumer', 2, 'close', { by: 'publisher', reason: 'all events acknowledged' });
  w({
    type: 'process-exit',
    role: 'consumer',
    incarnation: 2,
    code: 0,
    signal: null,
    durationMs: 30,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  w({ type: 'store-read', role: 'consumer', incarnation: 2, when: 'after-exit', db: '/run/consumer.db', store: snap(full, 2, 9) });
  const verdict = checkLedgerRun(entries as unknown as JournalEntry[], (db) => {
    const store = snap(full, 2, 9);
    w({ type: 'store-read', role: db.includes('control') ? 'control' : 'consumer', when: 'final', db, store });
    return store;
  });
  w({ type: 'verdict', pass: verdict.pass, reasons: [...verdict.harnessErrors, ...verdict.reasons], details: verdict });
  w({ type: 'proxy', action: 'remove', name: 'p' });
  w({ type: 'run-end', status: verdict.pass ? 'pass' : 'fail' });
  return entries as unknown as JournalEntry[];
}

/** One consumer that ACKs all ten events, but its file lost seq 7 (ACK 7 at 1.204 s). */
function lostEvent(): JournalEntry[] {
  const deltas = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
  const sum = deltas.reduce((a, b) => a + b, 0);
  const plan = {
    file: 'lost.yaml',
    name: 'lost',
    description: 'x',
    protocol: 'ledger',
    timeoutMs: 2000,
    deadlineMs: 60000,
    events: deltas.map((delta, seq) => ({ seq, delta })),
    eventSource: { kind: 'explicit' },
    publisher: { window: 16, retentionStart: 0, redeliverUnacked: true, ackDeadlineMs: 5000 },
    consumer: { incarnations: [{ expectExit: 'zero' }] },
    expect: {},
  };
  const lost: [number, number][] = deltas.map((d, s): [number, number] => [s, d]).filter(([s]) => s !== 7);
  const file: StoreSnapshot = { exists: true, checkpoint: [{ id: 1, last: 9, total: sum - deltas[7]! }], ledger: lost };
  const control: StoreSnapshot = { exists: true, checkpoint: [{ id: 1, last: 9, total: sum }], ledger: deltas.map((d, s) => [s, d]) };
  const e: Entry[] = [
    {
      t: 0,
      type: 'run-start',
      schema: 1,
      runId: '20260102-030405-lost-abcd',
      scenario: { name: 'lost', file: 'lost.yaml', description: 'x' },
      harnessVersion: '0.1.0',
      node: 'v20',
      platform: 'linux',
      cwd: '/',
      consumerCommand: 'c',
      controlCommand: 'c',
    },
    { t: 1, type: 'scenario', source: 'name: lost\n', plan },
    { t: 2, type: 'stream', role: 'control', stream: 'control', host: 'h', port: 1, db: 'control.db' },
    { t: 3, type: 'stream', role: 'consumer', stream: 'consumer', host: 'h', port: 2, db: 'consumer.db' },
    { t: 4, type: 'process-start', role: 'consumer', incarnation: 1, pid: 5, command: 'c', env: {} },
    { t: 5, type: 'wire', stream: 'consumer', conn: 1, kind: 'open', tag: 'incarnation 1' },
    { t: 6, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'RESUME -1\n' },
  ];
  deltas.forEach((d, s) => {
    e.push({ t: 100 + s * 150, type: 'wire', stream: 'consumer', conn: 1, kind: 'send', line: `EVENT ${s} ${d}\n` });
    e.push({ t: s === 7 ? 1204 : 150 + s * 150, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: `ACK ${s}\n` });
  });
  e.sort((a, b) => (a.t as number) - (b.t as number));
  e.push({
    t: 1600,
    type: 'process-exit',
    role: 'consumer',
    incarnation: 1,
    code: 0,
    signal: null,
    durationMs: 1590,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  e.push({ t: 1601, type: 'store-read', role: 'consumer', incarnation: 1, when: 'after-exit', db: 'consumer.db', store: file });
  const verdict = checkLedgerRun(e as unknown as JournalEntry[], (db) => (db === 'consumer.db' ? file : control));
  e.push({ t: 1602, type: 'store-read', role: 'consumer', when: 'final', db: 'consumer.db', store: file });
  e.push({ t: 1603, type: 'store-read', role: 'control', when: 'final', db: 'control.db', store: control });
  e.push({ t: 1604, type: 'verdict', pass: verdict.pass, reasons: verdict.reasons, details: verdict });
  e.push({ t: 1605, type: 'run-end', status: 'fail' });
  return e as unknown as JournalEntry[];
}

/** One connection carrying `n` in-order EVENT/ACK pairs. */
function longRun(n: number): JournalEntry[] {
  const e: Entry[] = [
    {
      t: 0,
      type: 'run-start',
      schema: 1,
      runId: 'r',
      scenario: { name: 'long', file: 'l.yaml', description: '' },
      harnessVersion: '0',
      node: 'v',
      platform: 'p',
      cwd: '/',
      consumerCommand: 'c',
      controlCommand: 'c',
    },
    { t: 1, type: 'stream', role: 'consumer', stream: 'consumer', host: 'h', port: 1, db: 'c.db' },
    { t: 2, type: 'process-start', role: 'consumer', incarnation: 1, pid: 1, command: 'c', env: {} },
    { t: 3, type: 'wire', stream: 'consumer', conn: 1, kind: 'open', tag: 'incarnation 1' },
    { t: 4, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: 'RESUME -1\n' },
  ];
  for (let s = 0; s < n; s++) {
    e.push({ t: 10 + s, type: 'wire', stream: 'consumer', conn: 1, kind: 'send', line: `EVENT ${s} 1\n` });
    e.push({ t: 10.5 + s, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: `ACK ${s}\n` });
  }
  e.push({ t: 20 + n, type: 'wire', stream: 'consumer', conn: 1, kind: 'close', by: 'publisher', reason: 'done' });
  return e as unknown as JournalEntry[];
}

const wireLines = (journal: JournalEntry[]) => journal.filter((e) => e.type === 'wire' && (e.kind === 'send' || e.kind === 'recv')).length;
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;
const writeJournal = (dir: string, journal: JournalEntry[]) => writeFileSync(join(dir, 'journal.jsonl'), journal.map((e) => `${JSON.stringify(e)}\n`).join(''));

t.test('sequence diagram: one arrow per wire line, lanes in reading order, crash and exit marks', async (t) => {
  for (const mutant of [false, true]) {
    const journal = ackCrash({ mutant });
    const d = renderSequenceDiagram(journal);
    t.equal(d.arrows, wireLines(journal), `${mutant ? 'mutant' : 'reference'}: arrows = send/recv lines`);
    t.equal(count(d.svg, /<g class="msg /g), wireLines(journal), 'and that many arrow groups in the SVG');
    t.equal(d.bands, 0, 'nothing collapsed in a small run');
    t.same(
      d.lanes.map((l) => l.title),
      ['control', 'publisher', 'consumer #1', 'consumer #2'],
    );
    t.equal(count(d.svg, /class="mark crash"/g), 1, 'one crash mark (exit 86)');
    t.equal(count(d.svg, /class="mark exit"/g), 2, 'control and incarnation 2 exit 0');
    t.equal(count(d.svg, /class="msg msg-RESUME/g), 3, 'three RESUME arrows');
    t.match(d.svg, /fault exit@ack:1/, 'the incarnation lane names its fault plan');
  }
  const mutant = renderSequenceDiagram(ackCrash({ mutant: true }));
  t.equal(count(mutant.svg, /class="msg msg-ACK culprit"/g), 1, 'the ACK the verdict names is highlighted');
  t.match(mutant.svg, /named in the verdict/);
});

t.test('sequence diagram: fault entries become shaded bands; a fault never lifted runs to the end', async (t) => {
  const lifted = renderSequenceDiagram(ackCrash({ fault: 'lifted' }));
  t.equal(lifted.faults, 1);
  t.equal(count(lifted.svg, /<g class="fault-band"/g), 1);
  t.match(lifted.svg, /slow-link \(latency\)/);
  t.match(lifted.svg, /fault applied: slow-link/);
  t.match(lifted.svg, /fault lifted: slow-link/);
  const open = renderSequenceDiagram(ackCrash({ fault: 'open' }));
  t.equal(open.faults, 1);
  t.match(open.svg, /still active/);
  t.equal(renderSequenceDiagram(ackCrash()).faults, 0);
});

t.test('a signal fault is an instant: a mark on the incarnation it hit, not a band', async (t) => {
  const journal = ackCrash({
    extra: [{ type: 'fault', action: 'apply', name: 'kill-1', kind: 'signal', detail: 'SIGKILL to consumer incarnation 1 (pid 11)', incarnation: 1 }],
  });
  const d = renderSequenceDiagram(journal);
  t.equal(d.faults, 0, 'no band');
  t.equal(count(d.svg, /class="mark signal"/g), 1);
  t.match(d.svg, /kill-1 \(signal\) SIGKILL to consumer incarnation 1/);
  t.match(renderHtml(journal).html, /<td>kill-1<\/td><td>signal<\/td>/, 'and a row in the faults table');
});

t.test('sequence diagram: a long run of uneventful traffic collapses into one labelled band', async (t) => {
  const journal = longRun(5000);
  const d = renderSequenceDiagram(journal);
  t.equal(d.bands, 1);
  t.equal(d.collapsed, 10000 - 6, 'everything but three lines on each side');
  t.equal(d.arrows, 1 + 6, 'RESUME and the six context lines are still arrows');
  t.ok(d.rows < 20, `few rows (${d.rows})`);
  t.match(d.svg, /publisher → consumer #1: EVENT 2…4998, 4 997 lines/);
  t.match(d.svg, /consumer #1 → publisher: ACK 1…4997, 4 997 lines/);
  t.equal(d.arrows + d.collapsed, wireLines(journal), 'every wire line is either drawn or counted in a band');

  const focused = renderSequenceDiagram(journal, { focusSeqs: [2500] });
  t.equal(focused.bands, 2, 'a seq the verdict names splits the band and stays visible');
  t.match(focused.svg, />EVENT 2500 1</);
  t.match(focused.svg, />ACK 2500</);

  const short = renderSequenceDiagram(longRun(5));
  t.equal(short.bands, 0, 'a short run is not worth collapsing');
  t.equal(short.arrows, 11);
});

t.test('sequence diagram: reconnect storms and floods of unknown entries stay bounded', async (t) => {
  const e = longRun(10) as unknown as Entry[];
  for (let i = 0; i < 3000; i++) e.push({ t: 100 + i, type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: `RESUME ${i}\n` });
  for (let i = 0; i < 300; i++) e.push({ t: 5000 + i, type: 'heartbeat', n: i });
  const d = renderSequenceDiagram(e as unknown as JournalEntry[], { maxRows: 500 });
  t.ok(d.rows <= 500, `rows bounded (${d.rows})`);
  t.match(d.svg, /RESUME -?\d+…\d+/);
  t.match(d.svg, /heartbeat ×/, 'a flood of unknown entries is counted, not drawn one by one');
});

t.test('unknown journal entry types are rendered, not fatal', async (t) => {
  const journal = ackCrash({
    extra: [
      { type: 'future-thing', role: 'consumer', incarnation: 1, weird: { nested: [1, 2] } },
      { type: 'checkpoint-sample', value: 3 },
    ],
  });
  const d = renderSequenceDiagram(journal);
  t.match(d.svg, /future-thing/);
  t.match(d.svg, /checkpoint-sample/);
  const { html } = renderHtml(journal);
  t.match(html, /Other journal entries/);
  t.match(html, /<code>future-thing<\/code>/);
  t.equal(d.arrows, wireLines(journal));
});

t.test('hostile output and wire bytes are escaped; the page is self-contained', async (t) => {
  const journal = ackCrash({
    stdout: '<script>alert("x")</script>\n',
    stderr: "</pre><img src=x onerror=alert(1)> & 'quoted' \u0000\u001b[31m",
    wireLine: 'EVENT <b>1</b> \u0007\n',
  });
  const { html } = renderHtml(journal);
  t.notMatch(html, /<script/i, 'no script element at all');
  t.notMatch(html, /<img/i);
  t.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
  t.match(html, /&lt;\/pre&gt;&lt;img src=x onerror=alert\(1\)&gt; &amp; &#39;quoted&#39; \\x00\\x1b\[31m/);
  t.match(html, /EVENT &lt;b&gt;1&lt;\/b&gt; \\x07/, 'the bad wire line, visible and escaped');
  t.notMatch(html, /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/, 'no raw control bytes');
  t.match(html, /Content-Security-Policy" content="default-src 'none'/, 'a CSP forbids any network access and script');
  t.notMatch(html, /\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i, 'no external resource');
  t.equal(escapeMarkup(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  t.equal(showLine('ACK 1\r\n'), 'ACK 1\\r');
});

t.test('explanation: the verdict first, in plain words, then the smallest diff', async (t) => {
  const x = explainRun(ackCrash({ mutant: true }));
  t.equal(x.status, 'fail');
  t.match(x.headline, /^incarnation 1 sent ACK 1 at 0\.\d{3} s, which it must not send: .*written before seq 1 was committed/);
  t.match(x.reasons.join('\n'), /incarnation 2 never sent ACK 1/);
  t.match(x.diff[0], /^incarnation 1: ACKs 0, 1 — expected 0 \(extra: ACK 1 at 0\.\d{3} s\)$/);
  t.match(x.diff[1], /^incarnation 2: ACKs 2 — expected 1, 2 \(missing: ACK 1\)$/);
  t.equal(x.diff[2], "ledger: the consumer's file matches the script (last 2, total 9, 3 rows)");

  const lost = explainRun(lostEvent());
  t.equal(lost.status, 'fail');
  t.equal(lost.diff[0], 'ledger: seq 7 missing; total 33, expected 39');
  t.equal(lost.diff[1], "publisher saw ACK 7 at 1.204 s but the consumer's file never held seq 7");
  t.same(lost.consumer?.missing, [7]);

  const pass = explainRun(ackCrash());
  t.equal(pass.status, 'pass');
  t.same(pass.diff, []);
  t.match(pass.headline, /last 2, total 9/);

  const { html } = renderHtml(ackCrash({ mutant: true }));
  const at = (s: string) => html.indexOf(s);
  t.ok(
    at('id="verdict"') < at('id="state"') &&
      at('id="state"') < at('id="diagram"') &&
      at('id="diagram"') < at('id="output"') &&
      at('id="output"') < at('id="scenario"'),
    'verdict, state, diagram, output, scenario: in that order',
  );
  t.match(html, /<span class="status">FAIL<\/span><h1>ack-crash<\/h1>/);
  t.match(html, /Smallest diff/);
  t.match(html, /name: ack-crash\nevents:/, 'the scenario file itself');
});

t.test('seqList', async (t) => {
  t.equal(seqList([7]), 'seq 7');
  t.equal(seqList([9, 3, 4]), 'seqs 3, 4, 9');
  t.equal(seqList(Array.from({ length: 8901 }, (_, i) => i + 100)), 'seqs 100…9000 (8 901 seqs)');
  t.equal(seqList([1, 5, 6, 7, 12]), 'seqs 1, 5…7, 12 (5 seqs)');
});

t.test('renderRunFolder writes the three reports, also from a partial journal', async (t) => {
  const dir = t.testdir({ run: {} });
  const runDir = join(dir, 'run');
  writeJournal(runDir, ackCrash({ mutant: true }));
  const r = renderRunFolder(runDir, { latestIn: dir });
  t.same(
    r.files.map((f) => f.slice(runDir.length + 1)),
    ['summary.md', 'report.html', 'junit.xml'],
  );
  for (const f of r.files) t.ok(statSync(f).size > 0);
  t.same(
    readdirSync(runDir).filter((f) => f.includes('.tmp')),
    [],
    'no temporary file left',
  );
  t.equal(readlinkSync(join(dir, 'latest')), 'run', 'latest is a relative link to the run');
  t.equal(r.explanation.status, 'fail');

  // Interrupted: the journal stops after incarnation 2 started, the last line cut mid-write.
  const journal = ackCrash({ mutant: true });
  const cut = journal.findIndex((e) => e.type === 'process-start' && e.incarnation === 2);
  const partialDir = join(dir, 'partial');
  mkdirSync(partialDir);
  writeFileSync(
    join(partialDir, 'journal.jsonl'),
    `${journal
      .slice(0, cut + 1)
      .map((e) => JSON.stringify(e))
      .join('\n')}\n{"t":99,"type":"wi`,
  );
  const p = renderRunFolder(partialDir);
  t.equal(p.explanation.status, 'interrupted');
  t.equal(p.explanation.complete, false);
  t.match(p.explanation.headline, /the run did not finish: the journal stops at .* after consumer incarnation 2 started \(pid 12\)/);
  const html = readFileSync(join(partialDir, 'report.html'), 'utf8');
  t.match(html, /<span class="status">INTERRUPTED<\/span>/);
  t.match(html, /no run-end: partial/);
  t.match(readFileSync(join(partialDir, 'junit.xml'), 'utf8'), /<error message="the run did not finish[^"]*" type="chaoslab.interrupted">/);
  t.match(readFileSync(join(partialDir, 'summary.md'), 'utf8'), /INTERRUPTED/);
  t.throws(() => renderRunFolder(join(dir, 'nothing')), /no journal\.jsonl/);
});

t.test('latest: switched atomically, never missing or broken while two writers race', async (t) => {
  const dir = t.testdir({ a: { 'journal.jsonl': '' }, b: { 'journal.jsonl': '' } });
  switchLatest(dir, join(dir, 'a'));
  t.equal(latestTarget(dir), join(dir, 'a'));
  const moduleUrl = new URL('../dist/harness/report/run-folder.js', import.meta.url).href;
  if (!existsSync(new URL(moduleUrl))) {
    t.skip('dist/ is not built (make build): the race needs the compiled module in child processes');
    return;
  }
  const writer = (run: string) =>
    new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { switchLatest } = await import(${JSON.stringify(moduleUrl)}); for (let i = 0; i < 1500; i++) switchLatest(${JSON.stringify(dir)}, ${JSON.stringify(join(dir, run))});`,
        ],
        { stdio: 'inherit' },
      );
      child.on('exit', resolve);
    });
  const writers = Promise.all([writer('a'), writer('b')]);
  let done = false;
  void writers.then(() => (done = true));
  let checks = 0;
  const broken: string[] = [];
  while (!done) {
    for (let i = 0; i < 200; i++, checks++) {
      try {
        if (!lstatSync(join(dir, 'latest')).isSymbolicLink()) broken.push('not a symlink');
        statSync(join(dir, 'latest', 'journal.jsonl'));
      } catch (error) {
        broken.push(String(error));
      }
    }
    await new Promise((r) => setImmediate(r));
  }
  t.same(await writers, [0, 0], 'both writers finished');
  t.same(broken.slice(0, 3), [], `latest was valid at each of ${checks} checks`);
  t.ok(['a', 'b'].includes(readlinkSync(join(dir, 'latest'))));
  t.same(
    readdirSync(dir).filter((n) => n.startsWith('.latest-')),
    [],
    'no temporary link left',
  );
});

t.test('cleanRuns keeps the newest N, the latest one and runs still being written', async (t) => {
  const done = (name: string) => ({
    [name]: { 'journal.jsonl': '{"t":0,"type":"run-start"}\n{"t":1,"type":"run-end","status":"pass"}\n', 'report.html': 'x' },
  });
  const dir = t.testdir({
    ...done('20260101-000001-a-aaaa'),
    ...done('20260101-000002-b-bbbb'),
    ...done('20260101-000003-c-cccc'),
    ...done('20260101-000004-d-dddd'),
    '20260101-000005-e-eeee': { 'journal.jsonl': '{"t":0,"type":"run-start"}\n' }, // running
    '20260101-000000-z-zzzz': { 'journal.jsonl': '{"t":0,"type":"run-start"}\n' }, // crashed long ago
    '20251231-000000-catalogue-yyyy': { ...done('20251231-000001-a-1111'), ...done('20251231-000002-b-2222'), 'junit.xml': '' }, // a batch: one unit
    'not-a-run': { 'notes.txt': 'keep me' },
  });
  const old = new Date(Date.now() - 3600_000);
  utimesSync(join(dir, '20260101-000000-z-zzzz', 'journal.jsonl'), old, old);
  symlinkSync('20260101-000001-a-aaaa', join(dir, 'latest'));
  t.same(
    listRuns(dir).map((r) => r.name.slice(16, 17)),
    ['e', 'd', 'c', 'b', 'a', 'z', 'c'],
    'newest first',
  );
  t.same(
    listRuns(dir).map((r) => r.kind),
    ['run', 'run', 'run', 'run', 'run', 'run', 'batch'],
  );

  const dry = cleanRuns(dir, 3, { dryRun: true });
  t.same(
    dry.removed.map((p) => p.slice(-6)),
    ['b-bbbb', 'z-zzzz', 'e-yyyy'],
  );
  t.ok(existsSync(join(dir, '20260101-000002-b-bbbb')), 'a dry run removes nothing');

  const r = cleanRuns(dir, 3);
  t.same(
    r.removed.map((p) => p.slice(-6)),
    ['b-bbbb', 'z-zzzz', 'e-yyyy'],
    'older runs go, the crashed one and the old batch too; a, the latest, stays',
  );
  t.same(
    readdirSync(dir).sort(),
    ['20260101-000001-a-aaaa', '20260101-000003-c-cccc', '20260101-000004-d-dddd', '20260101-000005-e-eeee', 'latest', 'not-a-run'],
    'latest target, running run and foreign folders stay',
  );

  symlinkSync('20260101-000002-b-bbbb', join(dir, '.latest-dangling'));
  const gone = new Date(Date.now() - 120_000);
  const { lutimesSync } = await import('node:fs');
  lutimesSync(join(dir, '.latest-dangling'), gone, gone);
  switchLatest(dir, join(dir, '20260101-000003-c-cccc'));
  const zero = cleanRuns(dir, 0);
  t.same(
    zero.removed.map((p) => p.slice(-6)),
    ['d-dddd', 'a-aaaa'],
  );
  t.equal(zero.latest, join(dir, '20260101-000003-c-cccc'));
  t.notOk(existsSync(join(dir, '.latest-dangling')), 'stale temporary links are removed');
  t.throws(() => cleanRuns(dir, -1), /whole number/);
});

t.test('resolveRunFolders: a run folder, a journal file, a reports folder (its latest), a batch', async (t) => {
  const dir = t.testdir({
    run: { 'journal.jsonl': '' },
    older: { 'journal.jsonl': '' },
    empty: {},
    batch: { 'junit.xml': '', r1: { 'journal.jsonl': '' }, r2: { 'journal.jsonl': '' } },
  });
  switchLatest(dir, join(dir, 'run'));
  switchLatest(join(dir, 'batch'), join(dir, 'batch', 'r2'));
  t.same(resolveRunFolders(join(dir, 'run')), { runs: [join(dir, 'run')] });
  t.same(resolveRunFolders(join(dir, 'run', 'journal.jsonl')), { runs: [join(dir, 'run')] });
  t.same(resolveRunFolders(dir), { runs: [join(dir, 'run')] }, 'a reports folder: its latest run only');
  t.same(resolveRunFolders(join(dir, 'latest')), { runs: [join(dir, 'run')] }, 'the real folder, not the link');
  t.same(resolveRunFolders(join(dir, 'batch')), { runs: [join(dir, 'batch', 'r1'), join(dir, 'batch', 'r2')], batch: join(dir, 'batch') });
  switchLatest(dir, join(dir, 'batch'));
  t.same(resolveRunFolders(dir), { runs: [join(dir, 'batch', 'r1'), join(dir, 'batch', 'r2')], batch: join(dir, 'batch') }, 'latest may be a batch');
  t.throws(() => resolveRunFolders(join(dir, 'empty')), /not a run folder/);
  t.throws(() => resolveRunFolders(join(dir, 'missing')), /no such run folder/);
});

t.test('chaoslab report and chaoslab clean', async (t) => {
  const dir = t.testdir({ '20260101-000001-a-aaaa': {}, '20260101-000002-b-bbbb': {} });
  writeJournal(join(dir, '20260101-000001-a-aaaa'), ackCrash());
  writeJournal(join(dir, '20260101-000002-b-bbbb'), ackCrash({ mutant: true }));
  const program = () => {
    const p = new Command('chaoslab').exitOverride().configureOutput({ writeErr: () => {} });
    reportCommand.register(p);
    cleanCommand.register(p);
    return p;
  };
  const run = async (args: string[]) => {
    let out = '';
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => {
      out += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      await program().parseAsync(['node', 'chaoslab', ...args]);
    } finally {
      process.stdout.write = write;
    }
    return out;
  };
  const junit = join(dir, 'all.xml');
  const out = await run(['report', join(dir, '20260101-000001-a-aaaa'), join(dir, '20260101-000002-b-bbbb'), '--junit', junit]);
  t.match(out, /PASS {2}ack-crash/);
  t.match(out, /FAIL {2}ack-crash/);
  t.match(out, /wrote .*report\.html/);
  t.match(readFileSync(junit, 'utf8'), /tests="2" failures="1" errors="0"/);
  t.ok(existsSync(join(dir, '20260101-000002-b-bbbb', 'report.html')));

  const batch = join(dir, '20260101-000003-catalogue-cccc');
  mkdirSync(join(batch, 'r1'), { recursive: true });
  writeJournal(join(batch, 'r1'), ackCrash({ mutant: true }));
  writeFileSync(join(batch, 'junit.xml'), '');
  const batchOut = await run(['report', batch]);
  t.match(batchOut, /wrote .*catalogue-cccc\/junit\.xml \(1 test case\)/);
  t.match(readFileSync(join(batch, 'junit.xml'), 'utf8'), /tests="1" failures="1"/);
  t.ok(existsSync(join(batch, 'r1', 'report.html')));

  const cleaned = await run(['clean', '--keep', '1', '--reports', dir]);
  t.match(cleaned, /removed 2 run folders, kept 1/);
  t.notOk(existsSync(join(dir, '20260101-000001-a-aaaa')));
  t.ok(existsSync(batch), 'the newest (a batch) is kept');
  await t.rejects(run(['clean', '--keep', 'lots', '--reports', dir]), /whole number/);
});
