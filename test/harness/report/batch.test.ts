// A batch as one report: index.html, summary.md, results.json and junit.xml drawn from the runs'
// views (golden journals recorded from real runs, a failing one given a traceback on stderr, one
// cut short), `chaoslab report <batch>` re-rendering all of it, the batch folder's name, and the
// consumer's own words (stderr tail, "could not be started") in the single-run reports.
import { Command } from 'commander';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { batchName } from '../../../harness/commands/select.js';
import * as reportCommand from '../../../harness/commands/report.js';
import { cannotStartFinding, coreFindings, isShellCannotRun, withCoreFindings } from '../../../harness/judge/core-findings.js';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { renderBatchIndex } from '../../../harness/report/batch-index.js';
import { RESULTS_SCHEMA, renderBatchResults } from '../../../harness/report/batch-results.js';
import { resultsJson, runJson } from '../../../harness/report/run-json.js';
import { renderBatchSummary } from '../../../harness/report/batch-summary.js';
import { type BatchRun, batchViewOf, failuresFirst, ownCommandLine, readBatchMeta, statusesOf, totalsLine } from '../../../harness/report/batch-view.js';
import { renderRunFolder } from '../../../harness/report/render-all.js';
import { BATCH_FILES, batchNameOf, renderBatchFiles, rerenderBatch } from '../../../harness/report/render-batch.js';
import { resolveRunFolders } from '../../../harness/report/run-folder.js';
import { renderSummary } from '../../../harness/report/summary.js';
import { type RunStatus, STDERR_TAIL_LINES, stderrTailOf, viewOf } from '../../../harness/report/view.js';
import { cutAfter, find, golden, HOSTILE, replace, withOutput, writeRunFolder } from '../../helpers/journals.js';

const TRACEBACK = ['Traceback (most recent call last):', '  File "<string>", line 1, in <module>', 'ValueError: 1', ''].join('\n');

/** The mutant's failing ack-crash run, its first process having printed a traceback. */
const failing = (): JournalEntry[] => withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr: TRACEBACK });

/** A run cut short after Toxiproxy was ready (no verdict, no run-end). */
const cutShort = (): JournalEntry[] => {
  const pass = golden('ack-crash-pass');
  return cutAfter(pass, find(pass, 'toxiproxy'));
};

const META = { name: 'only-ack-x2', startedAt: '2026-12-01T02:00:00', endedAt: '2026-12-01T02:01:00', commandLine: "chaoslab run --only 'ack-*' --repeat 2" };

/** A batch folder of three run folders, rendered as the runner renders them. */
function batchFolder(dir: string) {
  const journals: [string, string, JournalEntry[]][] = [
    ['20261201-020000-ack-crash-aaaa', 'ack-crash #1', golden('ack-crash-pass')],
    ['20261201-020001-ack-crash-bbbb', 'ack-crash #2', failing()],
    ['20261201-020002-ack-crash-cccc', 'ack-crash #3', cutShort()],
  ];
  const runs: BatchRun[] = journals.map(([name, label, journal]) => {
    const runDir = writeRunFolder(join(dir, name), journal);
    return { label, runDir, view: renderRunFolder(runDir, { entries: journal }).view };
  });
  return { runs, view: batchViewOf(dir, META, runs) };
}

t.test('the batch view: totals per status, failures first, any status string', async (t) => {
  const dir = t.testdir();
  const { view, runs } = batchFolder(dir);
  t.same(view.totals, { fail: 1, error: 0, interrupted: 1, pass: 1 });
  t.equal(totalsLine(view), '1 passed, 1 failed, 1 interrupted');
  t.same(
    failuresFirst(view).map((r) => r.label),
    ['ack-crash #2', 'ack-crash #3', 'ack-crash #1'],
  );
  // Named in alphabetical order, as a catalogue batch runs: the lists put failures first, then errors, then passes.
  const as = (label: string, status: string): BatchRun => ({ ...runs[0]!, label, view: { ...runs[0]!.view, status: status as RunStatus } });
  const mixed = batchViewOf(dir, META, [
    as('a', 'pass'),
    as('b', 'error'),
    as('c', 'fail'),
    as('d', 'skipped'),
    as('e', 'interrupted'),
    as('f', 'fail'),
    as('g', 'pass'),
  ]);
  t.same(
    failuresFirst(mixed).map((r) => r.label),
    ['c', 'f', 'b', 'e', 'd', 'a', 'g'],
  );
  const index = renderBatchIndex(mixed);
  t.same(
    [...index.matchAll(/<td class="label"><a href="[^"]*">(\w)<\/a>/g)].map((m) => m[1]),
    ['c', 'f', 'b', 'e', 'd', 'a', 'g'],
    'index.html lists them in that order',
  );
  const summary = renderBatchSummary(mixed);
  t.ok(summary.indexOf('| c |') < summary.indexOf('| f |') && summary.indexOf('| f |') < summary.indexOf('| b |'), 'summary.md: failures, then errors');
  const odd = batchViewOf(dir, META, [...runs, { ...runs[0]!, label: 'x', view: { ...runs[0]!.view, status: 'skipped' as RunStatus } }]);
  t.same(statusesOf(odd), ['fail', 'error', 'interrupted', 'pass', 'skipped'], 'a status this harness does not know is counted and shown');
  t.equal(totalsLine(odd), '1 passed, 1 failed, 1 interrupted, 1 skipped');
  t.equal(totalsLine(batchViewOf(dir, META, [])), 'no runs');
  t.equal(ownCommandLine(['node', 'cli.js', 'run', '--consumer', 'python3 -c "x"']), `chaoslab run --consumer 'python3 -c "x"'`);
});

t.test('results.json: every run, its verdict and findings as the view has them, paths relative', async (t) => {
  const dir = t.testdir();
  const { view } = batchFolder(dir);
  const data = JSON.parse(renderBatchResults(view));
  t.equal(data.schema, RESULTS_SCHEMA);
  t.match(data, { batch: 'only-ack-x2', startedAt: META.startedAt, endedAt: META.endedAt, commandLine: META.commandLine });
  t.same(data.totals, { runs: 3, fail: 1, error: 0, interrupted: 1, pass: 1, notStarted: 0 });
  t.same(
    data.runs.map((r: { label: string; status: string; runDir: string }) => [r.label, r.status, r.runDir]),
    [
      ['ack-crash #1', 'pass', '20261201-020000-ack-crash-aaaa'],
      ['ack-crash #2', 'fail', '20261201-020001-ack-crash-bbbb'],
      ['ack-crash #3', 'interrupted', '20261201-020002-ack-crash-cccc'],
    ],
  );
  const fail = data.runs[1];
  const verdict = find(failing(), 'verdict').verdict;
  t.equal(fail.headline, verdict.headline);
  t.same(
    fail.findings,
    verdict.findings.map((f) => ({ code: f.code, text: f.text, ...(f.subject ? { subject: f.subject } : {}) })),
    'the checker’s findings, as written',
  );
  t.match(fail, { scenario: 'ack-crash', lab: 'ledger', durationMs: 909, harnessErrors: [] });
  t.same(fail.stderrTail, { incarnation: 1, lines: ['Traceback (most recent call last):', '  File "<string>", line 1, in <module>', 'ValueError: 1'] });
  t.equal(data.runs[0].stderrTail, null);
  t.match(data.runs[2].headline, /^the run did not finish/);
});

t.test('results.json holds each run as --reporter json does: one record, paths relative to the batch folder', async (t) => {
  const dir = t.testdir();
  const { view } = batchFolder(dir);
  const batchRuns = JSON.parse(renderBatchResults(view)).runs as Record<string, unknown>[];
  const printed = resultsJson(view.runs.map((run) => runJson(run.view, run.runDir, { label: run.label }))).runs;
  t.equal(batchRuns.length, printed.length);
  for (const [i, run] of batchRuns.entries()) {
    const alone = printed[i]!;
    t.same(Object.keys(run), Object.keys(alone), `${alone.label}: the same fields, in the same order`);
    t.same({ ...run, runDir: '', reports: {} }, { ...alone, runDir: '', reports: {} }, `${alone.label}: the same values but the paths`);
    t.equal(join(dir, run.runDir as string), alone.runDir, 'runDir: relative in results.json, absolute on stdout');
    t.equal(join(dir, (run.reports as { html: string }).html), alone.reports.html);
  }
});

t.test('summary.md for $GITHUB_STEP_SUMMARY: totals, then failures with finding and stderr, then passes', async (t) => {
  const dir = t.testdir();
  const { view } = batchFolder(dir);
  const md = renderBatchSummary(view);
  const lines = md.split('\n');
  t.equal(lines[0], '# ❌ chaoslab only-ack-x2: 1 passed, 1 failed, 1 interrupted');
  t.match(lines[2], /^`chaoslab run --only 'ack-\*' --repeat 2` · 3 runs · /);
  const failRow = lines.findIndex((l) => l.startsWith('| ack-crash #2 | **FAIL** | 0.909 s | incarnation 1 sent ACK 1'));
  const interruptedRow = lines.findIndex((l) => l.startsWith('| ack-crash #3 | **INTERRUPTED** |'));
  const passed = lines.indexOf('## Passed (1)');
  t.ok(failRow > 0 && interruptedRow > failRow && passed > interruptedRow, 'failures first, then passes');
  t.match(lines[failRow], /\[report\]\(20261201-020001-ack-crash-bbbb\/report\.html\) \|$/);
  t.match(
    md,
    /### ack-crash #2: What the consumer said \(stderr of incarnation 1, last 3 lines\)\n\n```\nTraceback \(most recent call last\):\n {2}File "<string>", line 1, in <module>\nValueError: 1\n```/,
  );
  t.match(md, /\| ack-crash #1 \| 0\.688 s \| \[report\]\(20261201-020000-ack-crash-aaaa\/report\.html\) \|/);
  const allPass = renderBatchSummary(batchViewOf(dir, META, [view.runs[0]!]));
  t.match(allPass, /^# ✅ chaoslab only-ack-x2: 1 passed\n/);
  t.notMatch(allPass, /Did not pass/);
});

t.test('index.html: self-contained, a row per run with status, time, leading finding, stderr, link; filters', async (t) => {
  const dir = t.testdir();
  const { view, runs } = batchFolder(dir);
  const hostile = { ...runs[1]!, label: '<b>x</b>', view: viewOf(withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr: HOSTILE.stderr })) };
  const page = renderBatchIndex(batchViewOf(dir, META, [...view.runs, hostile]));
  t.match(
    page,
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'">/,
  );
  t.notMatch(page, /<script|https?:\/\//, 'no script, no network');
  t.match(page, /<title>only-ack-x2: 1 passed, 2 failed, 1 interrupted — chaoslab<\/title>/);
  t.match(page, /<header class="banner fail"/, 'red when a run failed');
  const rows = page.match(/<tr class="run [^"]*" data-status="[^"]*">/g);
  t.same(
    rows,
    [
      '<tr class="run fail" data-status="fail">',
      '<tr class="run fail" data-status="fail">',
      '<tr class="run interrupted" data-status="interrupted">',
      '<tr class="run pass" data-status="pass">',
    ],
    'failures first, then the others, passes last (not in run or name order)',
  );
  t.match(page, /<a href="20261201-020001-ack-crash-bbbb\/report\.html">ack-crash #2<\/a><span class="scenario">ack-crash<\/span>/);
  t.match(page, /<td class="time">0\.909 s<\/td>\n<td class="finding">incarnation 1 sent ACK 1 at 0\.589 s/);
  t.match(page, /<details open><summary>the consumer said \(stderr of incarnation 1, last 3 lines\)<\/summary><pre class="out">Traceback/);
  for (const s of ['all', 'fail', 'pass', 'error', 'interrupted']) t.match(page, new RegExp(`<input type="radio" name="filter" id="f-${s}"`), `a ${s} filter`);
  t.match(page, /<label for="f-fail">Failed<b>2<\/b><\/label>/);
  t.match(page, /<label for="f-error">Error<b>0<\/b><\/label>/);
  t.match(page, /#f-fail:checked~table tr\.run:not\(\[data-status="fail"\]\)\{display:none\}/);
  t.match(page, /#f-error:checked~p\.none\{display:block\}/, 'an empty filter says so');
  t.notMatch(page, /<b>x<\/b>|<img src=x/, 'labels and stderr are escaped');
  t.match(page, /&lt;b&gt;x&lt;\/b&gt;/);

  const odd = renderBatchIndex(batchViewOf(dir, META, [{ ...runs[0]!, view: { ...runs[0]!.view, status: 'skipped "x"' as RunStatus } }]));
  t.match(
    odd,
    /<input type="radio" name="filter" id="f-skipped__x_"><label for="f-skipped__x_">skipped &quot;x&quot;<b>1<\/b>/,
    'any status gets a safe filter',
  );
  t.match(odd, /<header class="banner error"/);
  t.match(renderBatchIndex(batchViewOf(dir, META, [runs[0]!])), /<header class="banner pass"/);
  t.match(renderBatchIndex(batchViewOf(dir, META, [])), /<header class="banner interrupted"/);
});

t.test("a run's journal the consumer wrote garbage into (unsealed) does not stop the batch's junit.xml: its verdict is the run's own", async (t) => {
  const dir = t.testdir();
  const { view } = batchFolder(dir);
  const before = renderBatchFiles(view) && readFileSync(join(dir, 'junit.xml'), 'utf8');
  const journal = join(view.runs[1]!.runDir, 'journal.jsonl');
  writeFileSync(journal, `${readFileSync(journal, 'utf8')}null\n`);
  renderBatchFiles(view);
  const junit = readFileSync(join(dir, 'junit.xml'), 'utf8');
  t.match(junit, /<testsuite name="chaoslab only-ack-x2" tests="3" failures="1" errors="0" skipped="1"/);
  t.not(junit, before, 'only the details its journal gave (the consumer, its stderr) are missing');
});

t.test('the batch files on disk, and re-rendering a batch from its journals', async (t) => {
  const dir = t.testdir();
  const { view } = batchFolder(dir);
  const files = renderBatchFiles(view);
  t.same(
    files.map((f) => f.slice(dir.length + 1)),
    [...BATCH_FILES],
  );
  t.match(readFileSync(join(dir, 'junit.xml'), 'utf8'), /<testsuite name="chaoslab only-ack-x2" tests="3" failures="1" errors="0" skipped="1"/);
  t.same(readBatchMeta(dir).meta, META);
  t.same(resolveRunFolders(dir).batch, dir, 'a folder of runs with results.json is a batch');

  // Every run's reports and the batch files go; re-rendering brings them all back, labels and order kept.
  for (const r of view.runs) rmSync(join(r.runDir, 'report.html'));
  const before = readFileSync(join(dir, 'results.json'), 'utf8');
  for (const f of BATCH_FILES) rmSync(join(dir, f));
  writeFileSync(join(dir, 'results.json'), before);
  const { runs } = resolveRunFolders(dir);
  const again = rerenderBatch(dir, runs);
  t.equal(again.runs.length, 3);
  for (const r of view.runs) t.ok(existsSync(join(r.runDir, 'report.html')), `${r.label}: report.html re-rendered`);
  for (const f of BATCH_FILES) t.ok(existsSync(join(dir, f)), `${f} re-rendered`);
  t.same(JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')), JSON.parse(before), 'the same results as at the end of the batch');

  // Without results.json (an older batch): named after its folder, labelled by scenario.
  const old = t.testdir();
  const batch = join(old, '20261201-020000-catalogue-k3j9');
  writeRunFolder(join(batch, '20261201-020000-ack-crash-aaaa'), golden('ack-crash-pass'));
  writeRunFolder(join(batch, '20261201-020001-resync-required-bbbb'), golden('resync-required-pass'));
  writeFileSync(join(batch, 'junit.xml'), '');
  const fallback = rerenderBatch(batch, resolveRunFolders(batch).runs);
  t.equal(fallback.view.name, 'catalogue');
  t.same(
    fallback.view.runs.map((r) => r.label),
    ['ack-crash', 'resync-required'],
  );
  t.match(fallback.view.commandLine, /^chaoslab report 20261201-020000-catalogue-k3j9$/);
  t.equal(batchNameOf('/r/20261130-101500-only-ack-x2-k3j9'), 'only-ack-x2');
  writeFileSync(join(batch, 'results.json'), '{not json');
  t.same(readBatchMeta(batch), { labels: new Map() }, 'an unreadable results.json is ignored');
});

t.test('a batch an interrupt cut short: the runs never started are in every batch file, and survive a re-render', async (t) => {
  const dir = t.testdir();
  const { runs } = batchFolder(dir);
  const notStarted = [
    { label: 'gap', scenario: 'gap', file: 'scenarios/ledger/gap.yaml' },
    { label: 'cuts', scenario: 'cuts', file: 'scenarios/ledger/cuts.yaml' },
  ];
  const view = batchViewOf(dir, { ...META, notStarted }, runs);
  t.equal(totalsLine(view), '1 passed, 1 failed, 1 interrupted, 2 not started');
  renderBatchFiles(view);
  const data = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
  t.same(data.notStarted, notStarted);
  t.equal(data.totals.notStarted, 2);
  t.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /## Not started \(interrupted\): 2\n\ngap, cuts\n/);
  const junit = readFileSync(join(dir, 'junit.xml'), 'utf8');
  t.match(junit, /tests="5" failures="1" errors="0" skipped="3"/, 'the interrupted run and the two never started are skipped');
  t.match(junit, /<testcase name="gap"[^>]*file="scenarios\/ledger\/gap.yaml">\s*<skipped message="not started: interrupted"\/>/);
  t.same(readBatchMeta(dir).meta?.notStarted, notStarted, 'results.json keeps them');
  const again = rerenderBatch(dir, resolveRunFolders(dir).runs);
  t.same(again.view.notStarted, notStarted, 'chaoslab report <batch> keeps them too');
  t.match(readFileSync(join(dir, 'junit.xml'), 'utf8'), /skipped="3"/);
});

t.test('what the command says first (sections): drawn first in index.html and summary.md, kept through a re-render', async (t) => {
  const dir = t.testdir();
  const { runs } = batchFolder(dir);
  const sections = [
    {
      title: 'Confirmed failures (1)',
      lines: [{ text: 'run 2: <b>shrunk</b> to 1 step', href: '20261201-020001-ack-crash-bbbb/report.html' }, { text: '  step: a cut' }],
    },
  ];
  const view = batchViewOf(dir, { ...META, sections }, runs);
  renderBatchFiles(view);
  const summary = readFileSync(join(dir, 'summary.md'), 'utf8');
  t.match(
    summary,
    /## Confirmed failures \(1\)\n\n- \[run 2: &lt;b&gt;shrunk&lt;\/b&gt; to 1 step\]\(20261201-020001-ack-crash-bbbb\/report.html\)\n- {3}step: a cut\n/,
    'the text escaped, the link kept',
  );
  t.ok(summary.indexOf('Confirmed failures') < summary.indexOf('## Did not pass'), 'before the runs');
  const index = readFileSync(join(dir, 'index.html'), 'utf8');
  t.match(
    index,
    '<section class="said"><h2>Confirmed failures (1)</h2><ul><li><a href="20261201-020001-ack-crash-bbbb/report.html">run 2: &lt;b&gt;shrunk&lt;/b&gt; to 1 step</a></li><li>  step: a cut</li></ul></section>',
  );
  t.same(JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')).sections, sections);
  t.same(readBatchMeta(dir).meta?.sections, sections);
  t.same(rerenderBatch(dir, resolveRunFolders(dir).runs).view.sections, sections, 'chaoslab report <batch> keeps them');
  const plain = batchViewOf(dir, META, runs);
  t.notOk('sections' in JSON.parse(renderBatchResults(plain)), 'a batch without them has none');
});

t.test('chaoslab report <batch>: every run, then index.html, summary.md, results.json, junit.xml', async (t) => {
  const dir = t.testdir();
  const { view } = batchFolder(dir);
  renderBatchFiles(view);
  for (const r of view.runs) rmSync(join(r.runDir, 'summary.md'));
  rmSync(join(dir, 'index.html'));
  let out = '';
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => {
    out += chunk;
    return true;
  }) as typeof process.stdout.write;
  try {
    const program = new Command('chaoslab').exitOverride();
    reportCommand.register(program);
    await program.parseAsync(['node', 'chaoslab', 'report', dir]);
  } finally {
    process.stdout.write = write;
  }
  t.equal(out.match(/^(PASS|FAIL|INTERRUPTED) {2}ack-crash/gm)?.length, 3, 'all three runs, not only the last');
  for (const r of view.runs) t.ok(existsSync(join(r.runDir, 'summary.md')));
  t.match(out, /only-ack-x2: 1 passed, 1 failed, 1 interrupted\n/);
  for (const f of BATCH_FILES) t.match(out, new RegExp(`wrote .*${f.replace('.', '\\.')}\\n`));
  t.ok(existsSync(join(dir, 'index.html')));
});

t.test('the batch folder is named after what was asked', async (t) => {
  t.equal(batchName([], { all: true, repeat: 1 }), 'catalogue');
  t.equal(batchName([], { all: true, lab: 'feed', repeat: 1 }), 'feed-catalogue');
  t.equal(batchName([], { only: 'ack-*', repeat: 2 }), 'only-ack-x2');
  t.equal(batchName([], { only: '*', repeat: 1 }), 'only-glob');
  t.equal(batchName([], { only: 'Malformed-{plus,minus}*', repeat: 1 }), 'only-malformed-plus-minus');
  t.equal(batchName(['ack-crash'], { repeat: 3 }), 'ack-crash-x3');
  t.equal(batchName(['ack-crash', 'gap'], { repeat: 1 }), 'ack-crash-gap');
  t.equal(batchName(['../../x.yaml'], { repeat: 2 }), 'x.yaml-x2');
  t.equal(batchName([], { repeat: 2 }), 'batch-x2');
  t.equal(batchName(['a'.repeat(100)], { repeat: 1 }).length, 60);
});

t.test('the consumer’s own words in a single run’s summary.md and view', async (t) => {
  const journal = failing();
  const view = viewOf(journal);
  t.same(view.stderrTail, {
    incarnation: 1,
    lines: ['Traceback (most recent call last):', '  File "<string>", line 1, in <module>', 'ValueError: 1'],
    omitted: 0,
  });
  const md = renderSummary(journal, view);
  t.match(
    md,
    /## Why\n[^#]*\n## What the consumer said \(stderr of incarnation 1, last 3 lines\)\n\n```\nTraceback \(most recent call last\):\n {2}File "<string>", line 1, in <module>\nValueError: 1\n```\n/,
  );
  t.notMatch(renderSummary(golden('ack-crash-pass')), /What the consumer said/, 'a pass: nothing');
  t.notMatch(renderSummary(golden('cuts-pass')), /What the consumer said/, 'a pass whose consumer wrote to stderr: nothing');
  t.match(viewOf(golden('cuts-pass')).stderrTail, { incarnation: 5 }, 'the last process that wrote to stderr');

  const long = Array.from({ length: 40 }, (_, i) => `line ${i} \u001b[31m\`\`\`\``).join('\n');
  const tail = stderrTailOf(withOutput(golden('ack-crash-ack-before-commit'), 2, { stderr: long }))!;
  t.equal(tail.lines.length, STDERR_TAIL_LINES);
  t.equal(tail.omitted, 40 - STDERR_TAIL_LINES);
  t.equal(tail.lines.at(-1), 'line 39 \\x1b[31m````', 'control bytes made visible');
  const longMd = renderSummary(withOutput(golden('ack-crash-ack-before-commit'), 2, { stderr: long }));
  t.match(longMd, /\n`````\n\[… 28 earlier lines …\]\nline 28/, 'a fence longer than any backtick run in the output');
});

/** The ack-crash run with consumer incarnation 1's exit replaced. */
function exitedWith(code: number, stderr: string, connected = true): JournalEntry[] {
  let journal = golden('ack-crash-ack-before-commit');
  const exit = find(journal, 'process-exit', (e) => e.role === 'consumer' && e.incarnation === 1);
  journal = replace(journal, exit, (e) => ({ ...e, code, stderrTail: stderr }));
  if (!connected) journal = journal.filter((e) => !(e.type === 'wire' && e.owner?.role === 'consumer' && e.owner.incarnation === 1));
  return journal;
}

t.test('a command that could not be started leads its verdict with that, quoting the shell', async (t) => {
  const notFound = exitedWith(127, 'bash: line 1: nonexistent-binary: command not found\n');
  const finding = cannotStartFinding(notFound);
  t.same(finding, {
    code: 'cannot-start',
    text: 'your command could not be started: "bash: line 1: nonexistent-binary: command not found" (consumer incarnation 1 exited 127)',
    subject: { process: { role: 'consumer', incarnation: 1 }, t: find(notFound, 'process-exit').t },
  });
  const lab = find(notFound, 'verdict').verdict;
  const verdict = withCoreFindings(lab, coreFindings(notFound));
  t.equal(verdict.status, 'fail');
  t.equal(verdict.headline, finding!.text, 'it leads the verdict');
  t.equal(verdict.findings.length, lab.findings.length + 1, 'the lab’s findings follow');

  t.match(cannotStartFinding(exitedWith(126, 'bash: line 1: ./client.py: Permission denied\n')), {
    text: /"bash: line 1: \.\/client\.py: Permission denied" \(consumer incarnation 1 exited 126\)/,
  });
  t.match(cannotStartFinding(exitedWith(127, '')), { text: 'your command could not be started: (consumer incarnation 1 exited 127)' });
  // Sealed, a program under /tmp is not found although it is there on the machine: the private /tmp is said.
  const inTmp = exitedWith(127, 'bash: line 1: /tmp/x/feedc: No such file or directory\n');
  const sealedStart = find(inTmp, 'process-start', (e) => e.role === 'consumer' && e.incarnation === 1);
  t.match(cannotStartFinding(replace(inTmp, sealedStart, (e) => ({ ...e, sealed: { uid: 61003 } }))), {
    text: /exited 127\) — a sealed run has its own empty \/tmp, so nothing of yours under \/tmp is there/,
  });
  t.notMatch(cannotStartFinding(inTmp)?.text, /own empty \/tmp/, 'unsealed, /tmp is the machine’s own: nothing to say');
  t.ok(isShellCannotRun(find(inTmp, 'process-exit', (e) => e.role === 'consumer')), 'the shell’s 127 stops the run at once');
  t.notOk(isShellCannotRun(find(exitedWith(2, 'x\n'), 'process-exit', (e) => e.role === 'consumer')), 'another status does not');
  t.match(
    cannotStartFinding(exitedWith(2, "python3: can't open file '/lab/c.py': [Errno 2] No such file or directory\n", false)),
    { text: /^your command could not be started: "python3: can't open file/ },
    'exited before connecting, saying the file is not there',
  );
  t.match(cannotStartFinding(exitedWith(1, "Error: Cannot find module '/lab/c.js'\n    at Module._resolveFilename\n", false)), {
    text: /^your command could not be started: "Error: Cannot find module '\/lab\/c\.js'" \(consumer incarnation 1 exited 1\)$/,
  });
  t.equal(
    cannotStartFinding(exitedWith(1, 'could not write the control database: No such file or directory\n', false)),
    undefined,
    'the consumer’s own "No such file": its failure, not a start failure',
  );
  t.equal(cannotStartFinding(exitedWith(2, 'config not found\n', true)), undefined, 'it had connected: an ordinary failure');
  t.equal(cannotStartFinding(exitedWith(1, TRACEBACK, false)), undefined, 'a traceback is the consumer’s own failure, not a start failure');
  t.equal(cannotStartFinding(golden('cuts-pass')), undefined, 'connection refused is not "could not start"');
  t.equal(cannotStartFinding(golden('ack-crash-pass')), undefined);
});
