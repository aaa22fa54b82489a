// The fan-out scenario end to end, sealed: the real CLI, Toxiproxy and the TS reference server
// (started through a shell that first prints its open-files limit). It passes; the console's
// line states the probe's and the crowd's delivery lag; every one of the 1 000 crowd clients is
// in the journal with every event due; the verdict carries the lag table and figure, drawn in
// report.html; the sealed server may open 8 192 files; nothing is left running.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { chaoslab, onlyRun, survivors } from '../helpers/cli.js';
import { sealingSkip } from '../helpers/sandbox.js';
import { SERVER_OPEN_FILES } from '../../harness/processes/server-seal.js';

t.setTimeout(400_000);
const skip = await sealingSkip();

t.test('feed-server-fanout: the TS reference serves 1 000 clients; the lag is stated', { skip }, async (t) => {
  const reports = t.testdir();
  const server = 'sh -c "ulimit -n; exec node dist/publisher/feed/server/main.js"';
  const result = await chaoslab(['run', 'feed-server-fanout', '--seal', '--reports', reports, '--server', server], { timeout: 300_000 });
  const { dir, journal } = onlyRun(reports);
  t.same(survivors(journal), [], 'nothing left running');
  t.equal(result.exitCode, 0, result.stdout);
  t.match(result.stdout, /PASS {2}feed-server-fanout/);
  t.match(
    result.stdout,
    /each of the crowd's 1000 clients got every event due, in order; delivery lag p50\/p99: probe 1 [\d.]+ ms\/[\d.]+ ms, the crowd \(1000 clients\) [\d.]+ ms\/[\d.]+ ms/,
  );
  const crowd = journal.flatMap((e) => (e.type === 'crowd-client' ? [e] : []));
  t.equal(crowd.length, 1000);
  const due = journal.filter((e) => e.type === 'outbox-commit').length;
  t.ok(due >= 20, 'the script committed its 20 blocks');
  t.ok(
    crowd.every((c) => c.events.length > 0 && c.events.length === crowd[0]!.events.length && c.close?.by === 'consumer'),
    'every client read the same events and was closed by the harness',
  );
  const verdict = journal.find((e) => e.type === 'verdict');
  const lag = verdict?.type === 'verdict' ? verdict.verdict.tables.find((x) => x.id === 'lag') : undefined;
  t.same(
    lag?.rows.map((r) => r.label),
    ['probe 1', 'the crowd (1000 clients)'],
  );
  t.equal(
    lag?.rows[1]?.cells[0],
    crowd.reduce((n, c) => n + c.events.length, 0),
    'every crowd event is a sample',
  );
  const html = readFileSync(join(dir, 'report.html'), 'utf8');
  t.match(html, /<section id="lag" class="figure">[\s\S]*?<svg [^>]*role="img"><title>Delivery lag over time<\/title>/);
  const exit = journal.find((e) => e.type === 'process-exit' && e.role === 'server');
  t.match(exit?.type === 'process-exit' ? exit.stdoutTail : '', new RegExp(`^${SERVER_OPEN_FILES}\\n`), "the sealed server's RLIMIT_NOFILE");
});
