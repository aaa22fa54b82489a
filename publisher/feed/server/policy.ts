// What a connection does when its client misbehaves: a queue past its limit while the client is
// not reading, silence (heartbeats), a frame that breaks the grammar or the 1 MiB limit. The
// reference's answers are the server contract's (sections 4 and 5); a server mutant
// (publisher/feed/mutants/) replaces one of them through runServer(overrides).

import { Heartbeat, type HeartbeatActions, type HeartbeatTimes } from './heartbeat.js';
import type { Scheduler } from './scheduler.js';

/** The connection's queue, as an overflow policy sees it. */
export interface OverflowingQueue {
  /** Frames pending (more than the limit when the policy is asked). */
  readonly length: number;
  /** Drops the oldest pending frame. */
  dropOldest(): void;
}

/** What a connection asks of its heartbeat. */
export interface ConnectionHeartbeat {
  /** Something was written. */
  sent(): void;
  /** Something arrived. */
  received(): void;
  stop(): void;
}

export interface ConnectionPolicy {
  /**
   * The queue holds more than CHAOSLAB_QUEUE_LIMIT frames and the client is not reading:
   * `reset` drops everything pending, sends `reset slow-consumer` and closes (the reference);
   * `carry-on` keeps the connection as the policy left it.
   */
  onOverflow(queue: OverflowingQueue): 'reset' | 'carry-on';
  /** Pings after pingMs without sending, `idle` after idleMs without receiving. */
  heartbeat(scheduler: Scheduler, times: HeartbeatTimes, actions: HeartbeatActions): ConnectionHeartbeat;
  /** A client frame was bad (`why`); the connection is closed right after, sending nothing. */
  onBadFrame(why: string): void;
}

export const REFERENCE_POLICY: ConnectionPolicy = {
  onOverflow: () => 'reset',
  heartbeat: (scheduler, times, actions) => new Heartbeat(scheduler, times, actions),
  onBadFrame: () => {},
};
