// Runs one scenario sealed (docs/sandbox.md): a network namespace of its own, whose firewall lets
// the slot's uid reach its proxy port only; a worker inside it runs the run's body; the run
// folder is root's, passable but not listable, the consumer's room is the uid's.
//
// Whatever the consumer leaves behind, the run ends: a worker that falls silent (a call that
// cannot be interrupted in-process, e.g. SQLite opening a named pipe swapped in for the store)
// is killed after STALL_MS, and one that does not end within ABORT_GRACE_MS of an `abort`
// (Ctrl-C, a grading deadline) too; the run then ends error or interrupted with the reason, and
// its rooms are still handed back to root.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { onCleanup } from '../base/cleanup.js';
import { atMost } from '../base/at-most.js';
import { onAbort } from '../base/interrupt.js';
import type { JournalEntry } from '../record/journal.js';
import { installFirewall } from '../sandbox/firewall.js';
import { LOOPBACK_LINK_ARGS } from '../sandbox/loss.js';
import { createRunNamespace } from '../sandbox/namespace.js';
import { lossFaultOf } from '../scenario/faults.js';
import { sweepStaleCgroups } from '../sandbox/cgroup.js';
import { checkReachable, closeRoom, prepareRunFolder } from '../sandbox/room.js';
import { sweepStaleRoomMounts } from '../sandbox/room-fs.js';
import { worldWritableDirs } from '../sandbox/leftovers.js';
import { leaseUid, type UidLease } from '../sandbox/uids.js';
import type { Executed, RunRequest } from './execute.js';
import type { ToRunner, ToWorker } from './worker.js';

/**
 * The worker's environment: the harness's, without NODE_EXTRA_CA_CERTS. Node reads and parses that
 * bundle of certificates as it starts (45 ms of a sealed run's start here, where it names the
 * system's bundle), and nothing a sealed run starts makes a TLS connection: its network is its own
 * namespace's loopback. The control and the probes the worker starts go without it too; a sealed
 * consumer gets a clean environment anyway (sandbox/confine.ts).
 */
export function workerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _unused, ...rest } = env;
  return rest;
}

// Compiled, the worker is next to this module; run from source (the unit tests), it is dist/'s.
const WORKER = [new URL('./worker.js', import.meta.url), new URL('../../dist/harness/run/worker.js', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path))!;

/**
 * Where a sealed run happens, made before it: the slot's uid, the run's network namespace with
 * its firewall, and the worker started inside, waiting for its run. The run command opens slot
 * 0's while its scenarios load (prewarmSealedPlace), so the worker's start-up overlaps with that.
 */
interface SealedPlace {
  readonly slot: number;
  readonly loss: boolean;
  readonly cwd: string;
  readonly lease: UidLease;
  /** The firewall is in place (its failure rejects this). */
  readonly ready: Promise<void>;
  /** The worker's end: its `done`, or why it ended without one. */
  readonly ended: Promise<Executed>;
  /** Where the worker's journal entries go: the run's, once one takes the place. */
  onJournal: (entry: JournalEntry) => void;
  reply(message: ToWorker): void;
  /** When the worker last said anything (performance.now()). */
  lastHeard: number;
  /** Kills the worker at once: the run ends with `reason` (its `done`, if already sent, still stands). */
  kill(reason: string): void;
  /** Kills the worker, removes the namespace, gives the uid back; idempotent. */
  close(): Promise<void>;
}

/** How long the runner waits, after the worker's exit, for the messages still in the channel. */
const CHANNEL_GRACE_MS = 5000;
/** A running worker says it is alive every second (worker.ts); silent this long, it is stuck and killed. */
export const STALL_MS = 30_000;
/** After `abort`, the worker winds the run down (its lab gets LAB_SETTLE_MS); not ended after this long, it is killed. */
export const ABORT_GRACE_MS = 15_000;

/** What a harness killed with SIGKILL left (rooms still mounted, cgroup folders): swept once per process, before its first place is ready (while it opens). */
let swept: Promise<unknown> | undefined;
const sweepOnce = (): Promise<unknown> => (swept ??= Promise.all([sweepStaleRoomMounts(), sweepStaleCgroups()]).catch(() => {}));

async function openPlace(slot: number, loss: boolean, cwd: string): Promise<SealedPlace> {
  void worldWritableDirs().catch(() => {}); // found while the place opens; each run's leftover scan looks there
  // While the place opens: nothing of its uid runs before its run, which waits for `ready`.
  const swept = sweepOnce();
  const lease = leaseUid(slot);
  // A run with packet loss needs a loopback that carries real packets (loss.ts).
  const ns = await createRunNamespace({ label: `slot ${slot}`, ...(loss ? { loopback: LOOPBACK_LINK_ARGS } : {}) }).catch((error: unknown) => {
    lease.release();
    throw error;
  });
  let worker: ChildProcess | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      forget();
      const pid = worker?.pid;
      if (worker) await killWorker(worker);
      await ns.destroy();
      // Rooms a killed worker left mounted: their content kept, their tmpfs unmounted.
      if (pid !== undefined) await sweepStaleRoomMounts(pid).catch(() => []);
      lease.release();
    })());
  const forget = onCleanup(`sealed run slot ${slot}`, close);
  try {
    const [file, ...args] = ns.enterArgv([process.execPath, WORKER], { dieWithParent: true });
    // Detached: a Ctrl-C to the terminal's process group reaches the harness only, which sends `abort`.
    // Started before the firewall is in place, so that its start-up overlaps with it: it runs
    // nothing of the consumer's before it gets `run`.
    worker = spawn(file!, args, { cwd, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true, env: workerEnv() });
  } catch (error) {
    await close();
    throw error;
  }
  const child = worker;
  const reply = (message: ToWorker) => void (child.connected && child.send(message));
  let done: Executed | undefined;
  let killedFor: string | undefined;
  const place: SealedPlace = {
    slot,
    loss,
    cwd,
    lease,
    ready: Promise.all([swept, installFirewall(ns, [{ uid: lease.uid, allowTcpPorts: [] }])]).then(() => {}),
    ended: new Promise<Executed>((resolve, reject) => {
      child.on('message', (message: ToRunner) => {
        place.lastHeard = performance.now();
        if (message.type === 'done') done = message.executed;
        else if (message.type === 'entries') for (const entry of message.entries) place.onJournal(entry);
      });
      child.on('error', reject);
      child.on('exit', (code, signal) =>
        afterLastMessage(child, () =>
          resolve(
            done ?? {
              status: 'error',
              error: killedFor ?? `the sealed run's worker ended (${signal ?? `status ${code}`}) before the run did (its stderr is above)`,
            },
          ),
        ),
      );
    }),
    onJournal: () => {},
    reply,
    lastHeard: performance.now(),
    kill: (reason) => {
      killedFor ??= reason;
      child.kill('SIGKILL');
    },
    close,
  };
  // Awaited by the run that takes the place; a failure before that is not an unhandled one.
  place.ready.catch(() => {});
  place.ended.catch(() => {});
  return place;
}

/** SIGKILLs a running worker and waits for its exit, at most 2 s. */
async function killWorker(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGKILL');
  await atMost(exited, 2000);
}

/**
 * Calls `conclude` once the worker's last messages are read. `exit` can come before them (a
 * loaded machine: `done` still in the channel); the channel's end comes after them, and a worker
 * killed mid-run ends it too.
 */
function afterLastMessage(child: ChildProcess, conclude: () => void): void {
  if (!child.connected) {
    conclude();
    return;
  }
  const late = setTimeout(conclude, CHANNEL_GRACE_MS);
  child.once('disconnect', () => {
    clearTimeout(late);
    conclude();
  });
}

let prewarmed: Promise<SealedPlace | undefined> | undefined;
/** Set by the first run and by a discard: from then on nothing is prewarmed. */
let runsStarted = false;

/** Opens slot 0's place for the first sealed run of this process (a run from `cwd`), ahead of it; too late once a run started. */
export function prewarmSealedPlace(cwd: string): void {
  if (!runsStarted) prewarmed ??= openPlace(0, false, cwd).catch(() => undefined);
}

/** Closes the prewarmed place if no run took it; none is made after this (a probe answering late). */
export async function discardPrewarmedPlace(): Promise<void> {
  runsStarted = true;
  const place = prewarmed;
  prewarmed = undefined;
  await (await place)?.close();
}

/** The prewarmed place, for the first run of slot 0; one that does not fit the run is closed (its slot is free again). */
async function takePrewarmed(slot: number, loss: boolean, cwd: string): Promise<SealedPlace | undefined> {
  runsStarted = true;
  if (slot !== 0 || !prewarmed) return undefined;
  const place = await prewarmed;
  prewarmed = undefined;
  if (place && place.loss === loss && place.cwd === cwd) return place;
  await place?.close();
  return undefined;
}

export async function runSealed(
  request: RunRequest,
  slot: number,
  note: string,
  onJournal: (entry: JournalEntry) => void,
  signal?: AbortSignal,
): Promise<Executed> {
  prepareRunFolder(request.runDir);
  const loss = Boolean(lossFaultOf(request.scenario.faults));
  const place = (await takePrewarmed(slot, loss, request.cwd)) ?? (await openPlace(slot, loss, request.cwd));
  place.onJournal = onJournal;
  try {
    await place.ready;
    const { uid, gid } = place.lease;
    // The server under test runs as another uid of the range; no ids but the mode bits' "others" are involved.
    const commands = [request.consumerCommand, ...(request.serverCommand === undefined ? [] : [request.serverCommand])];
    const unreachable = commands.flatMap((command) => checkReachable({ uid, gid, cwd: request.cwd, command }));
    const refuse =
      unreachable.length > 0
        ? `it runs sealed as uid ${uid}, which cannot reach what it needs: ${unreachable.map((u) => u.message).join('; ')} (make it reachable for other users, or run with --no-seal)`
        : undefined;
    let abortedAt: number | undefined;
    const forgetAbort = onAbort(signal, () => {
      abortedAt = performance.now();
      place.reply({ type: 'abort', reason: String(signal?.reason ?? 'an interrupt') });
    });
    place.lastHeard = performance.now();
    const scanDirs = await worldWritableDirs().catch(() => undefined);
    place.reply({ type: 'run', request: { ...request, seal: { uid, gid, note, ...(scanDirs ? { scanDirs } : {}) }, ...(refuse ? { refuse } : {}) } });
    const stopWatching = watchWorker(place, () => abortedAt);
    return await place.ended.finally(() => {
      forgetAbort();
      stopWatching();
    });
  } finally {
    await place.close();
    // A worker killed mid-run did not hand its rooms back: do it here (idempotent when it did).
    handRoomsBack(request.runDir);
  }
}

/**
 * Kills a worker that fell silent for STALL_MS, or did not end ABORT_GRACE_MS after an abort.
 * A tick that comes late (this process was busy: a parallel run's reports) judges nothing: the
 * worker's messages may be waiting behind it.
 */
export function watchWorker(
  place: Pick<SealedPlace, 'lastHeard' | 'kill'>,
  abortedAt: () => number | undefined,
  { stallMs = STALL_MS, abortGraceMs = ABORT_GRACE_MS, tickMs = 1000 } = {},
): () => void {
  const TICK_MS = tickMs;
  let lastTick = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - lastTick > 5 * TICK_MS;
    lastTick = now;
    if (late) {
      place.lastHeard = now;
      return;
    }
    const aborted = abortedAt();
    if (aborted !== undefined && now - aborted > abortGraceMs)
      place.kill(`the run's worker did not stop within ${abortGraceMs / 1000} s of the interrupt: the harness killed it`);
    else if (now - place.lastHeard > stallMs)
      place.kill(
        `the run's worker stopped answering for ${stallMs / 1000} s (stuck in a call that cannot be interrupted, e.g. opening a store ` +
          'that became a named pipe): the harness killed it',
      );
  }, TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Every room of the run back to root's (sandbox/room.ts closeRoom): a later consumer of the same uid reaches none. */
function handRoomsBack(runDir: string): void {
  const rooms = join(runDir, 'rooms');
  if (!existsSync(rooms)) return;
  for (const name of readdirSync(rooms)) {
    try {
      closeRoom(join(rooms, name));
    } catch {
      // A room that cannot be walked (gone meanwhile) holds nothing to hand back.
    }
  }
}
