// The command line and CHAOSLAB_* environment that re-run a run by hand: how they are made,
// that the run-start entry carries them, and that the view, summary.md, report.html and the
// JSON reporter show them — and that an older journal without them still renders.
import path from 'node:path';
import t from 'tap';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { scenariosDir } from '../../../harness/base/paths.js';
import { renderHtml } from '../../../harness/report/html.js';
import { overallStatus, resultsJson, runJson } from '../../../harness/report/run-json.js';
import { renderSummary } from '../../../harness/report/summary.js';
import { viewOf } from '../../../harness/report/view.js';
import { harnessEnv, reproduceLine, reproduceOf, scenarioArgument, shellWord, typedCommand } from '../../../harness/record/reproduce.js';
import { golden } from '../../helpers/journals.js';

const ackCrash = { name: 'ack-crash', file: path.join(scenariosDir, 'ledger', 'ack-crash.yaml') };

t.test('shellWord and typedCommand', async (t) => {
  t.equal(shellWord('ack-crash'), 'ack-crash');
  t.equal(shellWord('python3 c.py'), "'python3 c.py'");
  t.equal(shellWord("it's"), `'it'\\''s'`);
  t.equal(typedCommand(['run', 'ack-*', '--json']), "chaoslab run 'ack-*' --json");
});

t.test('scenarioArgument: the catalogue name, else a path', async (t) => {
  t.equal(scenarioArgument(ackCrash, '/anywhere'), 'ack-crash');
  t.equal(scenarioArgument({ name: 'mine', file: '/home/u/p/s/mine.yaml' }, '/home/u/p'), './s/mine.yaml');
  t.equal(scenarioArgument({ name: 'mine', file: 's/mine.yaml' }, '/home/u/p'), './s/mine.yaml', 'relative to the cwd');
  t.equal(scenarioArgument({ name: 'mine', file: '/elsewhere/mine.yaml' }, '/home/u/p'), '/elsewhere/mine.yaml');
  t.equal(scenarioArgument({ name: 'other', file: ackCrash.file }, '/x'), ackCrash.file, 'a catalogue file whose name differs is given by path');
});

t.test('harnessEnv keeps CHAOSLAB_* and TOXIPROXY_URL only, sorted', async (t) => {
  t.same(harnessEnv({ PATH: '/bin', CHAOSLAB_SEAL: 'off', TOXIPROXY_URL: 'http://h:1', HOME: '/h', CHAOSLAB_A: 'x' }), {
    CHAOSLAB_A: 'x',
    CHAOSLAB_SEAL: 'off',
    TOXIPROXY_URL: 'http://h:1',
  });
});

t.test('reproduceOf', async (t) => {
  const plain = reproduceOf({ scenario: ackCrash, cwd: '/p' }, 'chaoslab run ack-crash', {});
  t.same(plain, { command: 'chaoslab run ack-crash', env: {} }, 'typed as it re-runs: no invokedAs');
  const full = reproduceOf(
    { scenario: ackCrash, cwd: '/p', consumerCommand: 'python3 c.py', seal: 'off', toxiproxyUrl: 'http://127.0.0.1:8474' },
    "chaoslab run 'ack-*' --no-seal",
    { CHAOSLAB_X: '1 2' },
  );
  t.same(full, {
    command: "chaoslab run ack-crash --consumer 'python3 c.py' --no-seal --toxiproxy-url http://127.0.0.1:8474",
    env: { CHAOSLAB_X: '1 2' },
    invokedAs: "chaoslab run 'ack-*' --no-seal",
  });
  t.equal(reproduceOf({ scenario: ackCrash, cwd: '/p', seal: 'on' }, undefined, {}).command, 'chaoslab run ack-crash --seal');
  t.equal(
    reproduceLine(full, '/my project'),
    "cd '/my project' && CHAOSLAB_X='1 2' chaoslab run ack-crash --consumer 'python3 c.py' --no-seal --toxiproxy-url http://127.0.0.1:8474",
  );
  t.equal(reproduceLine(plain), 'chaoslab run ack-crash');
});

/** A golden journal whose run-start carries `reproduce`, as this harness now writes it. */
function withReproduce(journal: JournalEntry[]): JournalEntry[] {
  return journal.map((e) =>
    e.type === 'run-start'
      ? {
          ...e,
          cwd: '/home/u/proj',
          reproduce: { command: "chaoslab run ack-crash --consumer 'python3 c.py'", env: { CHAOSLAB_SEAL: 'off' }, invokedAs: 'chaoslab run --all' },
        }
      : e,
  );
}

t.test('the view, summary.md and report.html show the command and environment', async (t) => {
  const journal = withReproduce(golden('ack-crash-ack-before-commit'));
  const view = viewOf(journal);
  const line = "cd /home/u/proj && CHAOSLAB_SEAL=off chaoslab run ack-crash --consumer 'python3 c.py'";
  t.equal(view.reproduce?.line, line);
  t.equal(view.reproduce?.invokedAs, 'chaoslab run --all');
  const summary = renderSummary(journal, view);
  t.match(summary, `- re-run by hand: \`${line}\``);
  t.match(summary, '- started as part of: `chaoslab run --all`');
  const { html } = renderHtml(journal);
  t.match(html, `re-run by hand: <code>cd /home/u/proj &amp;&amp; CHAOSLAB_SEAL=off chaoslab run ack-crash --consumer &#39;python3 c.py&#39;</code>`);
  t.match(html, 'started as part of <code>chaoslab run --all</code>');
});

t.test('an older journal without them still renders, without the line', async (t) => {
  const journal = golden('ack-crash-pass');
  t.notOk('reproduce' in (journal[0] as object));
  const view = viewOf(journal);
  t.equal(view.reproduce, undefined);
  t.notMatch(renderSummary(journal, view), 're-run by hand');
  t.notMatch(renderHtml(journal).html, 're-run by hand');
  t.notOk('reproduce' in runJson(view, '/r'));
});

t.test('the JSON shape of a run and of several', async (t) => {
  const failing = viewOf(withReproduce(golden('ack-crash-ack-before-commit')));
  const passing = viewOf(golden('ack-crash-pass'));
  const run = runJson(failing, '/reports/b/r1', { label: 'ack-crash #1', base: '/reports/b' });
  t.same(Object.keys(run).sort(), [
    'consumer',
    'diff',
    'durationMs',
    'findings',
    'harnessErrors',
    'headline',
    'lab',
    'label',
    'reports',
    'reproduce',
    'runDir',
    'runId',
    'scenario',
    'status',
    'stderrTail',
  ]);
  t.equal(run.status, 'fail');
  t.equal(run.label, 'ack-crash #1');
  t.equal(run.scenario, 'ack-crash');
  t.equal(run.lab, 'ledger');
  t.equal(run.headline, failing.headline);
  t.ok(run.findings.length > 0 && run.findings.every((f) => typeof f.code === 'string' && typeof f.text === 'string'));
  t.equal(run.runDir, 'r1', 'the run folder, as reports.dir');
  t.same(run.reports, { dir: 'r1', journal: 'r1/journal.jsonl', summary: 'r1/summary.md', html: 'r1/report.html', junit: 'r1/junit.xml' });
  t.equal(run.reproduce?.command, "chaoslab run ack-crash --consumer 'python3 c.py'");
  t.equal(runJson(passing, '/abs/run').reports.html, '/abs/run/report.html', 'absolute without a base');
  const doc = resultsJson([run, runJson(passing, '/reports/b/r2')]);
  t.same(
    { schema: doc.schema, status: doc.status, total: doc.total, counts: doc.counts },
    {
      schema: 2,
      status: 'fail',
      total: 2,
      counts: { pass: 1, fail: 1, error: 0, interrupted: 0, skipped: 0 },
    },
  );
  t.same(JSON.parse(JSON.stringify(doc)), doc, 'plain JSON');
  t.equal(overallStatus(['pass', 'fail', 'interrupted']), 'interrupted');
  t.equal(overallStatus(['fail', 'error']), 'error');
  t.equal(overallStatus([]), 'pass');
});
