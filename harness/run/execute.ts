// One run's body, whatever its lab and wherever it runs (in the harness process, or in a worker
// inside the run's network namespace when sealed): the journal, Toxiproxy, the lab's process
// model, then the lab's checker on what the harness itself recorded, plus the harness's own
// findings. Everything undone on every way out: processes killed, faults lifted, proxies
// removed, the publisher closed, Toxiproxy stopped. An abort (Ctrl-C) before the verdict stops
// the run there: no process is started any more, those running are killed, and the run ends
// `interrupted`, whatever its consumer or checker would have said.

import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { onCleanup } from '../base/cleanup.js';
import { coreFindings, coreTables, withCoreFindings } from '../judge/core-findings.js';
import { FaultEngine } from '../faults/engine.js';
import { JOURNAL_SCHEMA, type JournalEntry, JournalWriter } from '../record/journal.js';
import type { RunContext } from '../lab-api/lab.js';
import { labNamed } from '../labs/registry.js';
import { harnessVersion } from '../base/paths.js';
import { onAbort } from '../base/interrupt.js';
import { ProcessRunner } from '../processes/processes.js';
import type { Reproduce } from '../record/reproduce.js';
import { execHere } from '../sandbox/loss.js';
import { fixSocketBuffers } from '../sandbox/socket-buffers.js';
import { DEFAULT_STORE_LIMIT_BYTES, type StoreGuard } from '../sandbox/store-file.js';
import type { Scenario } from '../scenario/types.js';
import { type ProxyHandle, ToxiproxyAdapter } from '../toxiproxy/adapter.js';
import { startToxiproxy, type ToxiproxyServer } from '../toxiproxy/server.js';
import type { RunStatus } from '../report/view.js';
import type { Verdict } from '../findings/verdict.js';
import { wireRecorder } from '../record/wire-journal.js';
import { attributor } from './attribute.js';
import { Confinement } from '../processes/confinement.js';

export interface RunRequest {
  scenario: Scenario;
  runId: string;
  /** Exists already (made by the runner, with its permissions). */
  runDir: string;
  consumerCommand: string;
  cwd: string;
  toxiproxyUrl?: string;
  /** A sealed run: the consumer processes run as this uid, confined; this process is inside the run's network namespace. */
  seal?: { uid: number; gid: number; note: string /** World-writable folders to look in for leftovers of the uid. */; scanDirs?: string[] };
  /** Sealed runs: the disk quota of each consumer room, in bytes (default DEFAULT_ROOM_QUOTA_BYTES). */
  roomQuotaBytes?: number;
  /** Unsealed runs: how sealing was decided, for the journal. */
  sealNote?: string;
  /** `--store-limit`: the largest consumer store the checker reads, instead of the lab's. */
  storeLimitBytes?: number;
  /** How to re-run this run by hand, for the run-start entry. */
  reproduce?: Reproduce;
  /** Why the consumer cannot be started (a sealed uid that cannot reach its command): the run fails at once with that finding. */
  refuse?: string;
  /** Why the scenario cannot run here as written (packet loss on an unsealed run): the run ends `skipped`, nothing started. */
  skip?: string;
}

export type FirewallCounters = { allowed: { packets: number; bytes: number }; rejected: { packets: number; bytes: number } };

export interface RunHooks {
  onJournal?: (entry: JournalEntry) => void;
  log?: (line: string) => void;
  /** Sealed runs: lets the consumer's uid reach `port` (its proxy's), from the runner outside the namespace. */
  allowPort?: (port: number) => Promise<void>;
  /** Sealed runs: what the firewall let through and refused for the consumer's uid. */
  firewall?: () => Promise<FirewallCounters | undefined>;
  /** Aborted on Ctrl-C/SIGTERM (its reason names the signal): the run stops and ends `interrupted`. */
  signal?: AbortSignal;
  /**
   * A Toxiproxy started as this run's own before the run arrived (a sealed worker starts one while
   * it waits): used when the run would start one with the same options and no TCP buffer setting
   * must come first; stopped otherwise.
   */
  toxiproxy?: Promise<ToxiproxyServer>;
}

/** How long a lab's process model may take to wind down once its processes are killed on an interrupt. */
export const LAB_SETTLE_MS = 5000;

export interface Executed {
  status: RunStatus;
  verdict?: Verdict;
  error?: string;
}

export async function executeRun(request: RunRequest, hooks: RunHooks = {}): Promise<Executed & { entries: readonly JournalEntry[] }> {
  const { scenario, runId, runDir, cwd, consumerCommand, seal } = request;
  const lab = labNamed(scenario.protocol);
  if (!lab) throw new Error(`scenario ${scenario.name}: no lab named "${scenario.protocol}"`);
  const log = hooks.log ?? (() => {});
  const t0 = performance.now();
  const clock = () => performance.now() - t0;
  const journal = new JournalWriter(join(runDir, 'journal.jsonl'), clock, hooks.onJournal);
  const { source, ...plan } = scenario;

  journal.write({
    type: 'run-start',
    schema: JOURNAL_SCHEMA,
    runId,
    scenario: { name: scenario.name, file: scenario.file, description: scenario.description },
    harnessVersion,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cwd,
    protocol: lab.name,
    consumerCommand,
    controlCommand: lab.referenceCommand,
    sealing: seal?.note ?? request.sealNote ?? 'not decided',
    ...(request.reproduce ? { reproduce: request.reproduce } : {}),
  });
  journal.write({ type: 'scenario', source, plan });

  let toxiproxy: ToxiproxyServer | undefined;
  const early = hooks.toxiproxy;
  let earlyTaken = false;
  /** The early Toxiproxy, when this run does not take it. */
  const stopEarly = async (): Promise<void> => {
    if (!early || earlyTaken) return;
    earlyTaken = true;
    await early.then(
      (server) => server.stop(),
      () => {},
    );
  };
  const undo: (() => Promise<void> | void)[] = [];
  const engines: FaultEngine[] = [];
  const proxies: ProxyHandle[] = [];
  const confinement = seal ? new Confinement(seal.uid, seal.gid, runId, request.roomQuotaBytes, seal.scanDirs) : undefined;
  const processes = new ProcessRunner(journal, cwd, scenario.deadlineMs, log, confinement);
  let status: RunStatus = 'error';
  let verdict: Verdict | undefined;
  let error: string | undefined;
  const { signal } = hooks;
  let interruptedAt: number | undefined;
  const interrupted = (): boolean => {
    if (signal?.aborted) interruptedAt ??= clock();
    return interruptedAt !== undefined;
  };
  const forgetAbort = onAbort(signal, interrupted);
  // The run's one termination signal (RunContext.signal): aborted by an interrupt, by something
  // that makes the run impossible to judge, and at the end of the run whatever ended it; a lab
  // starts no process once it is aborted.
  const ending = new AbortController();
  const forgetEnding = onAbort(signal, () => ending.abort(signal?.reason));
  let unjudgeable: string | undefined;
  const cannotJudge = (reason: string): void => {
    if (ending.signal.aborted) return;
    unjudgeable = reason;
    journal.write({ type: 'harness-error', message: reason });
    ending.abort(new Error(reason));
  };
  /** The role of a publisher stream, from the lab's `stream` entries. */
  const streamRole = (stream: string) => {
    for (const e of journal.entries) if (e.type === 'stream' && e.stream === stream) return e.role;
    return undefined;
  };

  try {
    if (request.refuse || request.skip) {
      verdict = request.refuse ? cannotStart(request.refuse) : skipped(request.skip!);
      journal.write({ type: 'verdict', verdict });
      status = verdict.status;
      return { status, entries: journal.entries, verdict };
    }
    if (interrupted()) throw new Error('interrupted before the run started');
    const fixedBuffers = seal !== undefined && scenario.socketBufferBytes !== undefined;
    if (early && !request.toxiproxyUrl && !fixedBuffers) {
      earlyTaken = true;
      toxiproxy = await early;
    }
    // Before any socket of the run exists (the runner skips such a scenario when unsealed).
    if (seal && scenario.socketBufferBytes !== undefined) {
      await stopEarly();
      fixSocketBuffers(scenario.socketBufferBytes);
      log(`TCP buffers of the run's namespace fixed at ${scenario.socketBufferBytes} bytes`);
    }
    toxiproxy ??= await startToxiproxy(request.toxiproxyUrl ? { url: request.toxiproxyUrl } : {});
    journal.write({ type: 'toxiproxy', url: toxiproxy.url, version: toxiproxy.version, owned: toxiproxy.owned, identity: toxiproxy.identity });
    log(`toxiproxy ${toxiproxy.version} at ${toxiproxy.url}`);
    const server = toxiproxy;
    const adapter = new ToxiproxyAdapter(server.url, (thorough) => server.identityProblem(thorough));
    // Unsealed runs share the machine's loopback with other runs: every connection the publisher
    // accepts is tied to this run's Toxiproxy or to one of its processes, or the run cannot be
    // judged. Sealed ones cannot be reached from outside their namespace.
    const attribute = seal ? undefined : attributor(server.pid, processes, streamRole, cannotJudge);
    const roomsDir = join(runDir, 'rooms');
    const consumerStore: StoreGuard = {
      ...(seal ? { owner: { uid: seal.uid, gid: seal.gid } } : {}),
      rooms: [],
      limitBytes: request.storeLimitBytes ?? lab.storeLimitBytes ?? DEFAULT_STORE_LIMIT_BYTES,
    };
    const ctx: RunContext<unknown> = {
      scenario,
      runId,
      runDir,
      consumerCommand,
      controlCommand: lab.referenceCommand,
      journal,
      clock,
      log,
      processes,
      signal: ending.signal,
      room: (name) => {
        // Passable but not listable, whatever the umask (a sealed worker's is 077).
        mkdirSync(roomsDir, { recursive: true });
        chmodSync(roomsDir, 0o711);
        const room = confinement ? confinement.room(roomsDir, name) : join(roomsDir, name);
        if (!confinement) mkdirSync(room, { recursive: true });
        consumerStore.rooms.push(room);
        return room;
      },
      consumerStore,
      wire: (ownerOf) => wireRecorder(journal, ownerOf, attribute),
      proxy: async (role, upstream) => {
        const proxy = await adapter.createProxy(`chaoslab-${runId}-${role}`, upstream);
        proxies.push(proxy);
        // Also removed when the harness is interrupted: on an external Toxiproxy it would outlive us.
        const forget = onCleanup(`proxy ${proxy.name}`, () => proxy.remove());
        undo.push(async () => {
          forget();
          await proxy.remove();
          journal.write({ type: 'proxy', action: 'remove', name: proxy.name });
        });
        journal.write({
          type: 'proxy',
          action: 'create',
          name: proxy.name,
          listen: `${proxy.listen.host}:${proxy.listen.port}`,
          upstream: `${upstream.host}:${upstream.port}`,
        });
        await hooks.allowPort?.(proxy.listen.port);
        return proxy;
      },
      faults: (target) => {
        // Sealed, this process is inside the run's namespace: nft here is the run's (packet loss).
        // A fault that cannot be applied (a tampered or failed API) ends the run: it cannot be judged.
        const engine = new FaultEngine(scenario.faults, seal ? { ...target, netns: execHere } : target, journal, lab.faultPoints, undefined, (reason) =>
          cannotJudge(`${reason}: the run cannot be judged`),
        );
        engines.push(engine);
        return engine;
      },
      defer: (fn) => undo.push(fn),
    };
    if (interrupted()) throw new Error('interrupted before the lab ran');
    // What an earlier holder of the uid left is cleared before the consumer can meet it.
    if (confinement) journal.write(await confinement.leftovers('before'));
    await untilDoneOrAborted(lab.run(ctx), ending.signal, async () => {
      // Stop what runs; the lab's model then ends on its own (its processes gone), or is left behind.
      await processes.stop();
      for (const engine of engines) await engine.stop().catch(() => {});
    });
    if (interrupted()) throw new Error('interrupted');
    if (unjudgeable !== undefined) throw new CannotJudge(unjudgeable);
    // A proxy that vanished or moved (its server gone, or changed through the API: an unsealed
    // consumer can reach it) carried no fault of the scenario.
    for (const proxy of proxies) {
      const info = await proxy.info().catch((e: unknown) => e as Error);
      if (info instanceof Error || info.listen.port !== proxy.listen.port)
        throw new Error(
          `the proxy ${proxy.name} ${info instanceof Error ? `is gone (${info.message})` : `moved to port ${info.listen.port}`}: the consumer's link was not the scenario's, so the run cannot be judged`,
        );
    }
    // Faults end before the verdict: a loss fault's counters are evidence (labs stop theirs already).
    for (const engine of engines) await engine.stop();
    if (seal) {
      const counters = await hooks.firewall?.();
      if (counters) journal.write({ type: 'seal', uid: seal.uid, ...counters });
    }
    // Evidence for the verdict: the rooms' disk use, and what the uid left outside its room.
    if (confinement) {
      for (const entry of confinement.roomEntries()) journal.write(entry);
      journal.write(await confinement.leftovers('after'));
    }
    verdict = withCoreFindings(lab.check(ctx), coreFindings(journal.entries), coreTables(journal.entries));
    journal.write({ type: 'verdict', verdict });
    status = verdict.status;
  } catch (caught) {
    if (unjudgeable !== undefined && !interrupted()) {
      // Journaled when it happened, first: what failed after it is its consequence.
      error = unjudgeable;
      status = 'error';
    } else if (interrupted()) {
      // Whatever failed after the stop failed because of it: no harness error, no verdict.
      status = 'interrupted';
    } else {
      error = caught instanceof Error ? caught.message : String(caught);
      journal.write({ type: 'harness-error', message: error });
      status = 'error';
    }
  } finally {
    forgetAbort();
    forgetEnding();
    ending.abort(new Error('the run ended'));
    // Not killAll: a lab's loop still waiting on something must not start a process after this.
    await processes.stop();
    for (const engine of engines) await engine.stop().catch((e: unknown) => journal.write({ type: 'harness-error', message: `lifting faults: ${String(e)}` }));
    for (const fn of undo.reverse())
      await Promise.resolve()
        .then(fn)
        .catch((e: unknown) => journal.write({ type: 'harness-error', message: `ending the run: ${String(e)}` }));
    await toxiproxy?.stop();
    await stopEarly();
    // Once more after every process is killed (an interrupted run, one that lingered): nothing of
    // the uid may pass to the next run of the slot.
    if (confinement) {
      const late = await confinement
        .leftovers('after')
        .catch((e: unknown) => ({ type: 'harness-error' as const, message: `looking for leftovers: ${String(e)}` }));
      if (late.type !== 'leftovers' || late.found.length > 0) journal.write(late);
    }
    await confinement?.close().catch((e: unknown) => journal.write({ type: 'harness-error', message: `closing the consumer's room: ${String(e)}` }));
    journal.write({
      type: 'run-end',
      status,
      ...(status === 'interrupted' ? { interrupted: { by: String(signal?.reason ?? 'an interrupt'), at: interruptedAt ?? clock() } } : {}),
    });
    journal.close();
  }
  return { status, entries: journal.entries, ...(verdict ? { verdict } : {}), ...(error ? { error } : {}) };
}

/**
 * Waits for `run`; if `signal` aborts first, calls `stop` and then waits for `run` to settle at
 * most LAB_SETTLE_MS (its rejection, a consequence of the stop, is swallowed).
 */
export async function untilDoneOrAborted(run: Promise<void>, signal: AbortSignal | undefined, stop: () => Promise<void>): Promise<void> {
  const settled = run.then(
    () => 'done' as const,
    (error: unknown) => ({ error }),
  );
  let forget = (): void => {};
  const aborted = new Promise<'aborted'>((resolve) => {
    forget = onAbort(signal, () => resolve('aborted'));
  });
  const first = await Promise.race([settled, aborted]);
  forget();
  if (first === 'done') return;
  if (first !== 'aborted' && !signal?.aborted) throw first.error;
  await stop();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, LAB_SETTLE_MS)))]);
  clearTimeout(timer);
}

/** The run met something that leaves it without a verdict (a stray connection, a fault that could not be applied). */
class CannotJudge extends Error {
  override name = 'CannotJudge';
}

/** The verdict of a run that was not run: it needs what this machine or mode cannot give (skipped, not failed). */
function skipped(why: string): Verdict {
  return {
    status: 'skipped',
    headline: why,
    findings: [],
    harnessErrors: [],
    diff: [],
    state: { id: 'state', title: 'Final state', columns: [], rows: [], empty: 'The run was skipped: nothing ran.' },
    tables: [],
  };
}

/** The verdict of a run whose consumer could not be started at all: the consumer's failure, not the harness's. */
function cannotStart(why: string): Verdict {
  const text = `your command could not be started: ${why}`;
  return {
    status: 'fail',
    headline: text,
    findings: [{ code: 'cannot-start', text }],
    harnessErrors: [],
    diff: [],
    state: { id: 'state', title: 'Final state', columns: [], rows: [], empty: 'The run did not start: nothing was read.' },
    tables: [],
  };
}
