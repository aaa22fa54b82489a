// report.html opened from disk in a real headless Chromium (Debian's chromium, driven by
// playwright-core): the verdict is on the first screen, the diagram has one arrow per wire
// line of this small run, the ACK the verdict names is highlighted, the fault is a visible shaded
// band, and the page makes no request beyond its own file. The run is a golden journal
// (ack-crash against the ack-before-commit mutant) with a network fault and hostile output added
// by the typed builder. A screenshot stays in the rendered run folder (.tap/fixtures/…).
// `make browser` (a prerequisite of `make test`) installs chromium where apt can; where
// neither it nor playwright-core can be had, this test skips and says why.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { classHtml } from '../../../harness/grade/class/class-html.js';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { batchViewOf } from '../../../harness/report/batch-view.js';
import { renderRunFolder } from '../../../harness/report/render-all.js';
import { renderBatchFiles } from '../../../harness/report/render-batch.js';
import { smallClass } from '../../helpers/grade.js';
import { HOSTILE_VALUE, hostileRun, SHOWN_ESCAPE } from '../../helpers/hostile.js';
import { cutAfter, find, golden, insertAfter, wireLines, withOutput, writeRunFolder } from '../../helpers/journals.js';

t.setTimeout(300_000);

/** Headless Chromium for one test, closed at its end; undefined (the test skipped, saying why) where playwright-core or Chromium is missing. */
async function launchChromium(t: Test): Promise<import('playwright-core').Browser | undefined> {
  let playwright: typeof import('playwright-core');
  try {
    playwright = await import('playwright-core');
  } catch {
    t.pass('the browser test', { skip: 'playwright-core is not installed: run `npm ci` (it is a devDependency)' });
    return undefined;
  }
  const executablePath = findChromium();
  if (!executablePath) {
    t.pass('the browser test', {
      skip: "no Chromium found: `make browser` installs Debian's chromium (apt-get install chromium, needs root or sudo); or set CHROMIUM_PATH to a Chromium/Chrome binary",
    });
    return undefined;
  }
  const browser = await playwright.chromium.launch({ executablePath, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  t.teardown(() => browser.close());
  return browser;
}

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

/** The mutant's ack-crash run, with a latency toxic while incarnation 1 runs and a script in its output. */
function failingRun(): JournalEntry[] {
  let journal = golden('ack-crash-ack-before-commit');
  const start = find(journal, 'process-start', (e) => e.role === 'consumer' && e.incarnation === 1);
  journal = insertAfter(journal, start, {
    type: 'fault',
    action: 'apply',
    name: 'slow-link',
    kind: 'toxic',
    detail: 'latency downstream latency=100 jitter=10',
    incarnation: 1,
  });
  const exit = find(journal, 'process-exit', (e) => e.role === 'consumer' && e.incarnation === 1);
  journal = insertAfter(journal, exit, { type: 'fault', action: 'lift', name: 'slow-link', kind: 'toxic', detail: 'latency removed (incarnation 1 ended)' });
  return withOutput(journal, 1, { stdout: '<script>document.title="pwned"</script>\n', stderr: 'exit@ack:1\n' });
}

t.test('report.html in headless Chromium: verdict, arrows, culprit, fault band; screenshot kept', async (t) => {
  const browser = await launchChromium(t);
  if (!browser) return;

  t.saveFixture = true; // the run folders, with their screenshots, stay in .tap/fixtures/
  const dir = t.testdir();
  const journal = failingRun();
  const runDir = writeRunFolder(join(dir, '20261130-234759-ack-crash-6bg1'), journal);
  const rendered = renderRunFolder(runDir, { latestIn: dir });
  const passDir = writeRunFolder(join(dir, '20261130-234800-resync-required-u2pl'), golden('resync-required-pass'));
  renderRunFolder(passDir);

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (err) => problems.push(String(err)));
  await page.goto(pathToFileURL(join(dir, 'latest', 'report.html')).href, { waitUntil: 'load' });

  t.equal(await page.title(), 'FAIL ack-crash — chaoslab', 'hostile stdout did not run');
  const banner = page.locator('#verdict');
  t.equal(await banner.locator('.status').textContent(), 'FAIL');
  t.match(await banner.locator('.headline').textContent(), /^incarnation 1 sent ACK 1 at 0\.589 s, which it must not send/);
  t.match(await banner.locator('pre.diff').textContent(), /incarnation 1: ACKs 0, 1 — expected 0 \(extra: ACK 1 at 0\.589 s\)/);
  const box = await banner.boundingBox();
  t.ok(box && box.y < 50 && box.height > 100, 'the verdict banner is the first thing on the page');
  t.equal(await banner.evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(192, 22, 43)', 'and it is red');

  const wire = wireLines(journal);
  t.equal(await page.locator('svg.sequence g.msg').count(), wire, `one arrow per wire line (${wire})`);
  t.equal(rendered.diagram.arrows, wire);
  const culprit = page.locator('svg.sequence g.msg.culprit');
  t.equal(await culprit.count(), 1, 'the ACK the verdict names is highlighted');
  t.equal(await culprit.getAttribute('data-t'), '589.029', 'at the time the finding names');
  t.match(await culprit.locator('title').textContent(), /consumer#1 → publisher {2}ACK 1$/);
  t.equal(await page.locator('svg.sequence g.collapsed').count(), 0, 'nothing collapsed in a small run');
  const bands = page.locator('svg.sequence g.fault-band');
  t.equal(await bands.count(), 1, 'one shaded fault band');
  const bandBox = await bands.first().locator('rect').boundingBox();
  t.ok(bandBox && bandBox.height >= 60 && bandBox.width > 500, `the band is visible and spans the lanes (${JSON.stringify(bandBox)})`);
  t.match(await bands.first().textContent(), /slow-link \(toxic\) latency downstream/);
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

  // A pass whose consumer stops early on purpose (resync-required): green, and nothing marked wrong.
  await page.goto(pathToFileURL(join(passDir, 'report.html')).href, { waitUntil: 'load' });
  t.equal(await page.title(), 'PASS resync-required — chaoslab');
  t.equal(await page.locator('#verdict .status').textContent(), 'PASS');
  t.equal(await page.locator('#verdict').evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(29, 122, 51)', 'green');
  t.same(await page.locator('#state tr:nth-child(2) td').allTextContents(), ['2', '9', '3', '9', ''], 'expected: last 2, total 9 (not the control’s 9, 19)');
  t.equal(await page.locator('tr.bad, .bad-text').count(), 0, 'no row marked wrong');
  t.equal(await page.locator('#state tr.good').count(), 2, 'consumer and control both as expected of them');
  await page.screenshot({ path: join(passDir, 'report.png'), fullPage: true });
  t.same(problems, [], 'no console error, no CSP violation');
});

t.test('a batch index.html in headless Chromium: a row per run, the status filters work without script', async (t) => {
  const browser = await launchChromium(t);
  if (!browser) return;
  t.saveFixture = true;
  const dir = t.testdir();
  const pass = golden('ack-crash-pass');
  const journals: [string, string, JournalEntry[]][] = [
    ['20261201-020000-ack-crash-aaaa', 'ack-crash', pass],
    [
      '20261201-020001-ack-crash-bbbb',
      'ack-crash #2',
      withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr: 'Traceback (most recent call last):\nValueError: 1\n' }),
    ],
    ['20261201-020002-resync-required-cccc', 'resync-required', golden('resync-required-pass')],
    ['20261201-020003-ack-crash-dddd', 'ack-crash #4', cutAfter(pass, find(pass, 'toxiproxy'))],
  ];
  const runs = journals.map(([name, label, journal]) => {
    const runDir = writeRunFolder(join(dir, name), journal);
    return { label, runDir, view: renderRunFolder(runDir, { entries: journal }).view };
  });
  renderBatchFiles(
    batchViewOf(dir, { name: 'catalogue', startedAt: '2026-12-01T02:00:00', endedAt: '2026-12-01T02:00:09', commandLine: 'chaoslab run --all' }, runs),
  );

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (err) => problems.push(String(err)));
  await page.goto(pathToFileURL(join(dir, 'index.html')).href, { waitUntil: 'load' });
  t.equal(await page.title(), 'catalogue: 2 passed, 1 failed, 1 interrupted — chaoslab');
  t.equal(await page.locator('#batch').evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(192, 22, 43)', 'red: a run failed');
  const visible = async () =>
    page.locator('tr.run').evaluateAll((rows) => rows.filter((r) => (r as HTMLElement).offsetParent !== null).map((r) => r.getAttribute('data-status')));
  t.same(await visible(), ['fail', 'interrupted', 'pass', 'pass'], 'all runs, failures first');
  await page.click('label[for="f-fail"]');
  t.same(await visible(), ['fail'], 'Failed: only the failure');
  t.match(await page.locator('tr.run:visible td.finding pre').textContent(), /ValueError: 1/, 'with the consumer’s stderr');
  await page.click('label[for="f-pass"]');
  t.same(await visible(), ['pass', 'pass']);
  await page.click('label[for="f-error"]');
  t.same(await visible(), [], 'Error: none');
  t.ok(await page.locator('p.none').isVisible(), 'and the page says so');
  await page.click('label[for="f-interrupted"]');
  t.same(await visible(), ['interrupted']);
  await page.click('label[for="f-all"]');
  t.equal((await visible()).length, 4);
  await page.click('tr.run[data-status="fail"] td.label a');
  t.equal(await page.title(), 'FAIL ack-crash — chaoslab', 'the link opens the run’s report.html');
  t.same(
    requests.filter((u) => !u.startsWith('file:')),
    [],
    'no network request',
  );
  t.same(problems, [], 'no console error, no CSP violation');
});

/** Japanese as a consumer prints it: kana, kanji and full-width punctuation. */
const JAPANESE = '接続が切れました：再接続します（バックオフ 150 ミリ秒）';
const JAPANESE_CHARS = [...JAPANESE].filter((c) => c.charCodeAt(0) > 0x2e7f).length;
/** The Japanese faces a page may name; any of them draws the text (IPA is what `make browser` installs). */
const JAPANESE_FACE = /Noto Sans (Mono )?CJK JP|Noto Sans JP|Hiragino|Yu Gothic|Meiryo|MS Gothic|Osaka|IPA/;

t.test('Japanese in a stored value renders with a Japanese face in Chromium, in text and in monospace', async (t) => {
  const browser = await launchChromium(t);
  if (!browser) return;
  const installed = execFileSync('sh', ['-c', 'fc-list :lang=ja family 2>/dev/null || true']).toString().trim();
  if (!installed) {
    t.pass('the glyph check', { skip: 'no Japanese font on this machine (`make browser` installs fonts-ipafont-gothic where apt can)' });
    return;
  }
  t.saveFixture = true;
  const dir = t.testdir();
  const journal = withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr: `${JAPANESE}\n` });
  const runDir = writeRunFolder(join(dir, '20261201-030000-ack-crash-jjjj'), journal);
  const { view } = renderRunFolder(runDir, { entries: journal });
  renderBatchFiles(
    batchViewOf(dir, { name: 'ja', startedAt: '2026-12-01T03:00:00', endedAt: '2026-12-01T03:00:01', commandLine: 'chaoslab run ack-crash' }, [
      { label: '接続テスト', runDir, view },
    ]),
  );
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const cdp = await page.context().newCDPSession(page);
  /** The faces Chromium drew an element's text with, and how many glyphs each drew. */
  const facesOf = async (selector: string): Promise<{ familyName: string; glyphCount: number }[]> => {
    await cdp.send('DOM.enable');
    await cdp.send('CSS.enable');
    const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector });
    return (await cdp.send('CSS.getPlatformFontsForNode', { nodeId })).fonts;
  };
  const japaneseGlyphs = (faces: { familyName: string; glyphCount: number }[]) =>
    faces.filter((f) => JAPANESE_FACE.test(f.familyName)).reduce((n, f) => n + f.glyphCount, 0);

  await page.goto(pathToFileURL(join(runDir, 'report.html')).href, { waitUntil: 'load' });
  const stderr = page.locator('#output pre', { hasText: JAPANESE }).first();
  t.match(await stderr.textContent(), JAPANESE, 'the stored stderr is on the page');
  t.match(await stderr.evaluate((el) => getComputedStyle(el).fontFamily), /"Noto Sans Mono CJK JP".*IPAGothic/, 'monospace names Japanese faces');
  const monoFaces = await facesOf('#output pre.out');
  t.ok(japaneseGlyphs(monoFaces) >= JAPANESE_CHARS, `every Japanese character drawn by a Japanese face, no tofu (${JSON.stringify(monoFaces)})`);
  await page.screenshot({ path: join(runDir, 'report-ja.png'), fullPage: true });

  await page.goto(pathToFileURL(join(dir, 'index.html')).href, { waitUntil: 'load' });
  const label = page.locator('td.label a').first();
  t.equal(await label.textContent(), '接続テスト');
  t.match(await label.evaluate((el) => getComputedStyle(el).fontFamily), /"Hiragino Sans".*"Noto Sans CJK JP".*IPAPGothic/, 'text names Japanese faces');
  const textFaces = await facesOf('td.label a');
  t.ok(japaneseGlyphs(textFaces) >= 5, `the label drawn by a Japanese face (${JSON.stringify(textFaces)})`);
  // A drawn glyph of a CJK face is about one em wide; what matters is that it is no .notdef box of a Latin face.
  const width = await label.evaluate((el) => el.getBoundingClientRect().width / Number.parseFloat(getComputedStyle(el).fontSize));
  t.ok(width > 4 && width < 6, `five full-width characters are about five ems wide (${width.toFixed(2)})`);
});

t.test('hostile consumer bytes in Chromium: report.html, the batch index and the class page run nothing, load nothing', async (t) => {
  const browser = await launchChromium(t);
  if (!browser) return;
  const dir = t.testdir();
  // The hostile run (helpers/hostile.ts), with a value that would retitle the page if it ever ran.
  const pwn = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>';
  const journal = withOutput(hostileRun(), 1, { stdout: `${HOSTILE_VALUE} ${pwn}` });
  const runDir = writeRunFolder(join(dir, '20261201-020000-duplicate-delivery-evil'), journal);
  const { view } = renderRunFolder(runDir, { entries: journal });
  renderBatchFiles(
    batchViewOf(dir, { name: 'evil', startedAt: '2026-12-01T02:00:00', endedAt: '2026-12-01T02:00:09', commandLine: pwn }, [
      { label: `${pwn} × duplicate-delivery`, runDir, view },
    ]),
  );
  const report = smallClass();
  report.submissions[0]!.submission = `${HOSTILE_VALUE}${pwn}`;
  writeFileSync(join(dir, 'class.html'), classHtml(report));

  const page = await browser.newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  const dialogs: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (err) => problems.push(String(err)));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  for (const file of [join(runDir, 'report.html'), join(dir, 'index.html'), join(dir, 'class.html')]) {
    const url = pathToFileURL(file).href;
    await page.goto(url, { waitUntil: 'load' });
    const what = file.slice(dir.length + 1);
    t.notMatch(await page.title(), /pwned/, `${what}: no value's script or handler ran`);
    t.same(await page.evaluate(() => [document.images.length, document.scripts.length]), [0, 0], `${what}: no img, no script element`);
    t.match(await page.locator('body').textContent(), '<img src=x onerror="document.title=', `${what}: the markup shown as text`);
    t.same(
      requests.filter((u) => u !== url),
      [],
      `${what}: nothing else requested`,
    );
    requests.length = 0;
  }
  t.match(await page.locator('body').textContent(), SHOWN_ESCAPE, 'the escape sequence shown as text');
  t.same(dialogs, [], 'no alert()');
  t.same(problems, [], 'no console error, no CSP violation');
});
