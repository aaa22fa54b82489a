// The command line as a user types it, from a directory that is not the project: several names
// make one batch, reports land under that directory, --json prints one document on stdout
// (the console on stderr), and every report carries the line that re-runs the run by hand.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ResultsJson } from '../../harness/report/run-json.js';
import { chaoslab } from '../helpers/cli.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', CHAOSLAB_SEAL: 'off' };

t.test('run ack-crash gap --json from another directory', { timeout: 600_000 }, async (t) => {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-cli-')));
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }));
  const r = await chaoslab(['run', 'ack-crash', 'gap', '--json'], { cwd, env });
  t.equal(r.exitCode, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as ResultsJson;
  t.equal(doc.status, 'pass');
  t.same(
    doc.runs.map((x) => [x.label, x.status]),
    [
      ['ack-crash', 'pass'],
      ['gap', 'pass'],
    ],
  );
  t.same(doc.counts, { pass: 2, fail: 0, error: 0, interrupted: 0, skipped: 0 }, 'the --json counts name every status, skipped too');
  for (const run of doc.runs) {
    t.ok(run.reports.dir.startsWith(join(cwd, 'reports')), `${run.label}: under the current directory's reports/`);
    t.equal(run.reproduce?.command, `chaoslab run ${run.label}`);
    t.same(run.reproduce?.env, { CHAOSLAB_SEAL: 'off' });
    t.equal(run.reproduce?.invokedAs, 'chaoslab run ack-crash gap --json');
    const summary = readFileSync(run.reports.summary, 'utf8');
    t.match(summary, `- re-run by hand: \`cd ${cwd} && CHAOSLAB_SEAL=off chaoslab run ${run.label}\``);
    t.match(readFileSync(run.reports.html, 'utf8'), 're-run by hand: <code>');
  }
  t.match(r.stderr, /\n2 passed — .*index\.html/, 'the console went to stderr');
  t.notMatch(r.stdout, /PASS/, 'stdout holds the document alone');
});

t.test('a single failing run, --json, --out', { timeout: 600_000 }, async (t) => {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-cli-')));
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }));
  const consumer = `node ${join(import.meta.dirname, '..', '..', 'dist', 'consumer', 'ledger', 'mutants', 'ack-before-commit.js')}`;
  const r = await chaoslab(['run', 'ack-crash', '--consumer', consumer, '--json', '-q', '--out', 'out'], { cwd, env });
  t.equal(r.exitCode, 1, r.stderr);
  const doc = JSON.parse(r.stdout) as ResultsJson;
  t.equal(doc.status, 'fail');
  t.equal(doc.total, 1);
  const [run] = doc.runs;
  t.equal(run?.status, 'fail');
  t.match(run?.headline, /ACK 1/);
  t.ok((run?.findings.length ?? 0) > 0);
  t.ok(run?.reports.dir.startsWith(join(cwd, 'out')), 'under --out');
  t.match(run?.reproduce?.invokedAs, /^chaoslab run ack-crash --consumer '.*' --json -q --out out$/, 'as typed, beside the re-run line');
  t.match(run?.reproduce?.command, /^chaoslab run ack-crash --consumer 'node .*ack-before-commit\.js'$/);
});

t.test('names that match nothing: exit 2, one line naming them, nothing run', { timeout: 120_000 }, async (t) => {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'chaoslab-cli-')));
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }));
  const r = await chaoslab(['run', 'ack-crash', 'ack-crsh', 'zz-*'], { cwd, env });
  t.equal(r.exitCode, 2);
  t.equal(r.stderr, 'chaoslab: no scenario matches "ack-crsh" (did you mean "ack-crash"?), "zz-*"');
  t.equal(r.stdout, '');
});
