// A ledger run without the harness: the in-process publisher and the same consumer processes a
// run starts (the control, then each incarnation in turn), no Toxiproxy, no journal, no checks.
// It is the floor of scenario overhead (§1) and the "direct" way of streaming throughput (§4).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Publisher } from '../dist/publisher/ledger/server.js';
import { ToxiproxyAdapter } from '../dist/harness/toxiproxy/adapter.js';
import { root } from './measure.mjs';

let proxies = 0;

const exitOf = (argv, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: root, env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });

/**
 * `plan` is a loaded scenario's `lab` part; `consumer` and `control` are argv arrays. Resolves
 * with the wall time from the first process start to the last exit, and the consumer stream's
 * rate (ACKs per second from its first EVENT to its last ACK).
 */
export async function directRun({ plan, consumer, control, dir, timeoutMs = 2000, toxiproxy, cleanEnv = false }) {
  let first;
  let last;
  let acks = 0;
  const p = plan.publisher;
  const publisher = await Publisher.start(
    [
      { name: 'control', events: plan.events },
      {
        name: 'consumer',
        events: plan.events,
        window: p.window,
        retentionStart: p.retentionStart,
        redeliverUnacked: p.redeliverUnacked,
        ackDeadlineMs: p.ackDeadlineMs,
        forgetAcked: p.forgetAcked,
      },
    ],
    {
      onTranscript: (e) => {
        if (e.stream !== 'consumer') return;
        if (e.kind === 'send') first ??= performance.now();
        if (e.kind === 'recv' && e.line.startsWith('ACK')) {
          last = performance.now();
          acks++;
        }
      },
    },
  );
  // `toxiproxy` (a running server's URL): the consumer's stream through a proxy of its own, no toxic.
  const proxy =
    toxiproxy &&
    (await new ToxiproxyAdapter(toxiproxy).createProxy(`direct-${process.pid}-${++proxies}`, { host: '127.0.0.1', port: publisher.stream('consumer').port }));
  // `cleanEnv`: only PATH, HOME and TMPDIR beside the contract's variables, as a sealed run gives
  // its consumer (harness/sandbox/confine.ts); else the bench's own environment, as an unsealed one.
  const base = cleanEnv ? { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir } : process.env;
  const envFor = (stream, db) => ({
    ...base,
    CHAOSLAB_HOST: '127.0.0.1',
    CHAOSLAB_PORT: String(stream === 'consumer' && proxy ? proxy.listen.port : publisher.stream(stream).port),
    CHAOSLAB_DB: join(dir, db),
    CHAOSLAB_TIMEOUT_MS: String(timeoutMs),
  });
  const t0 = performance.now();
  try {
    const controlDone = exitOf(control, envFor('control', 'control.db'));
    const codes = [];
    for (const inc of plan.consumer.incarnations)
      codes.push(await exitOf(consumer, { ...envFor('consumer', 'consumer.db'), ...(inc.fault ? { CHAOSLAB_FAULT: inc.fault } : {}) }));
    codes.push(await controlDone);
    const seconds = (performance.now() - t0) / 1000;
    return { seconds, codes, rate: first !== undefined && last > first ? acks / ((last - first) / 1000) : undefined };
  } finally {
    await proxy?.remove();
    await publisher.close();
  }
}
