// Do the console, summary.md, junit.xml and report.html of a run say what its verdict says?
// For every golden journal (recorded from real runs) they must agree (agreementProblems is []);
// a tampered report must be caught, so the check itself can fail; and the run that once made
// the reports contradict their verdict — resync-required, where the consumer stops early on
// purpose — says PASS everywhere, with the scenario's expected state, not the control's.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { agreementProblems } from '../../../harness/report/agreement.js';
import { createConsoleReporter, outcomeLines } from '../../../harness/report/console.js';
import { renderRunFolder } from '../../../harness/report/render-all.js';
import { viewOf } from '../../../harness/report/view.js';
import { cutAfter, find, GOLDEN_NAMES, golden, harnessFailed, withOutput, writeRunFolder } from '../../helpers/journals.js';

/** Renders `journal` into a fresh run folder under `root`, as a run does at its end. */
function rendered(root: string, name: string, journal: readonly JournalEntry[]) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return renderRunFolder(dir, { entries: journal });
}

/** Changes a report file; fails the test if `from` is not in it (the tampering would prove nothing). */
function tamper(t: Test, dir: string, file: string, from: string | RegExp, to: string): void {
  const path = join(dir, file);
  const before = readFileSync(path, 'utf8');
  const after = before.replace(from, to);
  t.not(after, before, `tampered with ${file}`);
  writeFileSync(path, after);
}

t.test('every golden journal: the console, summary.md, junit.xml and report.html agree with the verdict', async (t) => {
  const root = t.testdir();
  for (const name of GOLDEN_NAMES) {
    const journal = golden(name);
    const verdict = find(journal, 'verdict').verdict;
    const r = rendered(root, name, journal);
    t.equal(r.view.status, verdict.status, `${name}: the view is the verdict`);
    t.equal(r.view.headline, verdict.headline);
    t.same(r.view.findings, verdict.findings);
    t.same(r.view.state, verdict.state);
    t.same(agreementProblems(r.runDir, r.view), [], `${name}: every output agrees (${verdict.status}, ${verdict.findings.length} findings)`);

    // Re-rendered from the journal file (`chaoslab report`): the same.
    const fromFile = renderRunFolder(writeRunFolder(join(root, `${name}-file`), journal));
    t.same(agreementProblems(fromFile.runDir, fromFile.view), [], `${name}: also re-rendered from journal.jsonl`);
  }
});

t.test('runs without a verdict agree too: interrupted, harness error', async (t) => {
  const root = t.testdir();
  const pass = golden('ack-crash-pass');
  const cut = rendered(
    root,
    'interrupted',
    cutAfter(
      pass,
      find(pass, 'process-exit', (e) => e.role === 'consumer'),
    ),
  );
  t.equal(cut.view.status, 'interrupted');
  t.same(agreementProblems(cut.runDir, cut.view), []);
  const failed = rendered(root, 'error', harnessFailed(pass, find(pass, 'toxiproxy'), 'toxiproxy went away'));
  t.equal(failed.view.status, 'error');
  t.equal(failed.view.headline, 'harness: toxiproxy went away');
  t.same(agreementProblems(failed.runDir, failed.view), []);
});

t.test('the check can fail: a tampered report is caught', async (t) => {
  const root = t.testdir();
  const fresh = (name: 'ack-crash-pass' | 'ack-crash-ack-before-commit' | 'resync-required-pass', as: string) => rendered(root, as, golden(name));
  const problems = (r: ReturnType<typeof fresh>) => agreementProblems(r.runDir, r.view);

  const pass = fresh('ack-crash-pass', 'pass-summary');
  tamper(t, pass.runDir, 'summary.md', '— PASS', '— FAIL');
  t.match(problems(pass), [/^summary\.md does not say the status: "— PASS"$/], 'PASS replaced by FAIL in summary.md');

  const fail = fresh('ack-crash-ack-before-commit', 'fail-finding');
  const second = fail.view.findings[1]!.text;
  tamper(t, fail.runDir, 'report.html', /<li>incarnation 2 never sent ACK 1[^<]*<\/li>/, '');
  t.same(problems(fail), [`report.html does not say a finding: ${JSON.stringify(second)}`], 'a finding dropped from report.html');

  const headline = fresh('ack-crash-ack-before-commit', 'fail-headline');
  tamper(t, headline.runDir, 'report.html', '<p class="headline">incarnation 1 sent ACK 1', '<p class="headline">incarnation 1 sent ACK 2');
  t.match(problems(headline), [/^report\.html does not say the headline/, /^report\.html does not say a finding/], 'a headline reworded in report.html');

  const word = fresh('ack-crash-pass', 'pass-word');
  tamper(t, word.runDir, 'report.html', '<span class="status">PASS</span>', '<span class="status">FAIL</span>');
  t.match(
    problems(word),
    [/^report\.html does not say the status: "<span class=\\"status\\">PASS<\/span>"$/],
    'the status a reader sees, changed in report.html',
  );

  const said = rendered(
    root,
    'fail-stderr',
    withOutput(golden('ack-crash-ack-before-commit'), 1, { stderr: 'Traceback (most recent call last):\nValueError: 1\n' }),
  );
  t.same(problems(said), [], 'the consumer’s stderr is under the verdict');
  tamper(t, said.runDir, 'summary.md', /## What the consumer said[\s\S]*?ValueError: 1\n```\n/, '');
  t.same(problems(said), [`summary.md does not say the consumer's stderr: "ValueError: 1"`], 'the consumer’s stderr dropped from summary.md');

  const junit = fresh('ack-crash-ack-before-commit', 'fail-junit');
  tamper(t, junit.runDir, 'junit.xml', /\s*<failure [\s\S]*<\/failure>/, '');
  t.match(problems(junit), [/^junit\.xml does not say the status/, /^junit\.xml does not say a finding/, /^junit\.xml does not say a finding/]);

  const passJunit = fresh('ack-crash-pass', 'pass-junit');
  tamper(t, passJunit.runDir, 'junit.xml', '<system-out>', '<failure message="x" type="chaoslab.verdict">x</failure>\n      <system-out>');
  t.same(problems(passJunit), ['junit.xml has <failure> for a pass run']);

  // The old contradiction: the expected row showing the control's state (last 9) instead of the scenario's (last 2).
  const resync = fresh('resync-required-pass', 'resync-summary');
  tamper(t, resync.runDir, 'summary.md', '| expected (from the script) | 2 | 9 | 3 | 9 |', '| expected (from the script) | 9 | 19 | 10 | 19 |');
  t.match(
    problems(resync),
    [/^summary\.md does not say the final state: "\| expected \(from the script\) \| 2 \| 9 \| 3 \| 9 \|/],
    'summary.md: an expected row of last 9',
  );
  const resyncHtml = fresh('resync-required-pass', 'resync-html');
  tamper(
    t,
    resyncHtml.runDir,
    'report.html',
    '<th>expected (from the script)</th><td class="num">2</td><td class="num">9</td>',
    '<th>expected (from the script)</th><td class="num">9</td><td class="num">19</td>',
  );
  t.match(problems(resyncHtml), [/^report\.html does not say the final state: /], 'report.html: an expected row of last 9');
  const marked = fresh('resync-required-pass', 'resync-marked');
  tamper(t, marked.runDir, 'report.html', '<tr class="good"><th>consumer under test</th>', '<tr class="bad"><th>consumer under test</th>');
  t.match(problems(marked), [/^report\.html does not say the final state: /], 'report.html: a right row marked wrong');

  const gone = fresh('ack-crash-pass', 'gone');
  rmSync(join(gone.runDir, 'junit.xml'));
  t.match(problems(gone), [/^junit\.xml cannot be read: ENOENT/]);
});

t.test('resync-required passes: every output says PASS, the expected state is the scenario’s (last 2), nothing is marked wrong', async (t) => {
  const root = t.testdir();
  const journal = golden('resync-required-pass');
  const r = rendered(root, '20261130-234800-resync-required-u2pl', journal);
  const { view } = r;
  t.equal(view.status, 'pass');
  t.equal(
    view.headline,
    'the consumer ended with last 2, total 9: where the scenario expects it to stop, while the always-connected control consumer read the whole script (last 9)',
  );
  t.notMatch(view.headline, /as the control consumer/, 'the consumer did not end as the control did, and the headline does not say so');
  t.same(
    view.state?.rows.map((row) => [row.label, row.cells.slice(0, 4), row.ok]),
    [
      ['expected (from the script)', [2, 9, 3, 9], undefined],
      ['consumer under test', [2, 9, 3, 9], true],
      ['control consumer', [9, 19, 10, 19], true],
    ],
    'the verdict’s table: expected last 2; consumer and control each right against their own expectation',
  );

  const html = readFileSync(join(r.runDir, 'report.html'), 'utf8');
  t.match(html, /<header class="banner pass" id="verdict" data-status="pass">\n<span class="status">PASS<\/span><h1>resync-required<\/h1>/);
  t.match(html, /<title>PASS resync-required — chaoslab<\/title>/);
  t.match(html, `<p class="headline">${view.headline}</p>`);
  t.match(
    html,
    '<tr class=""><th>expected (from the script)</th><td class="num">2</td><td class="num">9</td><td class="num">3</td><td class="num">9</td><td></td></tr>',
    'report.html: expected last 2, total 9',
  );
  t.notMatch(html, /<th>expected \(from the script\)<\/th><td class="num">9<\/td>/, 'not last 9');
  t.notMatch(html, /class="bad"|class="bad-text"/, 'report.html: no row marked wrong');
  t.notMatch(html, /FAIL|<h2>Why<\/h2>|Smallest diff/);

  const summary = readFileSync(join(r.runDir, 'summary.md'), 'utf8');
  t.match(summary, /^# chaoslab: resync-required — PASS\n\n\*\*the consumer ended with last 2, total 9: where the scenario expects it to stop/);
  t.match(summary, '\n| expected (from the script) | 2 | 9 | 3 | 9 |  |\n', 'summary.md: expected last 2, total 9');
  t.match(summary, '\n| consumer under test | 2 | 9 | 3 | 9 | none |\n| control consumer | 9 | 19 | 10 | 19 | none |\n');
  t.notMatch(summary, /\*\*(expected|consumer|control)/, 'summary.md: no row marked wrong (in bold)');
  t.notMatch(summary, /FAIL|## Why/);

  const junit = readFileSync(join(r.runDir, 'junit.xml'), 'utf8');
  t.match(junit, /<testsuites name="chaoslab" tests="1" failures="0" errors="0" skipped="0"/);
  t.notMatch(junit, /<failure|<error/, 'junit.xml: a passing test case');
  t.match(junit, /<system-out>resync-required: PASS in 0\.821 s\n/);

  // The console, as `chaoslab run` prints it: the reporter, handed the run's view.
  const out = { text: '', write: (s: string) => (out.text += s) };
  const reporter = createConsoleReporter({ tty: false, quiet: true, out, interval: false, cwd: root });
  reporter.scenarioStarted('resync-required');
  for (const e of journal) reporter.onJournal(e);
  reporter.scenarioFinished('resync-required', { status: 'pass', runDir: r.runDir, view });
  reporter.finalTable();
  reporter.close();
  t.match(out.text, `\nPASS  resync-required  (0.821 s)\n  ${view.headline}\n`, 'the console: PASS and the same headline');
  t.match(out.text, /\nresync-required {2}PASS {5}0\.821 s {2}—\n/, 'the final table: PASS, no reason');
  t.notMatch(out.text, /FAIL|Why:/);
  t.same(outcomeLines('resync-required', { status: 'pass', runDir: r.runDir, view }, 0).lines, ['PASS  resync-required  (0.821 s)', `  ${view.headline}`]);

  t.same(agreementProblems(r.runDir, view), []);
  t.same(viewOf(journal), view, 'the view re-derived from the journal is the same');
});
