// The small interface every fault effect implements (after Toxiproxy's one-file-per-toxic):
// apply it now, and get back how to lift it.
import type { SupervisedProcess } from '../supervisor.js';
import type { ProxyHandle } from '../toxiproxy/adapter.js';

export interface FaultTarget {
  proxy: ProxyHandle;
  /** The consumer process running now, if any. */
  current(): { proc: SupervisedProcess; incarnation: number } | undefined;
}

export interface AppliedEffect {
  /** One line for the journal: what was done. */
  detail: string;
  /** Undoes it; undefined for instantaneous effects (a SIGKILL is not lifted). */
  lift?: () => Promise<string>;
}

export type Effect<Spec> = (spec: Spec, name: string, target: FaultTarget) => Promise<AppliedEffect>;
