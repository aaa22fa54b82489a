// Heartbeats for one connection (contract section 5): a ping after `pingMs` without sending
// anything, and a dead connection after `idleMs` without receiving one byte. Timers re-arm
// lazily from the last activity instead of being reset on every frame.

import type { Cancel, Scheduler } from './scheduler.js';

export interface HeartbeatTimes {
  pingMs: number;
  idleMs: number;
}

export interface HeartbeatActions {
  /** Nothing sent for pingMs: send a ping (which counts as sending). */
  ping(): void;
  /** Nothing received for idleMs. */
  idle(): void;
}

export class Heartbeat {
  private lastSent: number;
  private lastReceived: number;
  private cancelPing: Cancel = () => {};
  private cancelIdle: Cancel = () => {};
  private stopped = false;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly times: HeartbeatTimes,
    private readonly actions: HeartbeatActions,
  ) {
    this.lastSent = this.lastReceived = scheduler.now();
    this.armPing(times.pingMs);
    this.armIdle(times.idleMs);
  }

  sent(): void {
    this.lastSent = this.scheduler.now();
  }

  received(): void {
    this.lastReceived = this.scheduler.now();
  }

  stop(): void {
    this.stopped = true;
    this.cancelPing();
    this.cancelIdle();
  }

  private armPing(ms: number): void {
    this.cancelPing = this.scheduler.after(ms, () => {
      if (this.stopped) return;
      const quiet = this.scheduler.now() - this.lastSent;
      if (quiet >= this.times.pingMs) {
        this.actions.ping();
        this.lastSent = this.scheduler.now();
      }
      if (!this.stopped) this.armPing(this.times.pingMs - (this.scheduler.now() - this.lastSent));
    });
  }

  private armIdle(ms: number): void {
    this.cancelIdle = this.scheduler.after(ms, () => {
      if (this.stopped) return;
      // Bytes that arrived while the event loop was busy are read in the poll phase, which
      // runs before setImmediate: our own slowness is not the peer's silence.
      setImmediate(() => {
        if (this.stopped) return;
        const quiet = this.scheduler.now() - this.lastReceived;
        if (quiet >= this.times.idleMs) this.actions.idle();
        else this.armIdle(this.times.idleMs - quiet);
      });
    });
  }
}
