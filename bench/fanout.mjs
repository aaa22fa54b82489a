// make bench §5, one measured run: the feed server (bench/fanout-publisher.mjs) and one load
// client process (bench/fanout-client.mjs) holding `connections` sockets.
//   replay: every connection reads a pre-mined stream of `events` from genesis, as fast as the
//           server sends it (--raw: a plain socket server writing the same bytes, the floor)
//   live:   every connection is live from a snapshot, then `blocks` blocks are mined one every
//           `intervalMs`; the client measures each event's delivery lag
// With a standalone server (bench/server-process.mjs), the publisher only writes the outbox and
// the server is measured instead.
// Resolves with the client's result and the publisher's memory. Each process gets the open-file
// limit its sockets need where the hard limit allows; otherwise the run is refused, saying so.
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { inTurns, root } from './measure.mjs';
import { startServerProcess, TS_SERVER } from './server-process.mjs';

/** Pre-mined streams: 20 logs a block. Live: 2 a block, so 1 000 connections at a block every
 * 100 ms are 20 000 events/s, well within what replay shows the server can send. */
const LOGS_PER_BLOCK = 20;
export const LIVE_LOGS_PER_BLOCK = 2;
const GENESIS_CURSOR = '1:00000000000000:0000';
/** File descriptors beyond the sockets: Node's own, SQLite's, pipes. */
const FD_SPARE = 256;

const fileLimits = () => {
  const [soft, hard] = execFileSync('bash', ['-c', 'ulimit -Sn; ulimit -Hn'], { encoding: 'utf8' }).trim().split('\n');
  const number = (x) => (x === 'unlimited' ? Number.POSITIVE_INFINITY : Number(x));
  return { soft: number(soft), hard: number(hard) };
};

/** The argv that runs `argv` with at least `need` open files, or a reason why it cannot. */
export function withFileLimit(argv, need) {
  const { soft, hard } = fileLimits();
  if (need <= soft) return { argv };
  // Up to the hard limit needs no privilege, above it CAP_SYS_RESOURCE (root is not always enough
  // in a container): try it rather than guess.
  try {
    execFileSync('bash', ['-c', 'ulimit -n "$0"', String(need)], { stdio: 'ignore' });
  } catch {
    return { refused: `needs ulimit -n ≥ ${need}, the hard limit here is ${hard} and cannot be raised` };
  }
  return { argv: ['bash', '-c', 'ulimit -n "$0" && exec "$@"', String(need), ...argv], raised: `ulimit -n raised from ${soft} to ${need}` };
}

/** The next JSON line of `lines` that has `key`. */
const nextWith = (lines, key) =>
  new Promise((resolve, reject) => {
    const onLine = (line) => {
      const message = JSON.parse(line);
      if (!(key in message)) return;
      lines.off('line', onLine);
      lines.off('close', onClose);
      resolve(message);
    };
    const onClose = () => reject(new Error(`closed before a line with "${key}"`));
    lines.on('line', onLine);
    lines.on('close', onClose);
  });

/**
 * Keeps the last `limit` characters a child writes to stderr: they go into the error of a run
 * that fails (rather than onto ours, where a CI log reader took an expected failure's stack for
 * a real one), and onto ours after a run that passes, so nothing is hidden.
 */
function stderrTail(child, limit = 2000) {
  let tail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    tail = (tail + chunk).slice(-limit);
  });
  return () => tail.trimEnd();
}

const exited = (child) =>
  new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('close', resolve)));

/**
 * One run. `mode`: 'replay' | 'raw' | 'live'. `dir`: a fresh folder for the outbox.
 * `server`: the argv of a standalone server (bench/server-process.mjs) that serves the outbox
 * instead of the lab's in-process one, with `queueLimit`; its memory is then the one reported.
 * `stalled`: that many more connections that stop reading after their snapshot (live only).
 * Resolves { client, publisher: { maxRssMiB, rssMiB }, note } or { refused }.
 */
export async function fanOutRun({
  mode,
  connections,
  events = 1000,
  blocks = 50,
  intervalMs = 100,
  dir,
  timeoutS = 300,
  server,
  queueLimit,
  stalled = 0,
  logsPerBlock,
}) {
  const need = connections + stalled + FD_SPARE;
  const logs = logsPerBlock ?? (mode === 'live' ? LIVE_LOGS_PER_BLOCK : LOGS_PER_BLOCK);
  const preMined = mode === 'live' ? 20 : Math.ceil(events / logs);
  const publisherArgv = withFileLimit(
    [
      'node',
      // BENCH_FANOUT_PROFILE=<dir>: the publisher writes a CPU profile of each run there (where its time goes).
      ...(process.env.BENCH_FANOUT_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_FANOUT_PROFILE}`] : []),
      join(root, 'bench', 'fanout-publisher.mjs'),
      '--db',
      join(dir, 'outbox.db'),
      '--blocks',
      String(preMined),
      '--logs',
      String(logs),
      ...(mode === 'raw' ? ['--raw'] : []),
      ...(server ? ['--outbox-only'] : []),
    ],
    need,
  );
  if (publisherArgv.refused) return { refused: publisherArgv.refused };
  const publisher = spawn(publisherArgv.argv[0], publisherArgv.argv.slice(1), { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderrOf = { publisher: stderrTail(publisher) };
  const publisherLines = createInterface({ input: publisher.stdout });
  let client;
  let serving;
  try {
    const hello = await nextWith(publisherLines, 'port');
    if (server) {
      serving = await startServerProcess({
        argv: server,
        outbox: join(dir, 'outbox.db'),
        queueLimit,
        pollMs: CONTRACT_POLL_MS,
        wrap: (argv) => withFileLimit(argv, need).argv,
      });
      stderrOf.server = serving.stderr;
      hello.port = serving.port;
    }
    const clientArgv = withFileLimit(
      [
        'node',
        join(root, 'bench', 'fanout-client.mjs'),
        '--port',
        String(hello.port),
        '--connections',
        String(connections),
        '--topics',
        hello.accounts.join(','),
        '--mode',
        mode === 'live' ? 'live' : 'replay',
        '--events',
        String(hello.events),
        '--cursor',
        GENESIS_CURSOR,
        '--block-hash',
        hello.genesisHash,
        '--timeout-s',
        String(timeoutS),
        '--stalled',
        String(stalled),
      ],
      need,
    ).argv;
    client = spawn(clientArgv[0], clientArgv.slice(1), { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    stderrOf.client = stderrTail(client);
    const clientLines = createInterface({ input: client.stdout });
    const result = nextWith(clientLines, 'connections');
    if (mode === 'live') {
      await Promise.race([nextWith(clientLines, 'ready'), result]);
      // The block lines go on to the client, which joins them with its reads.
      publisherLines.on('line', (line) => {
        if (!client.stdin.destroyed) client.stdin.write(`${line}\n`);
      });
      publisher.stdin.write(`${JSON.stringify({ live: blocks, intervalMs })}\n`);
    }
    const clientResult = await result;
    client.stdin.end();
    await exited(client);
    const serverMemory = serving?.memory();
    if (serving) await serving.stop();
    publisher.stdin.write(`${JSON.stringify({ stop: true })}\n`);
    const memory = serverMemory ?? (await nextWith(publisherLines, 'maxRssMiB'));
    await exited(publisher);
    for (const tail of Object.values(stderrOf)) if (tail()) process.stderr.write(`${tail()}\n`);
    return { client: clientResult, publisher: memory, ...(publisherArgv.raised ? { note: publisherArgv.raised } : {}) };
  } catch (error) {
    // A process that died mid-run: say which run it was, and what it wrote to stderr last.
    // A closed pipe comes before the exit status: give a dying process a moment to report it.
    for (const child of [publisher, client]) if (child) await Promise.race([exited(child), new Promise((resolve) => setTimeout(resolve, 2000))]);
    const status = (child) => (!child ? 'not started' : child.exitCode !== null ? `exit ${child.exitCode}` : (child.signalCode ?? 'still running'));
    const said = Object.entries(stderrOf)
      .filter(([, tail]) => tail())
      .map(([name, tail]) => `\n${name}'s stderr ended:\n${tail()}`)
      .join('');
    throw new Error(`fan-out ${mode} run, ${connections} connections (publisher ${status(publisher)}, client ${status(client)}): ${error.message}${said}`);
  } finally {
    // Nothing outlives a run, also when it failed half-way.
    for (const child of [client, publisher]) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await serving?.stop();
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(join(dir, `outbox.db${suffix}`), { force: true });
  }
}

const LIVE = { blocks: 30, intervalMs: 100 };
/** The contract's defaults (publisher/feed/CONTRACT.md section 1), as chaoslab runs a server. */
const CONTRACT_QUEUE_LIMIT = 1000;
const CONTRACT_POLL_MS = 50;
const rounds = (n) => `${n} round${n === 1 ? '' : 's'}`;

/**
 * §5's runs. `connectionCounts`: [connections, rounds] pairs; each round runs, in turns, the plain
 * server (the replay's floor), the feed replay, one live subscriber (the live floor) and N live
 * subscribers. `streams`: [connections, events, rounds] of replay-only cases (the 20 000-event
 * streams). `fresh(name)`: a new folder. Resolves with harness/bench/fanout-figures.ts's
 * FanOutSamples, one per case.
 */
export async function fanOutSamples({ connectionCounts, events, streams = [], fresh, log }) {
  const cases = [];
  const timeoutS = (n, e) => Math.max(120, Math.ceil((n * e) / 20_000));
  for (const [connections, caseReps] of connectionCounts) {
    log(`§5 fan-out, ${connections} subscribers (${rounds(caseReps)})`);
    const run = (mode, n, server) => () =>
      fanOutRun({ mode, connections: n, events, ...LIVE, dir: fresh('fanout'), timeoutS: timeoutS(n, events), server, queueLimit: CONTRACT_QUEUE_LIMIT });
    const [raw, replay, liveFloor, live, contractFloor, contract] = await inTurns(caseReps, [
      run('raw', connections),
      run('replay', connections),
      run('live', 1),
      run('live', connections),
      run('live', 1, TS_SERVER),
      run('live', connections, TS_SERVER),
    ]);
    const liveShape = { ...LIVE, eventsPerBlock: LIVE_LOGS_PER_BLOCK };
    cases.push({
      connections,
      events,
      raw,
      replay,
      live: { runs: live, floor: liveFloor, ...liveShape },
      contract: { runs: contract, floor: contractFloor, ...liveShape, server: 'TypeScript reference server', pollMs: CONTRACT_POLL_MS },
    });
  }
  for (const [connections, streamEvents, caseReps] of streams) {
    log(`§5 fan-out, ${connections} subscribers, ${streamEvents}-event stream (${rounds(caseReps)})`);
    const run = (mode) => () => fanOutRun({ mode, connections, events: streamEvents, dir: fresh('fanout'), timeoutS: timeoutS(connections, streamEvents) });
    const [raw, replay] = await inTurns(caseReps, [run('raw'), run('replay')]);
    cases.push({ connections, events: streamEvents, raw, replay });
  }
  return cases;
}
