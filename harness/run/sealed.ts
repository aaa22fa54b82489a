// Runs one scenario sealed (docs/sandbox.md): a network namespace of its own, whose firewall lets
// the slot's uid reach its proxy port only; a worker inside it runs the run's body; the run
// folder is root's, passable but not listable, the consumer's room is the uid's.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { onCleanup } from '../cleanup.js';
import { onAbort } from '../interrupt.js';
import type { JournalEntry } from '../journal.js';
import { allowPorts, installFirewall, readFirewallCounters } from '../sandbox/firewall.js';
import { LOOPBACK_LINK_ARGS } from '../sandbox/loss.js';
import { createRunNamespace } from '../sandbox/namespace.js';
import { lossFaultOf } from '../scenario/faults.js';
import { checkReachable, prepareRunFolder } from '../sandbox/room.js';
import { leaseUid } from '../sandbox/uids.js';
import type { Executed, RunRequest } from './execute.js';
import type { ToRunner, ToWorker } from './worker.js';

// Compiled, the worker is next to this module; run from source (the unit tests), it is dist/'s.
const WORKER = [new URL('./worker.js', import.meta.url), new URL('../../dist/harness/run/worker.js', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path))!;

export async function runSealed(
  request: RunRequest,
  slot: number,
  note: string,
  onJournal: (entry: JournalEntry) => void,
  signal?: AbortSignal,
): Promise<Executed> {
  prepareRunFolder(request.runDir);
  const lease = leaseUid(slot);
  // A run with packet loss needs a loopback that carries real packets (loss.ts).
  const loopback = lossFaultOf(request.scenario.faults) ? { loopback: LOOPBACK_LINK_ARGS } : {};
  const ns = await createRunNamespace({ label: request.runId, ...loopback }).catch((error: unknown) => {
    lease.release();
    throw error;
  });
  let worker: ChildProcess | undefined;
  const close = async () => {
    worker?.kill('SIGKILL');
    await ns.destroy();
    lease.release();
  };
  const forget = onCleanup(`sealed run ${request.runId}`, close);
  try {
    const [file, ...args] = ns.enterArgv([process.execPath, WORKER], { dieWithParent: true });
    // Detached: a Ctrl-C to the terminal's process group reaches the harness only, which sends `abort`.
    // Started before the firewall is in place, so that its start-up overlaps with it: it runs
    // nothing of the consumer's before it gets `run`, below.
    worker = spawn(file!, args, { cwd: request.cwd, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    const child = worker;
    const reply = (message: ToWorker) => child.connected && child.send(message);
    let done: Executed | undefined;
    const ended = new Promise<Executed>((resolve, reject) => {
      child.on('message', (message: ToRunner) => {
        if (message.type === 'entries') for (const entry of message.entries) onJournal(entry);
        else if (message.type === 'done') done = message.executed;
        else if (message.what === 'allow-port')
          allowPorts(ns, lease.uid, [message.port]).then(
            () => reply({ type: 'reply', id: message.id }),
            (error: Error) => reply({ type: 'reply', id: message.id, error: error.message }),
          );
        else
          readFirewallCounters(ns).then(
            (counters) => reply({ type: 'reply', id: message.id, value: counters.get(lease.uid) }),
            (error: Error) => reply({ type: 'reply', id: message.id, error: error.message }),
          );
      });
      child.on('error', reject);
      child.on('exit', (code, signal) =>
        done
          ? resolve(done)
          : resolve({ status: 'error', error: `the sealed run's worker ended (${signal ?? `status ${code}`}) before the run did (its stderr is above)` }),
      );
    });
    ended.catch(() => {}); // awaited below; a failure before that is not an unhandled one
    await installFirewall(ns, [{ uid: lease.uid, allowTcpPorts: [] }]);
    const unreachable = checkReachable({ uid: lease.uid, gid: lease.gid, cwd: request.cwd, command: request.consumerCommand });
    const refuse =
      unreachable.length > 0
        ? `it runs sealed as uid ${lease.uid}, which cannot reach what it needs: ${unreachable.map((u) => u.message).join('; ')} (make it reachable for other users, or run with --no-seal)`
        : undefined;
    const forgetAbort = onAbort(signal, () => reply({ type: 'abort', reason: String(signal?.reason ?? 'an interrupt') }));
    reply({ type: 'run', request: { ...request, seal: { uid: lease.uid, gid: lease.gid, note }, ...(refuse ? { refuse } : {}) } });
    return await ended.finally(forgetAbort);
  } finally {
    forget();
    await close();
  }
}
