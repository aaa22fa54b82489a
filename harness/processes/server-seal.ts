// A sealed run's server under test (issue 31), sealed like a consumer (confinement.ts: PID, IPC
// and mount namespaces, rlimits, cgroups, a clean environment, a room with a quota) but as a uid
// of its own, never the consumers' (the probes') nor the harness's:
//  - its uid is leased from the other half of the slot range (slot n prefers 61450 + n);
//  - the firewall (a table of its own in the run's namespace, built as the consumers' is) lets it
//    answer on the ports it serves and nothing else: it cannot open a connection to anything,
//    Toxiproxy's API, the proxies, the harness's ports or the control's stream included;
//  - what it must read (the outbox) is shared read-only: root's files, 0644, in a folder it
//    cannot write, so it can neither change, delete nor replace them.
// Everything runs in the worker, inside the run's network namespace, as root.

import { chmodSync, existsSync, lstatSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { allowServePortsHere, installFirewall, NFT_HERE, readFirewallCounters, type UidCounters } from '../sandbox/firewall.js';
import { checkAccess } from '../sandbox/room.js';
import { leaseUid, UID_BASE, UID_SLOTS, type UidLease } from '../sandbox/uids.js';
import { Confinement } from './confinement.js';

/** The server's table, beside the consumers' `chaoslab_seal`. */
export const SERVER_FIREWALL_TABLE = 'chaoslab_server_seal';
/** Servers lease from the upper half of the slot range, consumers start in the lower. */
export const SERVER_SLOT_OFFSET = UID_SLOTS / 2;
/** The server's room, `rooms/server/` of the run folder: its HOME, shared by its incarnations. */
export const SERVER_ROOM = 'server';
/**
 * The server's RLIMIT_NOFILE (a consumer's is 1 024): a server holds a socket per client, and the
 * fan-out scenario alone connects 1 000 clients and a probe, besides the runtime's own files.
 */
export const SERVER_OPEN_FILES = 8192;

/** What a lab uses to seal its server process (RunContext.serverSeal). */
export interface SealedServer {
  readonly uid: number;
  /** The server's room (made on first use): the folder it may write, its HOME. */
  room(): string;
  /** Lets it answer on `port` (its listen port): call before it is started. */
  serve(port: number): void;
  /** Lets it read `file` and its SQLite sidecars (-wal, -shm), never write them; throws naming what it cannot reach. */
  shareReadOnly(file: string): void;
}

export interface ServerSealOptions {
  /** The run's consumer uid: the server's slot is found from it. */
  consumerUid: number;
  runId: string;
  runDir: string;
  roomQuotaBytes?: number;
  scanDirs?: readonly string[];
}

export class ServerSeal implements SealedServer {
  private roomPath: string | undefined;
  private readonly served = new Set<number>();

  private constructor(
    private readonly lease: UidLease,
    readonly confinement: Confinement,
    private readonly runDir: string,
  ) {}

  /** Leases the server's uid and installs its firewall rule (no port yet). */
  static async open(options: ServerSealOptions): Promise<ServerSeal> {
    const slot = ((options.consumerUid - UID_BASE) % SERVER_SLOT_OFFSET) + SERVER_SLOT_OFFSET;
    const lease = leaseUid(slot);
    try {
      await installFirewall(NFT_HERE, [{ uid: lease.uid, allowTcpPorts: [], serveTcpPorts: [] }], SERVER_FIREWALL_TABLE);
    } catch (error) {
      lease.release();
      throw error;
    }
    const confinement = new Confinement(lease.uid, lease.gid, options.runId, options.roomQuotaBytes, options.scanDirs);
    confinement.limits = { openFiles: SERVER_OPEN_FILES };
    return new ServerSeal(lease, confinement, options.runDir);
  }

  get uid(): number {
    return this.lease.uid;
  }

  room(): string {
    if (this.roomPath === undefined) {
      const roomsDir = join(this.runDir, 'rooms');
      mkdirSync(roomsDir, { recursive: true });
      chmodSync(roomsDir, 0o711);
      this.roomPath = this.confinement.room(roomsDir, SERVER_ROOM);
    }
    return this.roomPath;
  }

  serve(port: number): void {
    if (this.served.has(port)) return;
    allowServePortsHere(this.uid, [port], SERVER_FIREWALL_TABLE);
    this.served.add(port);
  }

  shareReadOnly(file: string): void {
    // Under a private /tmp (a run folder there), its folder is bound back read-only at its path.
    this.confinement.readOnlyDir = shareReadOnly(file, this.uid);
  }

  /** What its firewall let through and refused. */
  async counters(): Promise<UidCounters | undefined> {
    return (await readFirewallCounters(NFT_HERE, SERVER_FIREWALL_TABLE)).get(this.uid);
  }

  /** Its groups and room (kept on disk, handed to root), then its uid back. Call once none of its processes is left. */
  async close(): Promise<void> {
    try {
      await this.confinement.close();
    } finally {
      this.lease.release();
    }
  }
}

/**
 * Makes `file` and its SQLite sidecars present (-wal, -shm; SQLite makes a missing one with the
 * file's mode) readable by `uid`, never writable: each must be a regular file of root's, made
 * 0644; `uid` must reach the file and must not be able to write its folder (or it could delete
 * or replace it). Returns the folder; throws naming what is wrong.
 */
export function shareReadOnly(file: string, uid: number): string {
  const folder = dirname(file);
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (!existsSync(path) && path !== file) continue;
    const st = lstatSync(path);
    if (!st.isFile() || st.uid !== 0) throw new Error(`${path} is not a regular file of root's: it cannot be shared read-only with the server`);
    chmodSync(path, 0o644);
  }
  const unreachable = checkAccess(file, uid, uid, 'read', `the file ${file}`);
  if (unreachable) throw new Error(`the server cannot read what it needs: ${unreachable.message}`);
  if (!checkAccess(folder, uid, uid, 'write')) throw new Error(`the folder ${folder} is writable by the server's uid ${uid}: it could replace ${file}`);
  return folder;
}
