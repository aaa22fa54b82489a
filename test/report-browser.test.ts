// report.html opened from disk in a real headless Chromium (Debian's chromium, driven by
// playwright-core): the verdict is on the first screen, the diagram has one arrow per wire
// line of this small run, the fault is a visible shaded band, and the page makes no request
// beyond its own file. A screenshot stays in the rendered run folder (.tap/fixtures/…).
// `make browser` (a prerequisite of `make test`) installs chromium where apt can; where
// neither it nor playwright-core can be had, this test skips and says why.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import type { JournalEntry } from '../harness/journal.js';
import { checkLedgerRun } from '../harness/labs/ledger/checker.js';
import type { StoreSnapshot } from '../harness/labs/ledger/store-reader.js';
import { renderRunFolder } from '../harness/report/render-all.js';

t.setTimeout(120_000);

function findChromium(): string | undefined {
  const candidates = [
    process.env.CHROMIUM_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/snap/bin/chromium',
  ];
  for (const c of candidates) {
    if (!c) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      /* next */
    }
  }
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      return (
        execFileSync('sh', ['-c', `command -v ${name}`])
          .toString()
          .trim() || undefined
      );
    } catch {
      /* next */
    }
  }
  return undefined;
}

type Entry = Record<string, unknown>;

/** The ack-before-commit mutant's ack-crash run, with a network fault while incarnation 1 runs. */
function failingRun(): JournalEntry[] {
  const full: [number, number][] = [
    [0, 7],
    [1, 5],
    [2, -3],
  ];
  const plan = {
    file: '/lab/scenarios/ack-crash.yaml',
    name: 'ack-crash',
    description: 'A consumer that crashes after committing an event but before acknowledging it loses nothing.',
    protocol: 'ledger',
    timeoutMs: 2000,
    deadlineMs: 60000,
    events: full.map(([seq, delta]) => ({ seq, delta })),
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
  const snap = (ledger: [number, number][], last: number, total: number): StoreSnapshot => ({ exists: true, checkpoint: [{ id: 1, last, total }], ledger });
  const e: Entry[] = [];
  let t = 0;
  const w = (x: Entry) => e.push({ t: Math.round((t += 7.25) * 1000) / 1000, ...x });
  const wire = (stream: string, conn: number, kind: string, rest: Entry = {}) => w({ type: 'wire', stream, conn, kind, ...rest });
  w({
    type: 'run-start',
    schema: 1,
    runId: '20260102-030405-ack-crash-brws',
    scenario: { name: 'ack-crash', file: plan.file, description: plan.description },
    harnessVersion: '0.1.0',
    node: 'v20',
    platform: 'linux-x64',
    cwd: '/lab',
    consumerCommand: 'node dist/consumer/ledger/mutants/ack-before-commit.js',
    controlCommand: 'node client.js',
  });
  w({ type: 'scenario', source: 'name: ack-crash\nevents:\n  deltas: [7, 5, -3]\n', plan });
  w({ type: 'stream', role: 'control', stream: 'control', host: 'h', port: 1, db: 'control.db' });
  w({ type: 'stream', role: 'consumer', stream: 'consumer', host: 'h', port: 2, db: 'consumer.db' });
  w({ type: 'process-start', role: 'control', incarnation: 1, pid: 10, command: 'c', env: {} });
  w({ type: 'process-start', role: 'consumer', incarnation: 1, pid: 11, command: 'c', env: { CHAOSLAB_FAULT: 'exit@ack:1' } });
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
    durationMs: 50,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  w({ type: 'fault', action: 'apply', name: 'slow-link', kind: 'latency', detail: { latency: 100, jitter: 10 } });
  wire('consumer', 1, 'open', { tag: 'incarnation 1' });
  wire('consumer', 1, 'recv', { line: 'RESUME -1\n' });
  for (const [s, d] of full) wire('consumer', 1, 'send', { line: `EVENT ${s} ${d}\n` });
  wire('consumer', 1, 'recv', { line: 'ACK 0\n' });
  wire('consumer', 1, 'recv', { line: 'ACK 1\n' });
  wire('consumer', 1, 'close', { by: 'consumer', reason: 'closed' });
  w({ type: 'fault', action: 'lift', name: 'slow-link', kind: 'latency' });
  w({
    type: 'process-exit',
    role: 'consumer',
    incarnation: 1,
    code: 86,
    signal: null,
    durationMs: 60,
    stdoutTail: '<script>document.title="pwned"</script>\n',
    stderrTail: 'exit@ack:1\n',
    stdoutBytes: 40,
    stderrBytes: 11,
  });
  w({ type: 'store-read', role: 'consumer', incarnation: 1, when: 'after-exit', db: 'consumer.db', store: snap(full.slice(0, 2), 1, 12) });
  w({ type: 'process-start', role: 'consumer', incarnation: 2, pid: 12, command: 'c', env: {} });
  wire('consumer', 2, 'open', { tag: 'incarnation 2' });
  wire('consumer', 2, 'recv', { line: 'RESUME 1\n' });
  wire('consumer', 2, 'send', { line: 'EVENT 2 -3\n' });
  wire('consumer', 2, 'recv', { line: 'ACK 2\n' });
  wire('consumer', 2, 'close', { by: 'publisher', reason: 'all events acknowledged' });
  w({
    type: 'process-exit',
    role: 'consumer',
    incarnation: 2,
    code: 0,
    signal: null,
    durationMs: 40,
    stdoutTail: '',
    stderrTail: '',
    stdoutBytes: 0,
    stderrBytes: 0,
  });
  w({ type: 'store-read', role: 'consumer', incarnation: 2, when: 'after-exit', db: 'consumer.db', store: snap(full, 2, 9) });
  const verdict = checkLedgerRun(e as unknown as JournalEntry[], (db) => {
    w({ type: 'store-read', role: db.startsWith('control') ? 'control' : 'consumer', when: 'final', db, store: snap(full, 2, 9) });
    return snap(full, 2, 9);
  });
  w({ type: 'verdict', pass: verdict.pass, reasons: verdict.reasons, details: verdict });
  w({ type: 'run-end', status: 'fail' });
  return e as unknown as JournalEntry[];
}

t.test('report.html in headless Chromium: verdict, arrows, fault band; screenshot kept', async (t) => {
  let playwright: typeof import('playwright-core');
  try {
    playwright = await import('playwright-core');
  } catch {
    t.skip('playwright-core is not installed: run `npm ci` (it is a devDependency)');
    return;
  }
  const executablePath = findChromium();
  if (!executablePath) {
    t.skip(
      "no Chromium found: `make browser` installs Debian's chromium (apt-get install chromium, needs root or sudo); or set CHROMIUM_PATH to a Chromium/Chrome binary",
    );
    return;
  }

  t.saveFixture = true; // the run folder, with its screenshot, stays in .tap/fixtures/
  const dir = t.testdir();
  const journal = failingRun();
  const runDir = join(dir, '20260102-030405-ack-crash-brws');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(runDir);
  writeFileSync(join(runDir, 'journal.jsonl'), journal.map((e) => `${JSON.stringify(e)}\n`).join(''));
  const rendered = renderRunFolder(runDir, { latestIn: dir });
  const wireLines = journal.filter((e) => e.type === 'wire' && (e.kind === 'send' || e.kind === 'recv')).length;

  const browser = await playwright.chromium.launch({
    executablePath,
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (err) => problems.push(String(err)));
  const url = pathToFileURL(join(dir, 'latest', 'report.html')).href;
  await page.goto(url, { waitUntil: 'load' });

  t.equal(await page.title(), 'FAIL ack-crash — chaoslab', 'hostile stdout did not run');
  const banner = page.locator('#verdict');
  t.equal(await banner.locator('.status').textContent(), 'FAIL');
  t.match(await banner.locator('.headline').textContent(), /^incarnation 1 sent ACK 1 at 0\.\d{3} s, which it must not send/);
  t.match(await banner.locator('pre.diff').textContent(), /incarnation 1: ACKs 0, 1 — expected 0/);
  const box = await banner.boundingBox();
  t.ok(box && box.y < 50 && box.height > 100, 'the verdict banner is the first thing on the page');
  const color = await banner.evaluate((el) => getComputedStyle(el).backgroundColor);
  t.equal(color, 'rgb(192, 22, 43)', 'and it is red');

  t.equal(await page.locator('svg.sequence g.msg').count(), wireLines, `one arrow per wire line (${wireLines})`);
  t.equal(rendered.diagram.arrows, wireLines);
  t.equal(await page.locator('svg.sequence g.msg.culprit').count(), 1, 'the ACK the verdict names is highlighted');
  t.equal(await page.locator('svg.sequence g.collapsed').count(), 0, 'nothing collapsed in a small run');
  const bands = page.locator('svg.sequence g.fault-band');
  t.equal(await bands.count(), 1, 'one shaded fault band');
  const bandBox = await bands.first().locator('rect').boundingBox();
  t.ok(bandBox && bandBox.height >= 60 && bandBox.width > 500, `the band is visible and spans the lanes (${JSON.stringify(bandBox)})`);
  t.match(await bands.first().textContent(), /slow-link \(latency\)/);
  t.equal(await page.locator('svg.sequence g.mark.crash').count(), 1, 'the crash mark');
  t.same(await page.locator('svg.sequence .lane-head .head').allTextContents(), [
    'control',
    'publisher',
    'consumer #1',
    'consumer #2',
    'control',
    'publisher',
    'consumer #1',
    'consumer #2',
  ]);
  t.match(await page.locator('#output').textContent(), /<script>document\.title="pwned"<\/script>/, 'hostile output shown as text');

  t.same(
    requests.filter((u) => !u.startsWith('file:')),
    [],
    'no network request',
  );
  t.same(problems, [], 'no console error, no CSP violation');

  const screenshot = join(runDir, 'report.png');
  await page.screenshot({ path: screenshot, fullPage: true });
  t.ok(statSync(screenshot).size > 10_000, 'screenshot written');
  t.comment(`screenshot: ${screenshot}`);
});
