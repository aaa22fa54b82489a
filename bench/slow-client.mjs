// make bench §8: what one slow client costs a reference server. K connections read, one more
// stops reading after its snapshot, while the outbox grows by far more events than the server's
// queue holds; the same run without the slow one, in turns, is its baseline. The server's peak
// RSS over the baseline's is what the slow client cost it (harness/bench/slow-client-figures.ts
// judges it against CHAOSLAB_QUEUE_LIMIT × the frame size).
//
// The backlog must reach the server's queue: on loopback the kernel parks megabytes for a
// client that stopped reading (tcp_wmem's ceiling is 4 MiB, tcp_rmem's 6 MiB), about as much as
// the queue itself. So each run goes into a network namespace of its own (`unshare -n`, as root)
// with tcp_rmem and tcp_wmem fixed at SOCKET_BUFFER_BYTES, as a sealed run's are
// (harness/sandbox/socket-buffers.ts): the kernel then holds a few frames, the queue the rest.
// Where no namespace can be made the run goes on with the kernel's buffers, and the figure says so.
//   node bench/slow-client.mjs --in-namespace '<json of fanOutRun's options>'   (the child side)
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fanOutRun } from './fanout.mjs';
import { root } from './measure.mjs';

export const SOCKET_BUFFER_BYTES = 4096;

/** Can this process make a network namespace and size its buffers? */
function namespaceWorks() {
  try {
    execFileSync(
      'unshare',
      ['-n', 'sh', '-c', `ip link set lo up && echo "${SOCKET_BUFFER_BYTES} ${SOCKET_BUFFER_BYTES} ${SOCKET_BUFFER_BYTES}" > /proc/sys/net/ipv4/tcp_wmem`],
      {
        stdio: 'ignore',
      },
    );
    return true;
  } catch {
    return false;
  }
}

/** One run in a namespace of its own (or here, without one); resolves with fanOutRun's result. */
function runIsolated(options, isolate) {
  const argv = ['node', join(root, 'bench', 'slow-client.mjs'), '--in-namespace', JSON.stringify({ ...options, isolated: isolate })];
  const full = isolate ? ['unshare', '-n', ...argv] : argv;
  return new Promise((resolve, reject) => {
    const child = spawn(full[0], full.slice(1), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err = (err + c).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)));
      } catch {
        reject(new Error(`slow-client run (exit ${code}) printed no result: ${err.trim()}`));
      }
    });
  });
}

/**
 * §8's runs: for each server, `reps` rounds of [one slow client beside `readers`, `readers`
 * alone]. Resolves with SlowClientSamples (harness/bench/slow-client-figures.ts) per server.
 */
export async function slowClientSamples({ servers, readers, queueLimit, events, logsPerBlock, intervalMs, reps, fresh, log }) {
  const isolated = namespaceWorks();
  const blocks = Math.ceil(events / logsPerBlock);
  const cases = [];
  for (const server of servers) {
    log(`§8 a slow client beside ${readers} readers, ${server.label}, queue limit ${queueLimit}, ${events} events`);
    const run = (stalled) => () =>
      runIsolated(
        { mode: 'live', connections: readers, stalled, blocks, intervalMs, logsPerBlock, server: server.argv, queueLimit, dir: fresh('slow'), timeoutS: 300 },
        isolated,
      );
    const withSlow = [];
    const without = [];
    for (let i = 0; i < reps; i++) {
      withSlow.push(await run(1)());
      without.push(await run(0)());
    }
    cases.push({ server: server.label, readers, queueLimit, events, socketBufferBytes: isolated ? SOCKET_BUFFER_BYTES : undefined, withSlow, without });
  }
  return cases;
}

// The child: inside its namespace, loopback up and small buffers, then one run.
if (process.argv[2] === '--in-namespace') {
  const { isolated, ...options } = JSON.parse(process.argv[3]);
  // Only in a namespace of our own: these sysctls are the whole machine's otherwise.
  if (isolated) {
    execFileSync('ip', ['link', 'set', 'lo', 'up'], { stdio: 'ignore' });
    const value = `${SOCKET_BUFFER_BYTES} ${SOCKET_BUFFER_BYTES} ${SOCKET_BUFFER_BYTES}\n`;
    for (const file of ['/proc/sys/net/ipv4/tcp_rmem', '/proc/sys/net/ipv4/tcp_wmem']) writeFileSync(file, value);
  }
  const result = await fanOutRun(options);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
