// socket_buffer_bytes: the sysctl writer (on stand-in files: the real ones are the run
// namespace's, written by a sealed run's worker), the scenario key, and the skip where runs are
// not sealed (in process, `seal: 'off'`, as on a machine whose probe fails).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { scenariosDir } from '../../../harness/base/paths.js';
import { runScenario } from '../../../harness/run/runner.js';
import { fixSocketBuffers } from '../../../harness/sandbox/socket-buffers.js';
import { resolveScenario } from '../../../harness/catalogue/catalogue.js';
import { loadScenario } from '../../../harness/catalogue/load.js';

t.test('fixSocketBuffers writes min, default and max of each buffer', async (t) => {
  const dir = t.testdir({ tcp_rmem: '4096\t131072\t6291456\n', tcp_wmem: '4096\t16384\t4194304\n' });
  const files = [join(dir, 'tcp_rmem'), join(dir, 'tcp_wmem')];
  fixSocketBuffers(8192, files);
  for (const file of files) t.equal(readFileSync(file, 'utf8'), '8192 8192 8192\n');
});

t.test('a refused write names the sysctl and the value', async (t) => {
  const dir = t.testdir({ 'not-a-file': {} });
  t.throws(() => fixSocketBuffers(4096, [join(dir, 'not-a-file')]), /socket_buffer_bytes: could not set .*not-a-file to "4096 4096 4096"/);
});

t.test('the scenario key: loaded into the plan, bounded by the schema', async (t) => {
  t.equal(loadScenario(resolveScenario('feed-slow-reader', scenariosDir)).socketBufferBytes, 4096);
  t.equal(loadScenario(resolveScenario('feed-happy-path', scenariosDir)).socketBufferBytes, undefined);
  const source = readFileSync(resolveScenario('feed-slow-reader', scenariosDir), 'utf8');
  const dir = t.testdir({ 'feed-slow-reader.yaml': source.replace('socket_buffer_bytes: 4096', 'socket_buffer_bytes: 100') });
  t.throws(() => loadScenario(join(dir, 'feed-slow-reader.yaml')), /feed-slow-reader\.yaml:\d+:\d+.*socket_buffer_bytes.*4096/s);
});

t.test('unsealed: SKIPPED with the reason, nothing started', async (t) => {
  const journal: JournalEntry[] = [];
  const scenario = loadScenario(resolveScenario('feed-slow-reader', scenariosDir));
  const result = await runScenario({ scenario, cwd: process.cwd(), reportsDir: t.testdir(), seal: 'off', onJournal: (e) => journal.push(e) });
  t.equal(result.status, 'skipped');
  t.match(result.verdict?.headline, /^socket_buffer_bytes \(4096\) needs a sealed run \(the TCP buffer sizes of its own network namespace\): sealed mode off/);
  t.same(
    journal.map((e) => e.type),
    ['run-start', 'scenario', 'verdict', 'run-end'],
    'never run with the kernel hiding the backlog: no Toxiproxy, no process',
  );
});
