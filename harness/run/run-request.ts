// What a run is asked to do (RunRequest) and what it is given to report and to ask back
// (RunHooks): the one shape the runner, a sealed run's worker and the run's body share.

import type { JournalEntry } from '../record/journal.js';
import type { Reproduce } from '../record/reproduce.js';
import type { Scenario } from '../scenario/types.js';
import type { ToxiproxyServer } from '../toxiproxy/server.js';

export interface RunRequest {
  scenario: Scenario;
  runId: string;
  /** Exists already (made by the runner, with its permissions). */
  runDir: string;
  consumerCommand: string;
  /** A scenario that tests the lab's push server: the server's command line (the consumer command then names the probes'). */
  serverCommand?: string;
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

export interface RunHooks {
  onJournal?: (entry: JournalEntry) => void;
  log?: (line: string) => void;
  /** Aborted on Ctrl-C/SIGTERM (its reason names the signal): the run stops and ends `interrupted`. */
  signal?: AbortSignal;
  /**
   * A Toxiproxy started as this run's own before the run arrived (a sealed worker starts one while
   * it waits): used when the run would start one with the same options and no TCP buffer setting
   * must come first; stopped otherwise.
   */
  toxiproxy?: Promise<ToxiproxyServer>;
}
