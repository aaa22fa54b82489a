// What a run holds while it goes and undoes on every way out: its processes, fault engines,
// proxies, Toxiproxy, the consumer's confinement, and whatever the lab deferred. `context()` is
// the RunContext a lab runs in; `windDown()` undoes it all, each step's failure journaled.

import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { onCleanup } from '../base/cleanup.js';
import { FaultEngine } from '../faults/engine.js';
import type { JournalWriter } from '../record/journal.js';
import type { Lab, RunContext } from '../lab-api/lab.js';
import { ProcessRunner } from '../processes/processes.js';
import { execHere } from '../sandbox/tools.js';
import { DEFAULT_STORE_LIMIT_BYTES, type StoreGuard } from '../sandbox/store-file.js';
import type { ProxyHandle, ToxiproxyAdapter } from '../toxiproxy/adapter.js';
import type { ToxiproxyServer } from '../toxiproxy/server.js';
import { wireRecorder } from '../record/wire-journal.js';
import { attributor } from './attribute.js';
import { Confinement } from '../processes/confinement.js';
import { ServerSeal } from '../processes/server-seal.js';
import type { RunHooks, RunRequest } from './run-request.js';
import type { RunEnding } from './run-ending.js';

export class RunParts {
  readonly undo: (() => Promise<void> | void)[] = [];
  readonly engines: FaultEngine[] = [];
  readonly proxies: ProxyHandle[] = [];
  readonly confinement: Confinement | undefined;
  /** A sealed run that tests a server: the server's own uid, firewall rule and confinement. */
  serverSeal: ServerSeal | undefined;
  readonly processes: ProcessRunner;
  toxiproxy: ToxiproxyServer | undefined;
  private earlyTaken = false;

  constructor(
    private readonly request: RunRequest,
    private readonly hooks: RunHooks,
    private readonly journal: JournalWriter,
    log: (line: string) => void,
  ) {
    const { seal } = request;
    this.confinement = seal ? new Confinement(seal.uid, seal.gid, request.runId, request.roomQuotaBytes, seal.scanDirs) : undefined;
    this.processes = new ProcessRunner(journal, request.cwd, request.scenario.deadlineMs, log, this.confinement);
  }

  /** The Toxiproxy a sealed worker started early, taken as this run's own. */
  async takeEarly(): Promise<void> {
    if (!this.hooks.toxiproxy) return;
    this.earlyTaken = true;
    this.toxiproxy = await this.hooks.toxiproxy;
  }

  /** The early Toxiproxy, when this run does not take it. */
  async stopEarly(): Promise<void> {
    const early = this.hooks.toxiproxy;
    if (!early || this.earlyTaken) return;
    this.earlyTaken = true;
    await early.then(
      (server) => server.stop(),
      () => {},
    );
  }

  /** Every confinement of the run: the consumers', and the server's. */
  get confinements(): Confinement[] {
    return [this.confinement, this.serverSeal?.confinement].filter((c): c is Confinement => c !== undefined);
  }

  /** A sealed run whose program under test is a server: its seal, before the lab runs (the lab seals each server process with it). */
  async openServerSeal(): Promise<void> {
    const { seal, serverCommand, runId, runDir, roomQuotaBytes } = this.request;
    if (!seal || serverCommand === undefined) return;
    this.serverSeal = await ServerSeal.open({
      consumerUid: seal.uid,
      runId,
      runDir,
      ...(roomQuotaBytes === undefined ? {} : { roomQuotaBytes }),
      ...(seal.scanDirs ? { scanDirs: seal.scanDirs } : {}),
    });
    this.processes.confineRole('server', this.serverSeal.confinement);
  }

  /** The role of a publisher stream, from the lab's `stream` entries. */
  private readonly streamRole = (stream: string) => {
    for (const e of this.journal.entries) if (e.type === 'stream' && e.stream === stream) return e.role;
    return undefined;
  };

  /** The context the lab runs in, on this run's Toxiproxy. */
  context(
    lab: Lab,
    adapter: ToxiproxyAdapter,
    server: ToxiproxyServer,
    ending: RunEnding,
    clock: () => number,
    log: (line: string) => void,
  ): RunContext<unknown> {
    const { scenario, runId, runDir, consumerCommand, serverCommand, seal } = this.request;
    // Unsealed runs share the machine's loopback with other runs: every connection the publisher
    // accepts is tied to this run's Toxiproxy or to one of its processes, or the run cannot be
    // judged. Sealed ones cannot be reached from outside their namespace.
    const attribute = seal ? undefined : attributor(server.pid, this.processes, this.streamRole, ending.cannotJudge);
    const consumerStore: StoreGuard = {
      ...(seal ? { owner: { uid: seal.uid, gid: seal.gid } } : {}),
      rooms: [],
      limitBytes: this.request.storeLimitBytes ?? lab.storeLimitBytes ?? DEFAULT_STORE_LIMIT_BYTES,
    };
    const journal = this.journal;
    return {
      scenario,
      runId,
      runDir,
      consumerCommand,
      controlCommand: lab.referenceCommand,
      ...(serverCommand === undefined ? {} : { serverCommand }),
      ...(this.serverSeal ? { serverSeal: this.serverSeal } : {}),
      journal,
      clock,
      log,
      processes: this.processes,
      signal: ending.signal,
      room: (name) => this.room(name, consumerStore),
      consumerStore,
      wire: (ownerOf) => wireRecorder(journal, ownerOf, attribute),
      proxy: (role, upstream) => this.proxy(adapter, `chaoslab-${runId}-${role}`, upstream),
      faults: (target) => {
        // Sealed, this process is inside the run's namespace: nft here is the run's (packet loss).
        // A fault that cannot be applied (a tampered or failed API) ends the run: it cannot be judged.
        const engine = new FaultEngine(scenario.faults, seal ? { ...target, netns: execHere } : target, journal, lab.faultPoints, undefined, (reason) =>
          ending.cannotJudge(`${reason}: the run cannot be judged`),
        );
        this.engines.push(engine);
        return engine;
      },
      defer: (fn) => this.undo.push(fn),
    };
  }

  private room(name: string, consumerStore: StoreGuard): string {
    const roomsDir = join(this.request.runDir, 'rooms');
    // Passable but not listable, whatever the umask (a sealed worker's is 077).
    mkdirSync(roomsDir, { recursive: true });
    chmodSync(roomsDir, 0o711);
    const room = this.confinement ? this.confinement.room(roomsDir, name) : join(roomsDir, name);
    if (!this.confinement) mkdirSync(room, { recursive: true });
    consumerStore.rooms.push(room);
    return room;
  }

  private async proxy(adapter: ToxiproxyAdapter, name: string, upstream: { host: string; port: number }): Promise<ProxyHandle> {
    const proxy = await adapter.createProxy(name, upstream);
    this.proxies.push(proxy);
    // Also removed when the harness is interrupted: on an external Toxiproxy it would outlive us.
    const forget = onCleanup(`proxy ${proxy.name}`, () => proxy.remove());
    this.undo.push(async () => {
      forget();
      await proxy.remove();
      this.journal.write({ type: 'proxy', action: 'remove', name: proxy.name });
    });
    this.journal.write({
      type: 'proxy',
      action: 'create',
      name: proxy.name,
      listen: `${proxy.listen.host}:${proxy.listen.port}`,
      upstream: `${upstream.host}:${upstream.port}`,
    });
    await this.confinement?.allowPort(proxy.listen.port);
    return proxy;
  }

  /** Stops what runs (an interrupt): the lab's model then ends on its own (its processes gone), or is left behind. */
  async stopRunning(): Promise<void> {
    await this.processes.stop();
    for (const engine of this.engines) await engine.stop().catch(() => {});
  }

  /**
   * Undoes everything, newest first, each failure journaled. Not killAll: a lab's loop still
   * waiting on something must not start a process after this.
   */
  async windDown(): Promise<void> {
    const failed = (what: string) => (e: unknown) => this.journal.write({ type: 'harness-error', message: `${what}: ${String(e)}` });
    await this.processes.stop();
    for (const engine of this.engines) await engine.stop().catch(failed('lifting faults'));
    for (const fn of this.undo.reverse()) await Promise.resolve().then(fn).catch(failed('ending the run'));
    await this.toxiproxy?.stop();
    await this.stopEarly();
    // Once more after every process is killed (an interrupted run, one that lingered): nothing of
    // the uid may pass to the next run of the slot.
    for (const confinement of this.confinements) {
      const late = await confinement
        .leftovers('after')
        .catch((e: unknown) => ({ type: 'harness-error' as const, message: `looking for leftovers: ${String(e)}` }));
      if (late.type !== 'leftovers' || late.found.length > 0) this.journal.write(late);
    }
    await this.confinement?.close().catch(failed("closing the consumer's room"));
    await this.serverSeal?.close().catch(failed("closing the server's room"));
  }
}
