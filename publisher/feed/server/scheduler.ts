// Time for the feed server's timers (heartbeats, idle timeouts, lingering closes, polling,
// stalls) behind one small interface, so tests drive them with a manual clock instead of
// racing real time on a busy machine.

import { performance } from 'node:perf_hooks';

export type Cancel = () => void;

export interface Scheduler {
  /** Monotonic milliseconds. */
  now(): number;
  /** Runs `fn` once after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): Cancel;
}

export const realScheduler: Scheduler = {
  now: () => performance.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** A clock that moves only when told to: `advance(ms)` runs every timer that falls due, in time order. */
export class ManualScheduler implements Scheduler {
  private time = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.time;
  }

  after(ms: number, fn: () => void): Cancel {
    const id = this.seq++;
    this.timers.set(id, { at: this.time + Math.max(0, ms), fn });
    return () => this.timers.delete(id);
  }

  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = next[1].at;
      next[1].fn();
    }
    this.time = target;
  }
}
