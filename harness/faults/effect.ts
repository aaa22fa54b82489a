// The small interface every fault effect implements (after Toxiproxy's one-file-per-toxic):
// apply it now, and get back how to lift it.
import type { JournalEvent } from '../record/journal.js';
import type { NamespaceExec } from '../sandbox/loss.js';
import type { SupervisedProcess } from '../processes/supervisor.js';
import type { ProxyHandle } from '../toxiproxy/adapter.js';

export interface FaultTarget {
  proxy: ProxyHandle;
  /** The consumer process running now, if any. */
  current(): { proc: SupervisedProcess; incarnation: number; heldByHarness?: boolean } | undefined;
  /** Runs nft/ip in the run's own network namespace: sealed runs only (packet loss needs it). */
  netns?: NamespaceExec;
}

/** What a lift did, and evidence for the journal beside the `fault` entry (loss: its counters). */
export interface Lifted {
  detail: string;
  evidence?: JournalEvent;
}

export interface AppliedEffect {
  /** One line for the journal: what was done. */
  detail: string;
  /** Undoes it; undefined for instantaneous effects (a SIGKILL is not lifted). */
  lift?: () => Promise<string | Lifted>;
}

export type Effect<Spec> = (spec: Spec, name: string, target: FaultTarget) => Promise<AppliedEffect>;
