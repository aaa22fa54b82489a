// Unsealed runs share the machine's loopback with other runs (issue 28, attack 8). In process,
// real runs (the real Toxiproxy, the reference consumers, unsealed): a stray connection to the
// publisher is never the consumer's, a Toxiproxy whose port another process took is never talked
// to, and a tampered Toxiproxy API ends the run at once, with no consumer started after it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { runCleanups } from '../../../harness/base/cleanup.js';
import type { JournalEntry } from '../../../harness/record/journal.js';
import { labNamed } from '../../../harness/labs/registry.js';
import { sleepUntilEnded, untilEnded } from '../../../harness/processes/processes.js';
import { executeRun } from '../../../harness/run/execute.js';
import { loadScenario } from '../../../harness/catalogue/load.js';
import { httpRequest } from '../../../harness/toxiproxy/http.js';
import { startToxiproxy } from '../../../harness/toxiproxy/server.js';
import { chaoslab, onlyRun, root } from '../../helpers/cli.js';

t.setTimeout(180_000);
t.teardown(runCleanups);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const consumerStarts = (entries: readonly JournalEntry[]) => entries.filter((e) => e.type === 'process-start' && e.role === 'consumer');

/** The reference consumer of `lab`, each start also counted in `file` (a ghost started after the run ended is not in the journal). */
const countedConsumer = (lab: string, file: string) => `echo started >> ${file}; exec ${labNamed(lab)!.referenceCommand}`;
const startsIn = (file: string): number => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
};

t.test('a stray connection to the publisher is not the consumer’s: the run is an ERROR with the reason', async (t) => {
  const runDir = t.testdir();
  let port: number | undefined;
  let stray: ReturnType<typeof spawn> | undefined;
  const executed = await executeRun(
    {
      scenario: await loadScenario(join(root, 'scenarios', 'ledger', 'ack-crash.yaml')),
      runId: 'r-stray',
      runDir,
      cwd: root,
      consumerCommand: labNamed('ledger')!.referenceCommand,
    },
    {
      onJournal: (e) => {
        if (e.type === 'stream' && e.role === 'consumer') port = e.port;
        // Another run's Toxiproxy client, as measured: an HTTP request to what it took for its API port.
        if (e.type === 'process-start' && e.role === 'consumer' && e.incarnation === 1 && port !== undefined)
          stray = spawn('bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${port}; printf 'GET /proxies HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&3; sleep 3`], {
            stdio: 'ignore',
          });
      },
    },
  );
  stray?.kill();
  t.ok(stray, 'the stray client ran');
  t.equal(executed.status, 'error', `an ERROR, not a verdict on the consumer (${executed.verdict?.headline ?? executed.error})`);
  t.notOk(executed.verdict, 'no verdict: no finding against the consumer');
  t.match(
    executed.error,
    new RegExp(
      `^a connection from pid ${stray!.pid} \\(.*\\), not a process of this run, reached the publisher's consumer port ${port}: the run cannot be judged$`,
    ),
  );
  const open = executed.entries.find((e) => e.type === 'wire' && e.kind === 'open' && e.peer?.via === 'stray');
  t.match(open, { stream: 'consumer', peer: { pid: stray!.pid, via: 'stray' } }, 'journaled as a stray');
  t.notOk(open && 'owner' in open, 'owned by no process of the run');
});

t.test(
  'an external Toxiproxy (TOXIPROXY_URL) carries the consumer’s traffic: the run is unsealed and judged, its journal names the server’s process',
  async (t) => {
    const theirs = await startToxiproxy();
    t.teardown(() => theirs.stop());
    const out = t.testdir();
    const run = await chaoslab(['run', 'ack-crash', '--out', out], { env: { TOXIPROXY_URL: theirs.url } });
    t.equal(run.exitCode, 0, `PASS, not an ERROR over its own proxy's connections\n${run.stdout}${run.stderr}`);
    const { journal } = onlyRun(out);
    t.match(
      journal.find((e) => e.type === 'run-start'),
      { sealing: /^sealed mode not used: an external Toxiproxy \(http:\/\/127\.0\.0\.1:\d+\)/ },
    );
    t.match(
      journal.find((e) => e.type === 'toxiproxy'),
      { owned: false, pid: theirs.pid, identity: new RegExp(`its process is pid ${theirs.pid}`) },
    );
    const opens = journal.filter((e) => e.type === 'wire' && e.kind === 'open' && e.stream === 'consumer');
    t.ok(opens.length >= 2, 'both incarnations connected');
    t.ok(
      opens.every((e) => e.type === 'wire' && e.peer?.via === 'proxy' && e.peer.pid === theirs.pid),
      'every consumer connection came through that server',
    );
    t.doesNotThrow(() => process.kill(theirs.pid!, 0), 'the run left the external server running');
  },
);

t.test('a ledger run whose Toxiproxy API was tampered with ends at once: ERROR, no consumer started after', async (t) => {
  const dir = t.testdir({
    'tampered.yaml': [
      'name: tampered',
      'description: The fault at EVENT 20 cannot be applied (its toxic was put there through the API already).',
      'time_scale: 0.2',
      'events:',
      '  generate: { count: 80, seed: 3 }',
      'publisher:',
      '  redeliver_unacked: true',
      'faults:',
      '  - { name: lag, network: { toxic: latency, stream: downstream, attributes: { latency: 5 } }, start: { before_event: 20 } }',
      'consumer:',
      '  incarnations:',
      '    - expect_exit: any',
      '  restart: { until: complete, max: 10, delay_ms: 50 }',
      '',
    ].join('\n'),
  });
  const starts = join(dir, 'starts');
  let url: string | undefined;
  let proxy: string | undefined;
  let tampered: Promise<unknown> | undefined;
  const from = Date.now();
  const executed = await executeRun(
    {
      scenario: await loadScenario(join(dir, 'tampered.yaml')),
      runId: 'r-tamper-ledger',
      runDir: dir,
      cwd: root,
      consumerCommand: countedConsumer('ledger', starts),
    },
    {
      onJournal: (e) => {
        if (e.type === 'toxiproxy') url = e.url;
        if (e.type === 'proxy' && e.action === 'create' && e.name.endsWith('-consumer')) proxy = e.name;
        // The consumer (unsealed, same user) reaches the API: a toxic of the fault's name is there first.
        if (e.type === 'process-start' && e.role === 'consumer' && e.incarnation === 1)
          tampered = httpRequest('POST', `${url}/proxies/${proxy}/toxics`, {
            body: { name: 'lag', type: 'latency', stream: 'downstream', attributes: { latency: 0 } },
            timeoutMs: 5000,
          });
      },
    },
  );
  t.match(await tampered, { status: 200 }, 'the API was tampered with');
  t.equal(executed.status, 'error');
  t.match(
    executed.error,
    /^fault lag could not be applied: toxiproxy: add toxic "lag" on proxy "chaoslab-r-tamper-ledger-consumer" failed: HTTP 409.*: the run cannot be judged$/,
  );
  const failedAt = executed.entries.findIndex((e) => e.type === 'harness-error');
  t.same(consumerStarts(executed.entries.slice(failedAt)), [], 'no consumer started after the fault failed');
  await sleep(500);
  t.equal(startsIn(starts), consumerStarts(executed.entries).length, 'nor after the run ended');
  const failed = executed.entries[failedAt]!.t;
  const ended = executed.entries.at(-1)!.t;
  t.ok(ended - failed < 3000, `the run ended ${Math.round(ended - failed)} ms after the failure`);
  t.ok(Date.now() - from < 60_000, 'within the deadline (60 s)');
});

t.test('a feed run whose Toxiproxy was replaced mid-run: the impostor is never talked to, the run ends, no consumer after', async (t) => {
  const dir = t.testdir({
    'replaced.yaml': [
      'name: replaced',
      'description: Toxiproxy is killed and another server takes its API port; a fault comes at block 14. Virtual time runs 10 times faster than real time, so a 2.5 s block takes 250 ms.',
      'protocol: feed',
      'time_scale: 0.1',
      'deadline_ms: 30000',
      'chain:',
      '  seed: 17',
      '  accounts: 6',
      '  confirmations: 3',
      '  block_interval_ms: 2500',
      '  logs_per_block: { min: 0, max: 3 }',
      '  initial_blocks: 10',
      'time:',
      '  duration_ms: 30000',
      '  converge_ms: 5000',
      'consumer:',
      '  topics: [0, 2, 3]',
      'faults:',
      '  - { name: lag, network: { toxic: latency, stream: downstream, attributes: { latency: 5 } }, start: { before_block: 14 } }',
      '',
    ].join('\n'),
  });
  const starts = join(dir, 'starts');
  const asked: string[] = [];
  const impostor = createServer((request, response) => {
    asked.push(`${request.method} ${request.url}`);
    response.writeHead(500).end('{"error":"impostor"}');
  });
  t.teardown(() => void impostor.close());
  let replaced: Promise<void> | undefined;
  let server = { pid: 0, port: 0 };
  const executed = await executeRun(
    {
      scenario: await loadScenario(join(dir, 'replaced.yaml')),
      runId: 'r-replaced-feed',
      runDir: dir,
      cwd: root,
      consumerCommand: countedConsumer('feed', starts),
    },
    {
      onJournal: (e) => {
        if (e.type === 'toxiproxy') server = { pid: Number(/pid (\d+)/.exec(e.identity ?? '')?.[1]), port: Number(new URL(e.url).port) };
        // Once the consumer has subscribed: the script runs, and its fault at block 14 comes soon.
        if (e.type !== 'store-read' || e.role !== 'consumer' || e.when !== 'at-subscribe' || replaced) return;
        replaced = (async () => {
          process.kill(server.pid, 'SIGKILL');
          for (let i = 0; i < 100 && !impostor.listening; i++) {
            // The port is free once the kernel has reaped the killed server: retry until then.
            const outcome = await new Promise<'up' | 'busy'>((resolve) => {
              impostor.once('listening', () => resolve('up'));
              impostor.once('error', () => resolve('busy'));
              impostor.listen(server.port, '127.0.0.1');
            });
            impostor.removeAllListeners('listening').removeAllListeners('error');
            if (outcome === 'busy') await sleep(20);
          }
        })();
      },
    },
  );
  t.comment(
    `run took ${executed.entries.at(-1)!.t} ms; ${executed.entries
      .filter((e) => e.type === 'harness-error')
      .map((e) => JSON.stringify(e))
      .join(' | ')}`,
  );
  await replaced;
  t.ok(impostor.listening, 'the impostor took the API port');
  t.equal(executed.status, 'error');
  t.match(executed.error, /^fault lag could not be applied: toxiproxy: add toxic not sent: toxiproxy-server pid \d+ .* is gone .*: the run cannot be judged$/);
  t.same(asked, [], 'not one request reached the impostor');
  t.match(
    executed.entries.find((e) => e.type === 'toxiproxy'),
    { identity: /^checked: pid \d+ holds the listening socket of port \d+/ },
  );
  const failedAt = executed.entries.findIndex((e) => e.type === 'harness-error');
  t.same(consumerStarts(executed.entries.slice(failedAt)), [], 'no consumer started after the fault failed');
  const failed = executed.entries[failedAt]!.t;
  const ended = executed.entries.at(-1)!.t;
  t.ok(ended - failed < 3000, `the run ended ${Math.round(ended - failed)} ms after the failure`);
  await sleep(1500);
  t.equal(startsIn(starts), consumerStarts(executed.entries).length, 'nor after the run ended (the feed lab’s detached loop)');
});

t.test('untilEnded: a hung await gives way the moment the run ends; a settled one passes through', async (t) => {
  const ended = new AbortController();
  const hung = untilEnded(ended.signal, new Promise<never>(() => {}));
  setTimeout(() => ended.abort(new Error('fault lag could not be applied')), 20);
  const within = <T>(p: Promise<T>) =>
    Promise.race([
      p.then(
        () => 'resolved',
        (e: unknown) => e,
      ),
      sleep(2000).then(() => 'still waiting'),
    ]);
  t.match(await within(hung), { name: 'RunStopped', message: 'the run ended (fault lag could not be applied)' });
  t.match(await within(sleepUntilEnded(60_000, ended.signal)), { name: 'RunStopped' }, 'a restart delay after the end is not waited');
  t.equal(await untilEnded(new AbortController().signal, Promise.resolve(7)), 7);
  await t.rejects(untilEnded(new AbortController().signal, Promise.reject(new Error('API 500'))), /API 500/);
});
