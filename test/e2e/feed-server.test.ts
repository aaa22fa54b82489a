// The feed lab's server run end to end: the real CLI and `make scenario`, the real Toxiproxy, the
// server under test as a real process. The reference server passes feed-server-snapshot-race
// through `make scenario NAME=... SERVER=...` (SERVER passed as data, never as recipe text); the
// snapshot-then-subscribe mutant fails it with the lost events named; --server with a consumer
// scenario is a usage error; --repeat gives every run the server; chaos --server is refused (not
// yet); nothing is left running.
import { execa } from 'execa';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readJournal } from '../../harness/record/journal.js';
import t from 'tap';
import { chaoslab, onlyRun, root, survivors } from '../helpers/cli.js';

t.setTimeout(600_000);

t.test('make scenario SERVER=… runs the reference server as the program under test and passes', async (t) => {
  const result = await execa('make', ['--no-print-directory', 'scenario', 'NAME=feed-server-snapshot-race'], {
    cwd: root,
    reject: false,
    timeout: 240_000,
    env: { SERVER: 'node dist/publisher/feed/server/main.js', CHAOSLAB_SEAL: 'off' },
  });
  t.equal(result.exitCode, 0, `${result.stdout}\n${result.stderr}`);
  t.match(result.stdout, /PASS {2}feed-server-snapshot-race/);
  // make scenario writes to the project's reports/: its own run folder, named on stdout, removed after.
  const runDir = join(root, /report: (reports\/[^/\s]+)\/report\.html/.exec(result.stdout)?.[1] ?? 'reports/missing');
  t.teardown(() => rmSync(runDir, { recursive: true, force: true }));
  const journal = readJournal(join(runDir, 'journal.jsonl'));
  t.match(
    journal.find((e) => e.type === 'run-start'),
    { serverCommand: 'node dist/publisher/feed/server/main.js' },
  );
  t.same(survivors(journal), []);
});

t.test('the snapshot-then-subscribe mutant fails, the lost events named', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(
    ['run', 'feed-server-snapshot-race', '--no-seal', '--reports', reports, '--server', 'node dist/publisher/feed/mutants/snapshot-then-subscribe.js'],
    { timeout: 240_000 },
  );
  t.equal(result.exitCode, 1, result.stderr);
  t.match(result.stdout, /FAIL {2}feed-server-snapshot-race/);
  t.match(
    result.stdout,
    /the probe's store misses \d+ events? committed while the server was stopped after the snapshot \(blocks 11\.\.13\): 1:00000000000011:0000/,
  );
  t.same(survivors(onlyRun(reports).journal), []);
});

t.test('--server with a consumer scenario, or --consumer with a server scenario, is a usage error', async (t) => {
  const a = await chaoslab(['run', 'feed-happy-path', '--server', 'node x.js']);
  t.equal(a.exitCode, 2);
  t.match(a.stderr, /--server runs a push server under test, but feed-happy-path tests a consumer/);
  const b = await chaoslab(['run', 'feed-server-snapshot-race', '--consumer', 'node x.js']);
  t.equal(b.exitCode, 2);
  t.match(b.stderr, /feed-server-snapshot-race tests a push server .* give the server with --server, not --consumer/);
});

t.test('--repeat with --server: each run tests the given server', async (t) => {
  const reports = t.testdir();
  const result = await chaoslab(
    ['run', 'feed-server-happy-path', '--repeat', '2', '--jobs', '2', '--no-seal', '--reports', reports, '--server', 'python3 publisher/feed/python/server.py'],
    { timeout: 240_000 },
  );
  t.equal(result.exitCode, 0, `${result.stdout}\n${result.stderr}`);
  t.match(result.stdout, /PASS {2}feed-server-happy-path #1/);
  t.match(result.stdout, /PASS {2}feed-server-happy-path #2/);
  const batch = readdirSync(reports).find((d) => d.includes('feed-server-happy-path-x2'))!;
  const runs = readdirSync(join(reports, batch)).filter((d) => existsSync(join(reports, batch, d, 'journal.jsonl')));
  t.equal(runs.length, 2);
  for (const run of runs) {
    const journal = readJournal(join(reports, batch, run, 'journal.jsonl'));
    t.match(
      journal.find((e) => e.type === 'run-start'),
      { serverCommand: 'python3 publisher/feed/python/server.py' },
    );
    t.same(survivors(journal), []);
  }
});

t.test('chaos takes --server or --consumer, not both (test/e2e/chaos-server.test.ts runs chaos --server)', async (t) => {
  const result = await chaoslab(['chaos', '--lab', 'feed', '--server', 'python3 s.py', '--consumer', 'python3 c.py', '--runs', '1']);
  t.equal(result.exitCode, 2);
  t.match(result.stderr, /--server and --consumer: chaos tests one program/);
  t.equal(result.stdout, '');
});
