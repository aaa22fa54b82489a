// A batch and the consumer's own words, through the real CLI: a command that cannot start, a
// consumer that raises at start-up, and `run --only "ack-*" --repeat 2` against a mutant that
// fails one of them — one batch folder named after what was asked, `latest` pointing at it, its
// index.html, summary.md, results.json and junit.xml, a console that lists only the failures,
// and `chaoslab report` re-rendering every run of it.
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chaoslab, onlyRun } from '../helpers/cli.js';

t.setTimeout(600_000);

t.test('a command that cannot start leads its verdict with that, quoting the shell', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'ack-crash', '--no-seal', '--reports', reports, '--consumer', 'nonexistent-binary']);
  t.equal(result.exitCode, 1, result.stdout);
  t.match(result.stdout, /\n {2}Why: your command could not be started: "[^"]*nonexistent-binary: command not found" \(consumer incarnation 1 exited 127\)\n/);
  const { dir, journal } = onlyRun(reports);
  t.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /\*\*your command could not be started: /);
  t.equal(
    journal.filter((e) => e.type === 'process-start' && e.role === 'consumer').length,
    1,
    'stopped at the first try: every restart would fail the same way',
  );
});

t.test('a consumer that raises at start-up: its traceback under the verdict, on the console and in summary.md', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(['run', 'ack-crash', '--no-seal', '--reports', reports, '--consumer', 'python3 -c "raise ValueError(1)"']);
  t.equal(result.exitCode, 1, result.stdout);
  t.match(
    result.stdout,
    /The consumer said \(stderr of incarnation \d, last 3 lines\):\n {4}│ Traceback \(most recent call last\):\n(.*\n)? {4}│ ValueError: 1\n/,
  );
  t.notMatch(result.stdout, /could not be started/, 'it started: an ordinary failure');
  const { dir } = onlyRun(reports);
  t.match(
    readFileSync(join(dir, 'summary.md'), 'utf8'),
    /## What the consumer said [^\n]*\n\n```\nTraceback \(most recent call last\):\n[\s\S]*ValueError: 1\n```/,
  );
});

t.test('run --only "ack-*" --repeat 2: one batch, one overview, only the failures at the end', async (t) => {
  const reports = t.testdir();
  const mutant = 'node dist/consumer/ledger/mutants/ack-before-commit.js';
  const result = await chaoslab(['run', '--only', 'ack-*', '--repeat', '2', '--no-seal', '--reports', reports, '--consumer', mutant]);
  t.equal(result.exitCode, 1, result.stdout);
  const [batch, ...others] = readdirSync(reports).filter((d) => d !== 'latest');
  t.same(others, [], 'one batch folder');
  t.match(batch, /^\d{8}-\d{6}-only-ack-x2-[a-z0-9]{4}$/, 'named after what was asked');
  t.equal(readlinkSync(join(reports, 'latest')), batch, 'latest points at the batch');
  const dir = join(reports, batch!);
  for (const f of ['index.html', 'summary.md', 'results.json', 'junit.xml']) t.ok(existsSync(join(dir, f)), f);
  const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
  t.same(
    results.runs.map((r: { label: string; status: string }) => `${r.label}: ${r.status}`),
    ['ack-crash #1: fail', 'ack-crash #2: fail', 'ack-lost #1: pass', 'ack-lost #2: pass'],
  );
  t.match(results.runs[0].findings[0], { code: 'ack-before-commit' });

  t.match(result.stdout, /\nDid not pass \(2\):\n\nFAIL {2}ack-crash #1 /);
  t.notMatch(result.stdout, /ack-lost[^\n]*report\.html/, 'the passes are not listed again');
  t.match(result.stdout, new RegExp(`\\n2 passed, 2 failed — .*${batch}/index\\.html$`), 'one line of totals');
  t.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /^# ❌ chaoslab only-ack-x2: 2 passed, 2 failed\n/);

  const verbose = await chaoslab(['run', 'ack-lost', '--repeat', '2', '-v', '--no-seal', '--reports', reports]);
  t.equal(verbose.exitCode, 0, verbose.stdout);
  t.match(
    verbose.stdout,
    /reports:\n {2}ack-lost #1 +\S+\/report\.html\n {2}ack-lost #2 +\S+\/report\.html\n\n2 passed — \S+-ack-lost-x2-[a-z0-9]{4}\/index\.html$/,
  );

  // Every run's reports and the batch's files, re-rendered from the journals.
  for (const r of results.runs) rmSync(join(dir, r.runDir, 'report.html'));
  rmSync(join(dir, 'index.html'));
  const again = await chaoslab(['report', dir]);
  t.equal(again.exitCode, 0, again.stderr);
  t.equal(again.stdout.match(/^(PASS|FAIL) {2}ack-/gm)?.length, 4, 'all four runs');
  for (const r of results.runs) t.ok(existsSync(join(dir, r.runDir, 'report.html')));
  t.match(again.stdout, /only-ack-x2: 2 passed, 2 failed\nwrote .*index\.html\n/);
  t.same(JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')).runs, results.runs, 'the same results');
});
