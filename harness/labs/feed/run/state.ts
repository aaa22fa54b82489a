// What the feed run's steps share while it goes: the consumer process running now (the wire
// record and the fault engine ask whom a line or a signal belongs to), the fault engine once the
// proxy exists, and how the consumer loop and the control are doing.

import type { FaultEngine } from '../../../faults/engine.js';
import type { StartedProcess } from '../../../processes/processes.js';

export interface FeedRunState {
  /** The consumer process running now, if any. */
  current?: StartedProcess;
  /** Bound late: the engine needs the proxy, which needs the consumer stream's port. */
  faults?: FaultEngine;
  /** The script is over and both consumers are being stopped: no consumer starts again. */
  terminating: boolean;
  /** The consumer loop has ended (restarts used up, or the run ended). */
  consumersOver: boolean;
  /** What ended the consumer loop by throwing, thrown again at the run's end. */
  loopError?: unknown;
  controlRunning: boolean;
}

export const newFeedRunState = (): FeedRunState => ({ terminating: false, consumersOver: false, controlRunning: true });

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
