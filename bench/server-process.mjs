// make bench's feed server as the server contract runs it: a process of its own (the TypeScript
// reference `dist/publisher/feed/server/main.js`, or the Python one) on an outbox someone else
// writes, under the CHAOSLAB_* environment of publisher/feed/CONTRACT.md section 1, found by
// its "listening on" line. Its memory is read from /proc (VmRSS now, VmHWM the peak), so a
// server in any language is measured the same way.
import { spawn } from 'node:child_process';
import { freePort } from '../dist/harness/base/free-port.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './measure.mjs';

export const TS_SERVER = ['node', join(root, 'dist', 'publisher', 'feed', 'server', 'main.js')];
export const PY_SERVER = ['python3', join(root, 'publisher', 'feed', 'python', 'server.py')];
const LISTEN_MS = 10_000;
const MiB = 2 ** 20;

/** VmRSS and VmHWM of a live process, in MiB. */
export function processMemory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: (kib('VmRSS') * 1024) / MiB, maxRssMiB: (kib('VmHWM') * 1024) / MiB };
}

/**
 * Starts `argv` on `outbox`; resolves once it listens with { port, pid, memory(), stop() }.
 * `wrap(argv)`: the argv that runs it (the open-file limit). stop(): SIGTERM, then its exit.
 */
export async function startServerProcess({ argv, outbox, queueLimit = 1000, pollMs = 50, pingMs = 1000, idleMs = 10_000, wrap = (a) => a }) {
  const port = await freePort();
  const env = {
    ...process.env,
    CHAOSLAB_OUTBOX_DB: outbox,
    CHAOSLAB_HOST: '127.0.0.1',
    CHAOSLAB_PORT: String(port),
    CHAOSLAB_QUEUE_LIMIT: String(queueLimit),
    CHAOSLAB_PING_MS: String(pingMs),
    CHAOSLAB_IDLE_MS: String(idleMs),
    CHAOSLAB_POLL_MS: String(pollMs),
  };
  delete env.CHAOSLAB_FAULT;
  const full = wrap(argv);
  const child = spawn(full[0], full.slice(1), { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr.setEncoding('utf8');
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')}: not listening after ${LISTEN_MS} ms: ${said.trim()}`)), LISTEN_MS);
    child.stderr.on('data', (chunk) => {
      said = (said + chunk).slice(-4000);
      if (said.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((status) => {
      clearTimeout(timer);
      reject(new Error(`${argv.join(' ')} exited (${status}) before listening: ${said.trim()}`));
    });
  });
  return {
    port,
    pid: child.pid,
    memory: () => processMemory(child.pid),
    stderr: () => said.trim(),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 4000);
      const status = await exited;
      clearTimeout(kill);
      return status;
    },
  };
}
