// report.html, the sequence diagram, renderRunFolder and the run folder (latest, clean), from
// golden journals recorded from real runs (verdicts included, as the checker wrote them) and
// journals derived from them with the typed builder in helpers/journals.ts: no process, no network.
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import t from 'tap';
import * as cleanCommand from '../../../harness/commands/clean.js';
import * as reportCommand from '../../../harness/commands/report.js';
import type { JournalEntry, JournalEvent } from '../../../harness/record/journal.js';
import { escapeMarkup, showLine } from '../../../harness/text/format.js';
import { renderHtml } from '../../../harness/report/html.js';
import { renderRunFolder } from '../../../harness/report/render-all.js';
import { cleanRuns, latestTarget, listRuns, resolveRunFolders, switchLatest } from '../../../harness/report/run-folder.js';
import { type DiagramOptions, ERROR_COLOR, renderSequenceDiagram } from '../../../harness/report/sequence-diagram.js';
import { OldJournalError, viewOf } from '../../../harness/report/view.js';
import { vocabularyFor } from '../../../harness/report/vocabulary.js';
import {
  append,
  cutAfter,
  find,
  foreignEvent,
  GOLDEN_NAMES,
  golden,
  HOSTILE,
  inOrderRun,
  insertAfter,
  jsonl,
  replace,
  wireLines,
  withOutput,
  withVerdict,
  writeRunFolder,
} from '../../helpers/journals.js';

/** The diagram as report.html draws it: the journal's lab vocabulary, its verdict's findings. */
function diagramOf(journal: readonly JournalEntry[], options?: DiagramOptions) {
  const view = viewOf(journal);
  return renderSequenceDiagram(journal, vocabularyFor(view.protocol), [...view.harnessErrors, ...view.findings], options);
}

const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

/** The highlighted arrows of a diagram: their time and their tooltip (who → whom, the line). */
const culprits = (svg: string) =>
  [...svg.matchAll(/<g class="msg ([^"]*)" data-t="([^"]*)"><title>([^<]*)<\/title>/g)]
    .filter((m) => m[1]!.split(' ').includes('culprit'))
    .map((m) => ({ t: Number(m[2]), title: m[3]!.replace(/^\S+ s {2}/, '') }));

t.test('sequence diagram: one arrow per wire line, lanes in reading order, crash and exit marks', async (t) => {
  for (const name of ['ack-crash-pass', 'ack-crash-ack-before-commit'] as const) {
    const journal = golden(name);
    const d = diagramOf(journal);
    t.equal(d.arrows, wireLines(journal), `${name}: arrows = send/recv lines`);
    t.equal(count(d.svg, /<g class="msg /g), wireLines(journal), 'and that many arrow groups in the SVG');
    t.equal(d.bands, 0, 'nothing collapsed in a small run');
    t.same(
      d.lanes.map((l) => l.title),
      ['control', 'publisher', 'consumer #1', 'consumer #2'],
    );
    t.equal(count(d.svg, /class="mark crash"/g), 1, 'one crash mark (exit 86)');
    t.equal(count(d.svg, /class="mark exit"/g), 2, 'control and incarnation 2 exit 0');
    t.equal(count(d.svg, /class="mark start"/g), 3, 'three process starts');
    t.equal(count(d.svg, /class="mark read"/g), 4, 'two reads after an exit, two final reads');
    t.equal(count(d.svg, /class="msg msg-RESUME/g), 3, 'three RESUME arrows');
    t.equal(d.lanes[2]!.subtitle, 'fault exit@ack:1', 'the incarnation lane names its fault plan');
    t.equal(d.lanes[3]!.subtitle, 'no fault');
  }
  // Connections land on the lane of the process that owns them (the journal's `owner`), however
  // the connection numbers of the two streams interleave.
  const d = diagramOf(golden('ack-crash-ack-before-commit'));
  t.match(d.svg, /<title>0\.852 s {2}consumer#2 → publisher {2}RESUME 1<\/title>/);
  t.match(d.svg, /<title>0\.656 s {2}control → publisher {2}RESUME -1<\/title>/);
  t.match(d.svg, /<title>0\.589 s {2}consumer#1 → publisher {2}ACK 1<\/title>/);
});

t.test('diagram highlights come from the findings’ subjects (seqs and time), never from their sentences', async (t) => {
  const journal = golden('ack-crash-ack-before-commit');
  const { findings } = viewOf(journal);
  t.same(findings[0]!.subject, { process: { role: 'consumer', incarnation: 1 }, seqs: [1], t: 589.029 }, 'the golden finding names ACK 1 by seq and time');
  const extra = [{ t: 589.029, title: 'consumer#1 → publisher  ACK 1' }];
  const d = diagramOf(journal);
  t.same(culprits(d.svg), extra, 'incarnation 1’s extra ACK 1 is the culprit — not the control’s ACK 1, not incarnation 2’s lines');
  t.equal(count(d.svg, /class="msg msg-ACK culprit"/g), 1);
  t.equal(count(d.svg, /named in the verdict/g), 1);

  const reworded = withVerdict(journal, (v) => ({ ...v, headline: 'something', findings: v.findings.map((f, i) => ({ ...f, text: `finding ${i}` })) }));
  t.same(culprits(diagramOf(reworded).svg), extra, 'other words, same subjects: the same culprit');

  const wordsOnly = withVerdict(journal, (v) => ({ ...v, findings: v.findings.map(({ subject: _, ...f }) => f) }));
  t.same(culprits(diagramOf(wordsOnly).svg), [], 'the same words without subjects: nothing highlighted (no sentence is parsed)');
  t.notMatch(diagramOf(wordsOnly).svg, /named in the verdict/);

  const control = find(journal, 'wire', (e) => e.stream === 'control' && e.kind === 'recv' && e.line === 'ACK 1\n');
  const moved = withVerdict(journal, (v) => ({ ...v, findings: [{ code: 'x', text: 'x', subject: { seqs: [1], t: control.t } }] }));
  t.same(culprits(diagramOf(moved).svg), [{ t: control.t, title: 'control → publisher  ACK 1' }], 'the subject’s time picks the line');

  // Every golden journal: the culprits are exactly the wire lines a finding names by seq and time.
  const vocabulary = vocabularyFor('ledger');
  for (const name of GOLDEN_NAMES) {
    const j = golden(name);
    const named = viewOf(j).findings.flatMap((f) => (f.subject?.t === undefined ? [] : [{ t: f.subject.t, seqs: f.subject.seqs ?? [] }]));
    const want = j
      .filter((e) => e.type === 'wire' && (e.kind === 'send' || e.kind === 'recv'))
      .filter((e) => {
        const position = e.type === 'wire' && 'line' in e ? vocabulary.classify(e.line).position : undefined;
        return named.some((n) => n.t === e.t && position !== undefined && n.seqs.includes(position));
      })
      .map((e) => e.t);
    t.same(
      culprits(diagramOf(j).svg).map((c) => c.t),
      want,
      `${name}: ${want.length} culprit${want.length === 1 ? '' : 's'}`,
    );
  }
  t.same(
    culprits(diagramOf(golden('malformed-plus-sign-lenient')).svg).map((c) => c.title.replace(/ {2}⚠.*/, '')),
    ['publisher → consumer#1  EVENT 3 +4', 'consumer#1 → publisher  ACK 3', 'consumer#1 → publisher  ACK 4', 'consumer#1 → publisher  ACK 5'],
    'the line it accepted, then its extra ACKs (ACK 3 sent twice is one finding, highlighted where it first came)',
  );
});

t.test('a line that breaks the grammar is drawn red, in the lab’s words; the lab judges it, not the core', async (t) => {
  const journal = golden('malformed-plus-sign-lenient');
  const injected = find(journal, 'wire', (e) => e.kind === 'send' && e.line === 'EVENT 3 +4\n');
  t.notOk('error' in injected, 'the journal does not mark the injected line: the publisher sent it on purpose');
  const d = diagramOf(journal);
  const red = [...d.svg.matchAll(/<g class="msg msg-error[^"]*" data-t="([^"]*)"><title>([^<]*)<\/title>.*?stroke="([^"]*)"/g)];
  t.same(
    red.map((m) => [Number(m[1]), m[2]!.replace(/^\S+ s {2}/, ''), m[3]]),
    [[injected.t, 'publisher → consumer#1  EVENT 3 +4  ⚠ a &quot;+&quot; sign', ERROR_COLOR]],
    'only the injected line is red, with why',
  );
  const plain = { ...vocabularyFor('ledger'), broken: undefined };
  t.equal(count(renderSequenceDiagram(journal, plain, []).svg, /class="msg msg-error/g), 0, 'a lab that names no broken line gets no red line');
});

t.test('sequence diagram: fault entries become shaded bands; a fault never lifted runs to the end', async (t) => {
  const cuts = golden('cuts-pass');
  const lifted = diagramOf(cuts);
  t.equal(lifted.faults, 3, 'three cuts, three bands');
  t.equal(count(lifted.svg, /<g class="fault-band"/g), 3);
  t.match(lifted.svg, /<g class="fault-band" data-fault="cut-1 \(proxy-down\) proxy disabled \(connections closed, new ones refused\)">/);
  t.match(lifted.svg, /⚡ cut-1 \(proxy-down\) proxy disabled/, 'the band is labelled');
  t.match(lifted.svg, /fault applied: cut-1/);
  t.match(lifted.svg, /fault lifted: cut-1 — proxy enabled \(200 ms passed\)/);
  t.notMatch(lifted.svg, /still active/);

  const interrupted = cutAfter(
    cuts,
    find(cuts, 'fault', (e) => e.name === 'cut-1' && e.action === 'apply'),
  );
  const open = diagramOf(interrupted);
  t.equal(open.faults, 1, 'a run cut short while a fault was on');
  t.match(open.svg, /cut-1 \(proxy-down\) proxy disabled[^<]*\(still active\)/);
  t.match(open.svg, /\(never lifted\)<\/title>/);
  t.equal(diagramOf(golden('ack-crash-pass')).faults, 0);
});

t.test('a signal fault is an instant: a mark on the incarnation it hit, not a band', async (t) => {
  const pass = golden('ack-crash-pass');
  const start = find(pass, 'process-start', (e) => e.role === 'consumer' && e.incarnation === 1);
  const kill: JournalEvent = {
    type: 'fault',
    action: 'apply',
    name: 'kill-1',
    kind: 'signal',
    detail: `SIGKILL to consumer incarnation 1 (pid ${start.pid})`,
    incarnation: 1,
  };
  const journal = insertAfter(pass, start, kill);
  const d = diagramOf(journal);
  t.equal(d.faults, 0, 'no band');
  t.equal(count(d.svg, /class="mark signal"/g), 1);
  t.match(d.svg, /<title>[\d.]+ s {2}consumer#1: kill-1 \(signal\) SIGKILL to consumer incarnation 1 \(pid 13548\)<\/title>/, 'on incarnation 1’s lane');
  t.match(renderHtml(journal).html, /<td>kill-1<\/td><td>signal<\/td>/, 'and a row in the faults table');
});

t.test('a note the publisher journals on a connection is shown in its words, on that connection’s lane', async (t) => {
  const journal = golden('resync-required-pass');
  const note = find(journal, 'wire', (e) => e.kind === 'note');
  const d = diagramOf(journal);
  t.equal(count(d.svg, /class="mark note"/g), 1);
  t.match(d.svg, `<title>${(note.t / 1000).toFixed(3)} s  consumer#2: publisher: retention moved to 5 (the consumer was away)</title>`);
  t.notMatch(d.svg, /wire \{&quot;stream/, 'not the raw entry');
  t.match(d.svg, /closed by publisher: resync required: cursor 2 is older than the retention log/);
  t.equal(count(d.svg, /class="msg msg-RESYNC"/g), 1, 'the RESYNC itself, an arrow to incarnation 2');
});

t.test('sequence diagram: a long run of uneventful traffic collapses into one labelled band', async (t) => {
  const journal = inOrderRun(5000);
  const d = diagramOf(journal);
  t.equal(d.bands, 1);
  t.equal(d.collapsed, 10000 - 6, 'everything but three lines on each side');
  t.equal(d.arrows, 1 + 6, 'RESUME and the six context lines are still arrows');
  t.ok(d.rows < 20, `few rows (${d.rows})`);
  t.match(d.svg, /publisher → consumer #1: EVENT 2…4998, 4 997 lines/);
  t.match(d.svg, /consumer #1 → publisher: ACK 1…4997, 4 997 lines/);
  t.equal(d.arrows + d.collapsed, wireLines(journal), 'every wire line is either drawn or counted in a band');

  const focused = diagramOf(journal, { focusSeqs: [2500] });
  t.equal(focused.bands, 2, 'a seq the verdict names splits the band and stays visible');
  t.match(focused.svg, />EVENT 2500 1</);
  t.match(focused.svg, />ACK 2500</);

  const short = diagramOf(inOrderRun(5));
  t.equal(short.bands, 0, 'a short run is not worth collapsing');
  t.equal(short.arrows, 11);

  const cuts = golden('cuts-pass');
  const real = diagramOf(cuts);
  t.ok(real.bands > 0 && real.rows < 300, `a real 300-event run with reconnects: ${real.bands} bands, ${real.rows} rows`);
  t.equal(real.arrows + real.collapsed, wireLines(cuts), 'every wire line of it drawn or counted');
});

t.test('sequence diagram: reconnect storms and floods of unknown entries stay bounded', async (t) => {
  const resumes = Array.from({ length: 3000 }, (_, i): JournalEvent => ({ type: 'wire', stream: 'consumer', conn: 1, kind: 'recv', line: `RESUME ${i}\n` }));
  const heartbeats = Array.from({ length: 300 }, (_, i) => foreignEvent('heartbeat', { n: i }));
  const journal = append(inOrderRun(10), ...resumes, ...heartbeats);
  const d = diagramOf(journal, { maxRows: 500 });
  t.ok(d.rows <= 500, `rows bounded (${d.rows})`);
  t.match(d.svg, /RESUME -?\d+…\d+/);
  t.match(d.svg, /heartbeat ×/, 'a flood of unknown entries is counted, not drawn one by one');
  t.throws(() => foreignEvent('wire'), /schema type/, 'the builder refuses to fake a known entry type');
});

t.test('unknown journal entry types are rendered, not fatal', async (t) => {
  const pass = golden('ack-crash-pass');
  const read = find(pass, 'store-read', (e) => e.when === 'after-exit' && e.incarnation === 1);
  const journal = insertAfter(
    pass,
    read,
    foreignEvent('future-thing', { role: 'consumer', incarnation: 1, weird: { nested: [1, 2] } }),
    foreignEvent('checkpoint-sample', { value: 3 }),
  );
  const d = diagramOf(journal);
  t.match(d.svg, /consumer#1: future-thing \{&quot;role&quot;/, 'an unknown entry naming a process: a mark on its lane');
  t.match(d.svg, /checkpoint-sample/);
  const { html, view } = renderHtml(journal);
  t.equal(view.status, 'pass', 'the verdict is untouched');
  t.match(html, /Other journal entries/);
  t.match(html, /<code>future-thing<\/code>/);
  t.equal(d.arrows, wireLines(journal));
});

t.test('hostile output, wire bytes and finding text are escaped; the page is self-contained', async (t) => {
  const mutant = golden('ack-crash-ack-before-commit');
  const ack = find(mutant, 'wire', (e) => e.stream === 'consumer' && e.kind === 'recv' && e.line === 'ACK 1\n');
  const bad: JournalEvent = { type: 'wire', stream: 'consumer', conn: ack.conn, kind: 'recv', line: HOSTILE.wireLine, error: 'not a line of the protocol' };
  const journal = withVerdict(withOutput(insertAfter(mutant, ack, bad), 1, HOSTILE), (v) => ({
    ...v,
    findings: [...v.findings, { code: 'hostile', text: 'seq 1 <img src=x onerror=alert(2)> & "q"' }],
  }));
  const { html, diagram } = renderHtml(journal);
  t.notMatch(html, /<script/i, 'no script element at all');
  t.notMatch(html, /<img/i);
  t.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
  t.match(html, /&lt;\/pre&gt;&lt;img src=x onerror=alert\(1\)&gt; &amp; &#39;quoted&#39; \\x00\\x1b\[31m/);
  t.match(html, /<li>seq 1 &lt;img src=x onerror=alert\(2\)&gt; &amp; &quot;q&quot;<\/li>/, 'a finding, escaped');
  t.match(html, /EVENT &lt;b&gt;1&lt;\/b&gt; \\x07/, 'the bad wire line, visible and escaped');
  t.equal(count(diagram.svg, /class="msg msg-error"/g), 1, 'drawn as a line that broke the grammar');
  t.notMatch(html, /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/, 'no raw control bytes');
  t.match(html, /Content-Security-Policy" content="default-src 'none'/, 'a CSP forbids any network access and script');
  t.notMatch(html, /\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i, 'no external resource');
  t.equal(escapeMarkup(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  t.equal(showLine('ACK 1\r\n'), 'ACK 1\\r');
});

t.test('the page reads top to bottom: the verdict in plain words, the smallest diff, the tables, the diagram', async (t) => {
  const journal = golden('ack-crash-ack-before-commit');
  const { html, view } = renderHtml(journal, { renderedAt: new Date('2026-12-01T00:00:00Z') });
  const verdict = find(journal, 'verdict').verdict;
  t.equal(view.status, 'fail');
  t.equal(view.headline, verdict.headline, 'the headline is the verdict’s, as written');
  t.match(view.headline, /^incarnation 1 sent ACK 1 at 0\.589 s, which it must not send: .*written before seq 1 was committed$/);
  const pos = (s: string) => html.indexOf(s);
  const order = ['id="verdict"', 'id="state"', 'id="incarnations"', 'id="diagram"', 'id="output"', 'id="scenario"'];
  t.same(
    order.map(pos).map((i) => i >= 0),
    order.map(() => true),
  );
  t.same(
    [...order].sort((a, b) => pos(a) - pos(b)),
    order,
    'verdict, state, incarnations, diagram, output, scenario: in that order',
  );
  t.match(html, /<span class="status">FAIL<\/span><h1>ack-crash<\/h1>/);
  t.match(html, /<title>FAIL ack-crash — chaoslab<\/title>/);
  t.match(
    html,
    /<h2>Also<\/h2><ol class="reasons"><li>incarnation 2 never sent ACK 1 \(incarnation 1 had already acknowledged it, so it was not redelivered\)<\/li><\/ol>/,
  );
  t.match(html, `<h2>Smallest diff</h2><pre class="diff">${escapeMarkup(verdict.diff.join('\n'))}</pre>`);
  t.match(html, /<th>#1<\/th><td>exit@ack:1<\/td>/, 'the incarnations table');
  t.match(html, /<pre class="src"># The seed&#39;s own final check/, 'the scenario file itself');
  t.match(html, /Rendered from the run \(41 journal entries\) at 2026-12-01T00:00:00\.000Z/);

  const pass = renderHtml(golden('ack-crash-pass'));
  t.equal(pass.view.status, 'pass');
  t.same(pass.view.diff, []);
  t.match(
    pass.html,
    /<span class="status">PASS<\/span><h1>ack-crash<\/h1>\n<p class="headline">the consumer ended with last 2, total 9: as the script says, and as the control consumer<\/p>/,
  );
  t.notMatch(pass.html, /Smallest diff|<h2>Why<\/h2>|<h2>Also<\/h2>|class="bad"/);

  const scaled = renderHtml(golden('cuts-pass')).html;
  t.match(scaled, /<b>Time compressed:<\/b>/, 'a scenario with time_scale says so');
  t.notMatch(pass.html, /Time compressed/);
});

t.test('renderRunFolder writes the three reports, also from a partial journal; refuses an old schema', async (t) => {
  const dir = t.testdir({});
  const runDir = writeRunFolder(join(dir, 'run'), golden('ack-crash-ack-before-commit'));
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
  t.equal(r.view.status, 'fail');
  t.equal(r.entries, 41);
  t.match(readFileSync(join(runDir, 'report.html'), 'utf8'), /Re-rendered from journal\.jsonl \(41 journal entries\)/, 'read back from the file, and says so');

  // Interrupted: the journal stops after incarnation 2 started, its last line cut mid-write.
  const journal = golden('ack-crash-ack-before-commit');
  const partial = cutAfter(
    journal,
    find(journal, 'process-start', (e) => e.role === 'consumer' && e.incarnation === 2),
  );
  const partialDir = writeRunFolder(join(dir, 'partial'), partial, '{"t":99,"type":"wi');
  const p = renderRunFolder(partialDir);
  t.equal(p.view.status, 'interrupted');
  t.equal(p.view.complete, false);
  t.equal(p.view.headline, 'the run did not finish: the journal stops at 0.635 s, after consumer incarnation 2 started (pid 13691)');
  t.same(p.view.findings, [], 'no verdict, no findings');
  const html = readFileSync(join(partialDir, 'report.html'), 'utf8');
  t.match(html, /<span class="status">INTERRUPTED<\/span>/);
  t.match(html, /no run-end: partial/);
  t.match(html, /No verdict: the run did not finish/);
  t.match(readFileSync(join(partialDir, 'junit.xml'), 'utf8'), /<skipped message="the run did not finish[^"]*"\/>/);
  t.match(
    readFileSync(join(partialDir, 'summary.md'), 'utf8'),
    /— INTERRUPTED\n[\s\S]*The run did not finish: this summary was rendered from a partial journal\./,
  );

  // A journal that ends with its verdict but no run-end is interrupted too: a verdict alone is not a finished run.
  const noEnd = journal.filter((e) => e.type !== 'run-end');
  t.equal(renderRunFolder(writeRunFolder(join(dir, 'no-end'), noEnd)).view.status, 'interrupted');

  // The run's own record (in memory at the end of a run) renders without reading the file.
  mkdirSync(join(dir, 'live'));
  const live = renderRunFolder(join(dir, 'live'), { entries: journal });
  t.equal(live.view.status, 'fail');
  t.match(readFileSync(join(dir, 'live', 'report.html'), 'utf8'), /Rendered from the run \(41 journal entries\)/);

  const start = find(journal, 'run-start');
  const old = replace(journal, start, (e) => ({ ...e, schema: 1 }));
  let thrown: unknown;
  try {
    renderRunFolder(writeRunFolder(join(dir, 'old'), old));
  } catch (error) {
    thrown = error;
  }
  t.ok(thrown instanceof OldJournalError, 'an OldJournalError: the CLI says to re-run, it does not render a wrong report');
  t.throws(() => viewOf(old), /schema 1, written by an older chaoslab/);
  t.throws(() => renderRunFolder(join(dir, 'nothing')), /no journal\.jsonl/);
});

t.test('latest: switched atomically, never missing or broken while two writers race', async (t) => {
  t.setTimeout(120_000);
  const dir = t.testdir({ a: { 'journal.jsonl': '' }, b: { 'journal.jsonl': '' } });
  switchLatest(dir, join(dir, 'a'));
  t.equal(latestTarget(dir), join(dir, 'a'));
  const moduleUrl = new URL('../../../dist/harness/report/run-folder.js', import.meta.url).href;
  if (!existsSync(new URL(moduleUrl))) {
    t.pass('the race', { skip: 'dist/ is not built (make build): the race needs the compiled module in child processes' });
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
  const finished = jsonl(golden('ack-crash-pass'));
  const pass = golden('ack-crash-pass');
  const running = jsonl(
    cutAfter(
      pass,
      find(pass, 'process-start', (e) => e.role === 'consumer' && e.incarnation === 2),
    ),
  );
  const done = (name: string) => ({ [name]: { 'journal.jsonl': finished, 'report.html': 'x' } });
  const dir = t.testdir({
    ...done('20260101-000001-a-aaaa'),
    ...done('20260101-000002-b-bbbb'),
    ...done('20260101-000003-c-cccc'),
    ...done('20260101-000004-d-dddd'),
    '20260101-000005-e-eeee': { 'journal.jsonl': running }, // running
    '20260101-000000-z-zzzz': { 'journal.jsonl': running }, // crashed long ago
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
    listRuns(dir).map((r) => [r.kind, r.finished]),
    [
      ['run', false],
      ['run', true],
      ['run', true],
      ['run', true],
      ['run', true],
      ['run', false],
      ['batch', true],
    ],
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
  const dir = t.testdir({});
  writeRunFolder(join(dir, '20260101-000001-a-aaaa'), golden('ack-crash-pass'));
  writeRunFolder(join(dir, '20260101-000002-b-bbbb'), golden('ack-crash-ack-before-commit'));
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
  t.match(out, /PASS {2}ack-crash {2}\(0\.688 s\)\n {2}the consumer ended with last 2, total 9: as the script says, and as the control consumer\n/);
  t.match(out, /FAIL {2}ack-crash {2}\(0\.909 s\)\n {2}incarnation 1 sent ACK 1 at 0\.589 s/);
  t.match(out, /wrote .*report\.html/);
  t.match(readFileSync(junit, 'utf8'), /tests="2" failures="1" errors="0"/);
  t.ok(existsSync(join(dir, '20260101-000002-b-bbbb', 'report.html')));

  // An older run cut short, its journal written just now: still being written, as far as anyone can tell.
  const pass = golden('ack-crash-pass');
  const toxiproxy = find(pass, 'toxiproxy');
  const partial = writeRunFolder(join(dir, '20251201-000000-ack-crash-pppp'), cutAfter(pass, toxiproxy));
  t.match(
    await run(['report', partial]),
    `INTERRUPTED  ack-crash  (${(toxiproxy.t / 1000).toFixed(3)} s, partial journal)\n  the run did not finish: the journal stops at ${(toxiproxy.t / 1000).toFixed(3)} s, after Toxiproxy was ready\n`,
  );
  mkdirSync(join(dir, 'notes'));
  writeFileSync(join(dir, 'notes', 'x'), '');

  const batch = join(dir, '20260101-000003-catalogue-cccc');
  writeRunFolder(join(batch, 'r1'), golden('ack-crash-ack-before-commit'));
  writeFileSync(join(batch, 'junit.xml'), '');
  const batchOut = await run(['report', batch]);
  t.match(batchOut, /catalogue: 1 failed\nwrote .*catalogue-cccc\/index\.html\n(.*\n)*wrote .*catalogue-cccc\/junit\.xml\n/);
  t.match(readFileSync(join(batch, 'junit.xml'), 'utf8'), /tests="1" failures="1"/);
  t.ok(existsSync(join(batch, 'r1', 'report.html')));

  const cleaned = await run(['clean', '--keep', '1', '--reports', dir]);
  t.match(cleaned, /removed 2 run folders, kept 2/);
  t.notOk(existsSync(join(dir, '20260101-000001-a-aaaa')));
  t.notOk(existsSync(join(dir, '20260101-000002-b-bbbb')));
  t.ok(existsSync(batch), 'the newest (a batch) is kept');
  t.ok(existsSync(partial), 'and the run still being written');
  t.ok(existsSync(join(dir, 'notes', 'x')), 'a folder without a journal is not a run: untouched');
  await t.rejects(run(['clean', '--keep', 'lots', '--reports', dir]), /whole number/);
});
