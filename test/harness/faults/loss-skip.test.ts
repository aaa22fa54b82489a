// A scenario that needs packet loss, where runs are not sealed: SKIPPED with the reason, never
// run without its loss, and no failure (exit 0). The status comes from the verdict, and every
// renderer draws it from there: console, summary.md, junit.xml, report.html, and for a batch
// results.json, index.html and the totals. Run in process (unsealed by `seal: 'off'`, as a
// machine whose probe fails would be), so it counts for coverage and needs no root.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBatch } from '../../../harness/run/batch.js';
import { combinedStatus, EXIT } from '../../../harness/base/exit-status.js';
import { judgeRow, renderMatrixMarkdown } from '../../../harness/run/mutants.js';
import { agreementProblems } from '../../../harness/report/agreement.js';
import { totalsLine } from '../../../harness/report/batch-view.js';
import { createConsoleReporter, outcomeLines } from '../../../harness/report/console.js';
import { overallStatus, resultsJson } from '../../../harness/report/run-json.js';
import { runScenario } from '../../../harness/run/runner.js';
import { resolveScenario } from '../../../harness/catalogue/catalogue.js';
import { lossFaultOf } from '../../../harness/scenario/faults.js';
import { loadScenario } from '../../../harness/catalogue/load.js';
import { scenariosDir } from '../../../harness/base/paths.js';
import type { JournalEntry } from '../../../harness/record/journal.js';

t.setTimeout(300_000);

const load = (name: string) => loadScenario(resolveScenario(name, scenariosDir));

t.test('the loss fault as scenarios write it', async (t) => {
  const lossy = load('lossy-link');
  t.match(lossFaultOf(lossy.faults), { name: 'lossy-link', effect: { kind: 'loss', percent: 10 }, start: { kind: 'incarnation', n: 1 } });
  t.ok(lossy.timeoutMs >= 8000, 'a per-wait timeout of 8 s or more');
  const feed = load('feed-acceptance-loss');
  t.match(lossFaultOf(feed.faults), { effect: { kind: 'loss', percent: 10 } });
  t.ok(feed.timeoutMs >= 8000);
  t.equal(lossFaultOf(load('feed-acceptance').faults), undefined, 'feed-acceptance stays loss-free');
});

t.test('bad loss faults are named by file, line and field', async (t) => {
  const dir = t.testdir({
    'two-losses.yaml': [
      'name: two-losses',
      'description: two loss faults',
      'events: { generate: { count: 10, seed: 1 } }',
      'faults:',
      '  - { name: a, loss: { percent: 10 }, start: { incarnation: 1 } }',
      '  - { name: b, loss: { percent: 5 }, start: { random_events: { count: 2, seed: 1, min: 0, max: 9 } } }',
      '  - { name: c, loss: { percent: 100 }, start: { incarnation: 1 } }',
      '',
    ].join('\n'),
  });
  t.throws(() => loadScenario(join(dir, 'two-losses.yaml')), /faults\[2\]\.loss\.percent.*(99|maximum)/s, 'percent above 99');
  const ok = join(dir, 'two-losses.yaml');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(ok, readFileSync(ok, 'utf8').replace('percent: 100', 'percent: 50'));
  const error = (() => {
    try {
      loadScenario(ok);
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  })();
  t.match(error, /two-losses\.yaml:6:\d+.*one loss fault per scenario/);
  t.match(error, /a loss fault starts once: random_events would start several/);
});

t.test('unsealed: SKIPPED with the reason, nothing started, every report says so', async (t) => {
  const journal: JournalEntry[] = [];
  const reportsDir = t.testdir();
  const result = await runScenario({ scenario: load('lossy-link'), cwd: process.cwd(), reportsDir, seal: 'off', onJournal: (e) => journal.push(e) });
  t.equal(result.status, 'skipped');
  t.equal(result.verdict?.status, 'skipped');
  t.match(result.verdict?.headline, /^packet loss \(fault lossy-link\) needs a sealed run \(its own network namespace, nftables\): sealed mode off \(asked\)/);
  t.same(result.verdict?.findings, [], 'no finding: a skip is no failure');
  t.same(
    journal.map((e) => e.type),
    ['run-start', 'scenario', 'verdict', 'run-end'],
    'never run without its loss: no Toxiproxy, no process',
  );
  t.match(journal.at(-1), { type: 'run-end', status: 'skipped' });
  t.equal(EXIT[combinedStatus([result.status])], 0, 'exit 0');
  t.equal(EXIT[combinedStatus(['pass', 'skipped'])], 0);
  t.equal(EXIT[combinedStatus(['fail', 'skipped'])], 1);
  t.same(agreementProblems(result.runDir, result.view), [], 'console, summary.md, junit.xml and report.html agree');
  const summary = readFileSync(join(result.runDir, 'summary.md'), 'utf8');
  t.match(summary, /SKIPPED/);
  t.match(summary, /The run was skipped, not failed/);
  const junit = readFileSync(join(result.runDir, 'junit.xml'), 'utf8');
  t.match(junit, /skipped="1"/);
  t.match(junit, /<skipped message="packet loss \(fault lossy-link\) needs a sealed run/);
  t.notMatch(junit, /<failure |<error /);
  const html = readFileSync(join(result.runDir, 'report.html'), 'utf8');
  t.match(html, /class="banner skipped"/);
  t.match(html, /<title>SKIPPED lossy-link/);
  const { status, lines } = outcomeLines('lossy-link', result, 0);
  t.equal(status, 'skipped');
  t.match(lines[0], /^SKIPPED {2}lossy-link/);
  t.match(lines[1], /Why: packet loss \(fault lossy-link\) needs a sealed run/);
});

t.test('a batch: totals, results.json, index.html and the console count skipped runs apart', async (t) => {
  const reportsDir = t.testdir();
  const items = ['lossy-link', 'feed-acceptance-loss'].map((name) => ({ scenario: load(name), label: name }));
  const { runs, view, batchDir } = await runBatch('loss-skip', items, { jobs: 1, cwd: process.cwd(), reportsDir, seal: 'off' });
  const results = runs.map((run) => run.result);
  t.same(
    results.map((r) => r.status),
    ['skipped', 'skipped'],
  );
  t.equal(view.totals.skipped, 2);
  t.equal(totalsLine(view), '2 skipped');
  const json = JSON.parse(readFileSync(join(batchDir, 'results.json'), 'utf8')) as { totals: Record<string, number>; runs: { status: string }[] };
  t.equal(json.totals.skipped, 2, 'results.json counts them');
  t.same(
    json.runs.map((r) => r.status),
    ['skipped', 'skipped'],
  );
  t.equal(overallStatus(['skipped', 'skipped']), 'skipped', '--json: all skipped is skipped');
  t.equal(overallStatus(['pass', 'skipped']), 'pass', 'a pass and a skip: pass');
  t.equal(overallStatus([]), 'pass');
  t.equal(resultsJson([]).counts.skipped, 0);
  const summary = readFileSync(join(batchDir, 'summary.md'), 'utf8');
  t.match(summary, /^# ✅ chaoslab loss-skip: 2 skipped/);
  t.match(summary, /## Skipped \(2\)\n\n\| run \| why \| \|\n\|---\|---\|---\|\n\| lossy-link \| packet loss \(fault lossy-link\) needs a sealed run/);
  t.notMatch(summary, /Did not pass/);
  const index = readFileSync(join(batchDir, 'index.html'), 'utf8');
  t.match(index, /Skipped/);
  t.match(index, /class="[^"]*skipped/);
  const out = { text: '', write: (s: string) => void (out.text += s), columns: 100 };
  const reporter = createConsoleReporter({ tty: false, quiet: true, out, interval: false, cwd: reportsDir });
  const outcomes = results.map((r, i) => reporter.scenarioFinished(items[i]!.label, r));
  reporter.batchFinished(outcomes, view, { verbose: true });
  reporter.close();
  t.match(out.text, /Skipped \(2\):\n {2}SKIPPED {2}lossy-link: packet loss/);
  t.notMatch(out.text, /Did not pass/, 'a skip is not a failure');
  t.match(out.text, /0\/2 passed, 2 skipped/);
  t.match(out.text, /\n2 skipped — /);
  // The mutant matrix: a reference whose loss scenarios were skipped still passes everything run.
  const cells = results.map((r, i) => ({ scenario: items[i]!.label, status: r.status, reason: '', reasons: [], runDir: r.runDir }));
  const row = judgeRow({ label: 'typescript', kind: 'reference', language: 'typescript', command: 'x' }, cells, 'happy-path');
  t.equal(row.ok, true);
  t.equal(row.note, 'passes all 0 scenarios run (2 skipped)');
  // A mutant whose killer was skipped is not judged here: neither caught nor failed.
  const mutant = { label: 'm (typescript)', kind: 'mutant' as const, language: 'typescript', command: 'x', killer: 'lossy-link', reason: /never/ };
  const happy = { scenario: 'happy-path', status: 'pass' as const, reason: '', reasons: [], runDir: '' };
  const judged = judgeRow(mutant, [happy, cells[0]!], 'happy-path');
  t.equal(judged.ok, true);
  t.equal(judged.note, 'not judged here: its killer lossy-link was skipped (see its report)');
  t.equal(
    judgeRow(mutant, [happy, { ...cells[0]!, status: 'pass' }], 'happy-path').note,
    'SURVIVED lossy-link',
    'a killer that ran and passed is still a survival',
  );
  t.match(renderMatrixMarkdown([row], ['lossy-link'], batchDir), /\| – \|/);
});
