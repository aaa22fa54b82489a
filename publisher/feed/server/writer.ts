// The output side of one feed connection: the per-connection queue of frames, written while
// the socket takes them. Just before an event goes out, the trigger hook is awaited and the
// connection's scripted misbehaviour (if any) is applied, so both land at a fixed place in the
// stream. A stall makes the writer send nothing at all until it is over.

import type { Socket } from 'node:net';
import type { TranscriptEvent } from '../../transcript.js';
import { type FeedMisbehaviour, type RealEvent, malformedLine, misbehaviourAt, numberAmountLine, unknownOpLine } from './misbehaviour.js';
import { encodeRealEvent } from '../outbox/events.js';
import type { Cancel, Scheduler } from './scheduler.js';

export type QueuedFrame = { kind: 'event'; event: RealEvent; line: string; hooked?: boolean } | { kind: 'frame'; line: string };

export interface WriterContext {
  /** The connection number (misbehaviour rules name it). */
  readonly id: number;
  readonly socket: Socket;
  readonly scheduler: Scheduler;
  readonly misbehaviour: readonly FeedMisbehaviour[];
  /** The connection each rule fired on, shared by the stream's connections: a rule fires once in all. */
  readonly misbehaviourFired: Map<FeedMisbehaviour, number>;
  beforeEvent?(cursor: string): Promise<void> | void;
  /** The `count` events of this connection's accounts just before `cursor` (for a resend). */
  eventsBefore(cursor: string, count: number): RealEvent[];
  record(event: TranscriptEvent): void;
  /** Something was written (the heartbeat's "sent"). */
  wrote(): void;
  /** The queue is empty (and not stalled): the connection may read the next replay page. */
  emptied(): void;
}

/** Transcript lines are capped: a deliberately oversized frame need not be journaled whole. */
const TRANSCRIPT_LINE_CHARS = 64 * 1024;
export const forTranscript = (line: string): string =>
  line.length <= TRANSCRIPT_LINE_CHARS ? line : `${line.slice(0, TRANSCRIPT_LINE_CHARS)}…[${Buffer.byteLength(line)} bytes in all]`;

export class FrameWriter {
  private pending: QueuedFrame[] = [];
  private flushing = false;
  private isStalled = false;
  private closed = false;
  /** Waiting for the queue to be empty (written()). */
  private waiters: (() => void)[] = [];
  private cancelStall: Cancel = () => {};

  constructor(private readonly ctx: WriterContext) {}

  /** A `stall` misbehaviour is in force: nothing is written. */
  get stalled(): boolean {
    return this.isStalled;
  }

  /** Frames waiting for the socket. */
  get length(): number {
    return this.pending.length;
  }

  /** The consumer is not reading: the socket has more buffered than it wants. */
  get backedUp(): boolean {
    return this.ctx.socket.writableNeedDrain;
  }

  push(frame: QueuedFrame): void {
    this.pending.push(frame);
    void this.flush();
  }

  /** Writes a frame ahead of the queue (heartbeats, resets); nothing while stalled or closed. */
  writeNow(line: string, note?: string): void {
    if (this.closed || this.isStalled || this.ctx.socket.destroyed) return;
    this.ctx.record({ kind: 'send', line: forTranscript(line), ...(note ? { note } : {}) });
    this.ctx.socket.write(line);
    this.ctx.wrote();
  }

  /** Drops the oldest pending frame (what a drop-oldest queue does; the reference never does). */
  dropOldest(): void {
    this.pending.shift();
  }

  /** Drops everything pending and ends a stall: what a reset does before it is sent. */
  drop(): void {
    this.pending = [];
    this.isStalled = false;
    this.cancelStall();
    this.release();
  }

  /** Settles once every frame queued so far has been handed to the kernel, or the connection is gone. */
  async written(): Promise<void> {
    const { socket } = this.ctx;
    while (!this.closed && !socket.destroyed && this.pending.length > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.closed || socket.destroyed || socket.writableEnded) return;
    // An empty write's callback comes once everything written before it has left Node's buffer.
    await new Promise<void>((resolve) => socket.write('', () => resolve()));
  }

  private release(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  /** Writes pending frames while the socket takes them; the one job that empties the queue. */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    const { socket } = this.ctx;
    try {
      while (!this.closed && !socket.destroyed && !this.isStalled && this.pending.length > 0) {
        if (socket.writableNeedDrain) {
          await this.drained();
          continue;
        }
        const frame = this.pending[0]!;
        if (frame.kind === 'event' && this.ctx.beforeEvent && !frame.hooked) {
          frame.hooked = true;
          await this.ctx.beforeEvent(frame.event.cursor);
          continue; // re-check: the connection may have closed or stalled meanwhile
        }
        if (frame.kind === 'event' && this.misbehave(frame.event)) continue;
        this.pending.shift();
        this.writeNow(frame.line);
      }
    } finally {
      this.flushing = false;
    }
    if (this.closed || this.pending.length === 0 || this.ctx.socket.destroyed) this.release();
    if (!this.closed && !this.isStalled && this.pending.length === 0) this.ctx.emptied();
  }

  private drained(): Promise<void> {
    const { socket } = this.ctx;
    return new Promise((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
  }

  /** Applies the rule at this event, once; true when the event must not be written now. */
  private misbehave(event: RealEvent): boolean {
    const fired = this.ctx.misbehaviourFired;
    const rule = misbehaviourAt(this.ctx.misbehaviour, this.ctx.id, event.cursor, fired);
    if (!rule || fired.has(rule)) return false;
    fired.set(rule, this.ctx.id);
    const note = `misbehaviour: ${rule.action} at ${event.cursor}`;
    switch (rule.action) {
      case 'resend':
        for (const earlier of this.ctx.eventsBefore(event.cursor, rule.count ?? 3))
          this.writeNow(encodeRealEvent(earlier), `${note}: resend ${earlier.cursor}`);
        return false;
      case 'malformed': {
        const form = rule.form ?? 'trailing-comma';
        this.pending.shift();
        this.writeNow(malformedLine(event, form), `${note} (${form}); the real event is not sent`);
        return true;
      }
      case 'number-amount':
        if (event.type !== 'Transfer') {
          this.note(`${note} skipped: a ${event.type} amount is not checked by consumers`);
          return false;
        }
        this.pending.shift();
        this.writeNow(numberAmountLine(event), `${note}; the real event is not sent`);
        return true;
      case 'unknown-op':
        this.writeNow(unknownOpLine(event), note);
        return false;
      case 'stall':
        this.isStalled = true;
        this.note(`${note}: silent${rule.ms === undefined ? ', connection kept open' : ` for ${rule.ms} ms`}`);
        if (rule.ms !== undefined) {
          this.cancelStall = this.ctx.scheduler.after(rule.ms, () => {
            this.isStalled = false;
            this.note('stall over');
            void this.flush();
          });
        }
        return true;
    }
  }

  private note(text: string): void {
    this.ctx.record({ kind: 'note', text });
  }
}
