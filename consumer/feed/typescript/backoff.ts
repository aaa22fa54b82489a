// Reconnecting (consumer/feed/CONTRACT.md, section 6): exponential backoff with jitter on every
// attempt, capped, and its attempt count moved back to 0 once data arrives.

import type { Config } from './environment.js';
import { MAX_MS } from './environment.js';
import { type Session, now } from './session.js';

/** min(BASE x 2^n, CAP) x U(0.5, 1.5): jitter on every attempt, at the cap too. */
export function backoffDelay(config: Config, n: number, random: () => number): number {
  return Math.min(config.backoffBaseMs * 2 ** Math.min(n, 40), config.backoffCapMs) * (0.5 + random());
}

/** Sleeps until `until` (performance.now() time) or SIGTERM, whichever comes first. */
async function sleepUntil(s: Session, until: number): Promise<void> {
  while (!s.stopping && now() < until) {
    try {
      await s.pause(Math.min(MAX_MS, Math.max(1, Math.ceil(until - now()))));
    } catch {
      return; // Stopped
    }
  }
}

/** How long to wait before each connect: nothing before the process's first one. */
export class Reconnects {
  /** Consecutive attempts since data last arrived. */
  private n = 0;
  /** When the last connection ended; undefined before the first connect. */
  private lastEnd: number | undefined;

  /** Waits the backoff delay counted from the last connection's end (or SIGTERM). */
  async waitBeforeConnect(s: Session): Promise<void> {
    if (this.lastEnd === undefined) return;
    await sleepUntil(s, this.lastEnd + s.steps.backoffDelay(s.config, this.n, Math.random));
    this.n++;
  }

  /** A connection ended; data on it (a snapshot or an event) starts the count over. */
  ended(r: { gotData: boolean; endSeenAt: number }): void {
    if (r.gotData) this.n = 0;
    this.lastEnd = r.endSeenAt;
  }
}
