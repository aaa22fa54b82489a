// Every byte that came from a consumer or a submission is inert wherever it is shown (issue 28,
// attack 4). The same hostile strings (helpers/hostile.ts) go where a consumer puts them: values
// in its store, read by the real ledger checker (its cursor and total hold text, as SQLite lets
// any column), a finding and the diff quoting them, its stderr and stdout, a wire line, a harness
// error quoting the store, its command line, the scenario's description (chaos writes headlines
// there), and a submission's name, build problem and manifest command. Then every output is
// rendered — console, summary.md, report.html, junit.xml, run --json, the batch's index.html,
// summary.md, results.json and junit.xml, grading's grades.csv, class page, class.json,
// results.json and junit.xml, a chaos repro — and each is held to its kind's rule (inert.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import type { ChaosModel } from '../../../harness/lab-api/chaos-model.js';
import { writeRepro } from '../../../harness/chaos/repro.js';
import { classCsv } from '../../../harness/grade/class/class-csv.js';
import { CLASS_FILE, writeClassReport } from '../../../harness/grade/class/class-data.js';
import { classHtml } from '../../../harness/grade/class/class-html.js';
import { finishedData } from '../../../harness/grade/platforms/grade-data.js';
import { gradescopeResults } from '../../../harness/grade/platforms/gradescope.js';
import { submissionJunit } from '../../../harness/grade/platforms/junit.js';
import { prairieLearnResults } from '../../../harness/grade/platforms/prairielearn.js';
import { labNamed } from '../../../harness/labs/registry.js';
import { judgeRow, renderMatrixMarkdown } from '../../../harness/run/mutants.js';
import { agreementProblems } from '../../../harness/report/agreement.js';
import { batchViewOf } from '../../../harness/report/batch-view.js';
import { createConsoleReporter } from '../../../harness/report/console.js';
import {
  csvCell,
  jsonText,
  markdownBlock,
  markdownCode,
  markdownLink,
  markdownText,
  markupAttribute,
  markupText,
  safeHref,
  terminalText,
} from '../../../harness/text/inert.js';
import { renderRunFolder } from '../../../harness/report/render-all.js';
import { renderBatchFiles } from '../../../harness/report/render-batch.js';
import { resultsJson, runJson } from '../../../harness/report/run-json.js';
import { loadScenario } from '../../../harness/catalogue/load.js';
import { smallClass, smallRubric } from '../../helpers/grade.js';
import { HOSTILE_VALUE, HOSTILE_VALUES, hostileRun, rawUnsafe, SHOWN_ESCAPE, withoutOwnStyling } from '../../helpers/hostile.js';
import { writeRunFolder } from '../../helpers/journals.js';

// ── the functions, one per output kind ──────────────────────────────────────────────────────

t.test('terminal: every control and formatting character is a visible escape', async (t) => {
  t.equal(terminalText('\u001b]52;c;eA==\u0007'), '\\x1b]52;c;eA==\\x07', 'OSC 52');
  t.equal(terminalText('\u009b2J'), '\\u009b2J', 'the one-byte CSI');
  t.equal(terminalText('a\u202eb\u2066c\u200fd\u061ce\ufeff'), 'a\\u202eb\\u2066c\\u200fd\\u061ce\\ufeff', 'bidi and invisible formatting');
  t.equal(terminalText('a\nb\r\tc\u0000\u007f\u2028'), 'a\\nb\\r\\tc\\x00\\x7f\\u2028', 'one line: newlines too');
  t.equal(terminalText('x\ud800y\udc00z😀'), 'x\\ud800y\\udc00z😀', 'lone surrogates, not a pair');
  t.equal(terminalText('ümlaut — ✓ 日本'), 'ümlaut — ✓ 日本', 'printable text untouched');
  for (const v of HOSTILE_VALUES) t.same(rawUnsafe(terminalText(v)), [], JSON.stringify(v));
  t.equal(terminalText(terminalText(HOSTILE_VALUE)), terminalText(HOSTILE_VALUE), 'idempotent: escaping twice changes nothing');
});

t.test('Markdown: text, code spans and blocks that nothing inside can close or open', async (t) => {
  t.equal(
    markdownText('<img src=x onerror=alert(1)> & a_b *c* `d` [e](f) | ~g~ \\'),
    '&lt;img src=x onerror=alert(1)&gt; &amp; a\\_b \\*c\\* \\`d\\` \\[e\\](f) \\| \\~g\\~ \\\\',
  );
  t.equal(markdownText('# PASS'), '\\# PASS', 'a heading at the start of a line');
  t.equal(markdownText('- x'), '\\- x');
  t.equal(markdownText('1. x'), '1\\. x');
  t.equal(markdownText('==='), '\\===', 'a setext underline');
  t.equal(markdownText('#1 -1 0.003 s'), '#1 -1 0.003 s', 'only what opens a block is escaped');
  t.equal(markdownText('one\n# PASS'), 'one\\\\n# PASS', 'no line break (the backslash of its escape escaped): the heading stays in the line');
  t.equal(markdownCode('npm start'), '`npm start`');
  t.equal(markdownCode('a ``` b'), '````a ``` b````', 'longer than the longest backtick run inside');
  t.equal(markdownCode('`x`'), '`` `x` ``', 'padded when it starts or ends with a backtick');
  t.equal(markdownCode(''), '` `');
  t.same(markdownBlock(['```', '# PASS']), ['````', '```', '# PASS', '````'], 'the fence outgrows any run inside');
  t.same(markdownBlock(['a\u001b[31m']), ['```', 'a\\x1b[31m', '```']);
  t.equal(markdownLink('x](javascript:alert(1))', 'javascript:alert(1)'), '[x\\](javascript:alert(1))](./javascript:alert%281%29)', 'never a scheme');
});

t.test('HTML and XML: markup as entities, unsafe characters visible; attributes keep their newlines as references', async (t) => {
  t.equal(markupText(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  t.equal(markupText('a\tb\nc\r]]>\u0000\u009b\u202e\uffff'), 'a\tb\nc\r]]&gt;\\x00\\u009b\\u202e\\uffff');
  t.equal(markupAttribute('a\tb\nc\r'), 'a&#9;b&#10;c&#13;');
  t.equal(safeHref('javascript:alert(1)'), './javascript:alert(1)');
  t.equal(safeHref('run 1/report.html'), 'run%201/report.html');
});

t.test('CSV: no cell becomes a formula; RFC 4180 quoting', async (t) => {
  t.equal(csvCell('=HYPERLINK("http://e","x")'), `"'=HYPERLINK(""http://e"",""x"")"`);
  for (const [v, shown] of [
    ['+1', `"'+1"`],
    ['-2', `"'-2"`],
    ['@SUM(A1)', `"'@SUM(A1)"`],
    ['\t=1', `"'\\t=1"`],
    ['\r=1', `"'\\r=1"`],
    ['  =1', `"'  =1"`],
  ])
    t.equal(csvCell(v!), shown, JSON.stringify(v));
  t.equal(csvCell('a,"b"'), '"a,""b"""');
  t.equal(csvCell('a;b'), '"a;b"', 'the separator of some locales');
  t.equal(csvCell('one\ntwo'), 'one\\ntwo', 'one row per submission');
  t.equal(csvCell('alice'), 'alice');
  t.equal(csvCell(-2), '-2', 'a number is a number');
  t.equal(csvCell(0.5), '0.5');
});

t.test('JSON: well-formed whatever the strings hold, and the same value parsed back', async (t) => {
  const value = { values: HOSTILE_VALUES, all: HOSTILE_VALUE };
  const text = jsonText(value);
  t.same(JSON.parse(text), value, 'parses back to exactly the value');
  t.same(rawUnsafe(text), [], 'no raw control or bidi character (cat results.json is inert)');
  t.match(text, '\\u009b2J');
  t.match(text, '\\ud800', 'a lone surrogate as an escape (well-formed JSON.stringify)');
  t.ok(Buffer.from(text, 'utf8').toString('utf8') === text, 'valid UTF-8 as written');
  strictJson(t, text);
});

// ── the renderers, fed a hostile run ───────────────────────────────────────────────────────

/** Terminal, Markdown, HTML, XML: no raw control or formatting character; the escape shown, as text. */
function inertText(t: Test, what: string, text: string, shown = [SHOWN_ESCAPE]): void {
  t.same(rawUnsafe(text), [], `${what}: no raw control, bidi or surrogate character`);
  t.ok(
    shown.some((s) => text.includes(s)),
    `${what}: the escape sequence is shown, as text`,
  );
}

/** Python's expat: a strict XML 1.0 parser (forbidden characters, bad references, `]]>` in text all fail). */
function strictXml(t: Test, what: string, xml: string): void {
  t.doesNotThrow(
    () => execFileSync('python3', ['-c', 'import sys, xml.etree.ElementTree as ET; ET.fromstring(sys.stdin.buffer.read())'], { input: xml, stdio: 'pipe' }),
    `${what}: parses as XML`,
  );
}

/** Python's json with no NaN and no lone surrogate accepted on re-encoding: a strict parse. */
function strictJson(t: Test, text: string, what = 'JSON'): void {
  t.doesNotThrow(
    () =>
      execFileSync(
        'python3',
        ['-c', "import sys, json; json.dumps(json.loads(sys.stdin.buffer.read().decode('utf-8', 'strict'), parse_constant=lambda c: 1/0))"],
        { input: text, stdio: 'pipe' },
      ),
    `${what}: a strict parser reads it`,
  );
}

/** Markdown: the hostile heading and HTML are never live (only inside code, or escaped). */
function inertMarkdown(t: Test, what: string, md: string): void {
  // In code as it is; in running text with Markdown's own escapes added (it renders as the same).
  inertText(t, what, md, [SHOWN_ESCAPE, markdownText(SHOWN_ESCAPE)]);
  const outsideCode: string[] = [];
  let fence: string | undefined;
  for (const line of md.split('\n')) {
    // A fence opens a line: up to three spaces, three or more backticks, an info string without one (CommonMark 4.5).
    const opener = /^ {0,3}(`{3,})[^`]*$/.exec(line)?.[1];
    if (fence) {
      if (new RegExp(`^ {0,3}${fence}\`*\\s*$`).test(line)) fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener;
      continue;
    }
    // Inline code spans are fine: drop them, then look at what is left.
    outsideCode.push(line.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, ''));
  }
  t.notOk(fence, `${what}: every code block is closed`);
  const text = outsideCode.join('\n');
  t.notMatch(text, /^#+ PASS/m, `${what}: no PASS heading of the consumer's`);
  t.notMatch(text, /<img|<script|<\/script/i, `${what}: no live HTML`);
  t.notMatch(text, /(?<!\\)\]\(javascript:/, `${what}: no live link`);
}

/** HTML: escaped, and a policy that runs no script. */
function inertHtml(t: Test, what: string, page: string): void {
  inertText(t, what, page);
  t.notMatch(page, /<img|<script|<\/script/i, `${what}: no element from a value`);
  t.match(
    page,
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;[^"]*">/,
    `${what}: no script allowed`,
  );
  t.notMatch(page, /script-src|unsafe-eval/, `${what}: nothing re-allows script`);
}

/** CSV: no cell starts as a formula (after any quote). */
function inertCsv(t: Test, what: string, csv: string): void {
  t.same(rawUnsafe(csv), [], `${what}: no raw control character`);
  const cells = csv
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .flatMap((line) => [...line.matchAll(/(?:^|,)("(?:[^"]|"")*"|[^,]*)/g)].map((m) => m[1]!.replace(/^"|"$/g, '')));
  t.same(
    cells.filter((c) => /^\s*[=+\-@\t\r]/.test(c)),
    [],
    `${what}: no cell a spreadsheet computes`,
  );
}

t.test('every output of a run, and of its batch, keeps the hostile bytes inert', async (t) => {
  const journal = hostileRun();
  const dir = t.testdir();
  const runDir = writeRunFolder(join(dir, '20261201-020000-duplicate-delivery-evil'), journal);
  const rendered = renderRunFolder(runDir, { entries: journal, now: new Date('2026-12-01T00:00:00Z') });
  const { view } = rendered;
  t.equal(view.status, 'fail');
  t.same(rawUnsafe(view.stderrTail!.lines.join('\n')), [], 'the stderr tail every renderer draws is inert itself (C1 and bidi included)');
  const file = (name: string) => readFileSync(join(runDir, name), 'utf8');

  const summary = file('summary.md');
  inertMarkdown(t, 'summary.md', summary);
  t.match(summary, 'two\\\\r\\\\n# PASS', 'the heading is there, as text in its line');
  inertHtml(t, 'report.html', file('report.html'));
  const junit = file('junit.xml');
  inertText(t, 'junit.xml', junit);
  strictXml(t, 'junit.xml', junit);
  t.same(agreementProblems(runDir, view), [], 'the reports still agree with the verdict, each showing it inert');

  const json = jsonText(resultsJson([runJson(view, runDir, { label: HOSTILE_VALUE })]));
  t.same(rawUnsafe(json), [], 'run --json: no raw unsafe character');
  strictJson(t, json, 'run --json');
  t.equal(JSON.parse(json).runs[0].label, HOSTILE_VALUE, 'run --json: the data itself unchanged');

  // The batch: a submission's name as the run's label, a section quoting the consumer, one not started.
  const batch = batchViewOf(
    dir,
    {
      name: 'grade',
      startedAt: '2026-12-01T02:00:00',
      endedAt: '2026-12-01T02:01:00',
      commandLine: `chaoslab grade (${HOSTILE_VALUE})`,
      notStarted: [{ label: HOSTILE_VALUE, scenario: 'gap' }],
      sections: [{ title: HOSTILE_VALUE, lines: [{ text: HOSTILE_VALUE, href: 'javascript:alert(1)' }, { text: HOSTILE_VALUE }] }],
    },
    [{ label: `${HOSTILE_VALUE} × duplicate-delivery`, runDir, view }],
  );
  renderBatchFiles(batch);
  const batchFile = (name: string) => readFileSync(join(dir, name), 'utf8');
  const index = batchFile('index.html');
  inertHtml(t, 'index.html', index);
  t.notMatch(index, /href="javascript:/i, 'index.html: no link runs script');
  inertMarkdown(t, 'batch summary.md', batchFile('summary.md'));
  const results = batchFile('results.json');
  t.same(rawUnsafe(results), [], 'results.json: no raw unsafe character');
  strictJson(t, results, 'results.json');
  t.equal(JSON.parse(results).runs[0].label, `${HOSTILE_VALUE} × duplicate-delivery`);
  const tail = JSON.parse(results).runs[0].stderrTail.lines.join('\n');
  t.same(rawUnsafe(tail), [], "results.json: the stderr tail's lines are inert once parsed too (a CI script may print them)");
  t.match(tail, 'report\\u202etxt.exe');
  const batchJunit = batchFile('junit.xml');
  inertText(t, 'batch junit.xml', batchJunit);
  strictXml(t, 'batch junit.xml', batchJunit);

  // The console, on a terminal with colour (the status line, the verdict, the table, the batch's end) and in a log.
  for (const tty of [true, false]) {
    const out = {
      text: '',
      columns: 120,
      write(s: string) {
        out.text += s;
        return true;
      },
    };
    const r = createConsoleReporter({ tty, quiet: false, color: tty, out, interval: false, cwd: dir, now: () => 0 });
    const label = `${HOSTILE_VALUE} × duplicate-delivery`;
    r.scenarioStarted(label);
    for (const e of journal) {
      r.onJournal(e);
      r.tick();
    }
    const outcome = r.scenarioFinished(label, { status: view.status, runDir, view });
    r.finalTable([outcome]);
    r.batchFinished([outcome], batch, { verbose: true });
    r.close();
    const what = tty ? 'the console (terminal, colour)' : 'the console (log)';
    const own = withoutOwnStyling(out.text);
    t.same(rawUnsafe(own.replaceAll('\r', '\u0000')), [], `${what}: no escape sequence but the harness's own colours, no raw carriage return`);
    if (!tty) t.notMatch(out.text, /\u001b/, `${what}: no escape at all`);
    t.match(out.text, SHOWN_ESCAPE, `${what}: the OSC 52 shown, as text`);
    t.match(out.text, '\\x1b[1A\\x1b[2K\\x1b[32mPASS', `${what}: the fake PASS shown as what it is`);
    t.match(out.text, '\\u009b2J', `${what}: the one-byte CSI shown`);
    t.match(out.text, 'report\\u202etxt.exe', `${what}: the right-to-left override shown`);
  }
});

t.test('grading: grades.csv, the class page, class.json, a student’s results.json and junit.xml', async (t) => {
  const report = smallClass();
  const rubric = smallRubric();
  const [alice, bob, carol] = report.submissions;
  alice!.submission = HOSTILE_VALUE;
  bob!.submission = '=HYPERLINK("http://evil.example","x")';
  bob!.how = `chaoslab.json: \`${HOSTILE_VALUE}\``;
  bob!.scenarios[1]!.reasons = [`the consumer's file holds ${HOSTILE_VALUE}`];
  carol!.submission = '-2';
  carol!.problem = `the build \`${HOSTILE_VALUE}\` failed`;
  report.rubric[0]!.name = '@SUM(A1:A9)';

  inertCsv(t, 'grades.csv', classCsv(report));
  t.match(classCsv(report), `"'=HYPERLINK(""http://evil.example"",""x"")",`, 'the formula shown as text');
  inertHtml(t, 'class index.html', classHtml(report));

  const dir = t.testdir();
  writeClassReport(dir, report);
  const classJson = readFileSync(join(dir, CLASS_FILE), 'utf8');
  t.same(rawUnsafe(classJson), [], 'class.json: no raw unsafe character');
  strictJson(t, classJson, 'class.json');
  t.same(JSON.parse(classJson).submissions[0].submission, HOSTILE_VALUE, 'class.json: the name itself kept');

  for (const sub of [bob!, carol!]) {
    const data = finishedData(sub, rubric, report.sealing, 1);
    for (const [file, text] of [
      ['results.json', jsonText(gradescopeResults(data, 'student'))],
      ['results.json (staff)', jsonText(gradescopeResults(data, 'platform'))],
      ['prairielearn.json', jsonText(prairieLearnResults(data))],
    ] as const) {
      t.same(rawUnsafe(text), [], `${sub.submission}: ${file}: no raw unsafe character`);
      strictJson(t, text, `${sub.submission}: ${file}`);
    }
    const xml = submissionJunit(sub, rubric, report.sealing);
    t.same(rawUnsafe(xml), [], `${sub.submission}: junit.xml: no raw unsafe character`);
    strictXml(t, `${sub.submission}: junit.xml`, xml);
  }
  t.match(submissionJunit(bob!, rubric, report.sealing), SHOWN_ESCAPE, 'a finding quoting the store, escaped');
});

t.test('matrix.md: a consumer’s reason and label, escaped', async (t) => {
  const mutant = { label: HOSTILE_VALUE, kind: 'mutant' as const, language: 'python', command: 'x', killer: 'gap', reason: /never/ };
  const cells = [
    { scenario: 'happy-path', status: 'pass' as const, reason: '', reasons: [], runDir: '/b/1' },
    { scenario: 'gap', status: 'fail' as const, reason: HOSTILE_VALUE, reasons: [HOSTILE_VALUE], runDir: '/b/javascript:alert(1)' },
  ];
  inertMarkdown(t, 'matrix.md', renderMatrixMarkdown([judgeRow(mutant, cells, 'happy-path')], ['happy-path', 'gap'], '/b'));
});

t.test('a chaos repro: the consumer’s headline is one inert comment line', async (t) => {
  const model = (await labNamed('ledger')!.chaos!()) as ChaosModel;
  const dir = t.testdir();
  mkdirSync(dir, { recursive: true });
  const [schedule] = fc.sample(model.schedules(), { seed: 181, numRuns: 1 });
  const trial = {
    name: 'run-1',
    status: 'fail' as const,
    headline: HOSTILE_VALUE,
    reasons: [],
    runDir: dir,
    file: join(dir, 'x.yaml'),
    durationMs: 1,
    coverage: [],
    untested: false,
    view: {} as never,
  };
  const failure = {
    index: 0,
    found: [trial, trial] as [typeof trial, typeof trial],
    schedule,
    path: '0:1',
    steps: model.steps(schedule, { sealed: false }),
    originalSteps: ['a'],
    smallest: [trial, trial],
    failedRuns: 2,
    shrinkRuns: 1,
    steadyRuns: 2,
  };
  writeRepro(failure, {
    lab: 'ledger',
    model,
    where: { sealed: false },
    batchDir: dir,
    consumerCommand: `node ${HOSTILE_VALUE}`,
    seed: 181,
    runsAsked: 1,
    cwd: dir,
    written: 0,
  });
  const text = readFileSync(join(dir, 'repro.yaml'), 'utf8');
  const header = text.slice(0, text.indexOf('\n#   '));
  t.same(rawUnsafe(header), [], 'repro.yaml: no raw unsafe character in its comments');
  t.equal(loadScenario(join(dir, 'repro.yaml')).chaos?.consumer, `node ${HOSTILE_VALUE}`, 'the command it replays, exactly (YAML quotes it)');
  t.ok(
    header.split('\n').every((l) => l.startsWith('#')),
    'every header line is still a comment: no line break from the headline',
  );
  t.match(text, `# It failed with: ${terminalText(HOSTILE_VALUE)}`);
});
