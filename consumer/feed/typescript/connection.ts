// One TCP connection of the main loop (consumer/feed/CONTRACT.md, sections 2 and 5): bytes read
// as they come, frames checked and queued, pings sent and answered, idleness judged fairly.

import type net from 'node:net';
import { NdjsonSplitter } from '../../../protocol/feed/lines.js';
import { type OpenConnection, type Session, log, now } from './session.js';
import { type Frame, InvalidFrame, MAX_LINE_BYTES, encodePingPong } from './wire.js';

/** Read-ahead bound: past this the socket is paused, so a slow consumer pushes back on the server. */
export const QUEUE_HIGH_FRAMES = 256;
export const QUEUE_HIGH_BYTES = 4 * 1024 * 1024;

type Item = { kind: 'frame'; frame: Frame; bytes: number } | { kind: 'invalid'; reason: string };
export type Next = Item | { kind: 'end'; reason: string } | { kind: 'idle' } | { kind: 'stop' };

/**
 * One TCP connection. Bytes are read as they come (so pings are answered even while a
 * transaction is waiting), split into frames, checked, and queued for the session loop in
 * arrival order; the queue is bounded, past it the socket is paused and TCP pushes back.
 * Idleness is judged only when the loop wants a frame and the queue is empty, and only after
 * a pass through the event loop's poll phase (setImmediate after the timer): time spent in a
 * long synchronous COMMIT is not the server's silence.
 */
export class Connection implements OpenConnection {
  subscribedNull = false;
  sawSnapshot = false;
  /** A snapshot or an event arrived (moves the backoff's n back to 0). */
  gotData = false;
  /** When we saw the end of the connection or closed it ourselves. */
  endSeenAt = 0;
  private endReason = '';
  private done = false;
  private readonly splitter = new NdjsonSplitter();
  private readonly queue: Item[] = [];
  private queuedBytes = 0;
  private lastRx = now();
  private lastTx = now();
  private pingTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  constructor(
    readonly socket: net.Socket,
    private readonly s: Session,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.finish('the server closed the connection'));
    socket.on('error', (err) => this.finish(`connection error: ${err.message}`));
    socket.on('close', () => this.finish('the connection closed'));
    this.armPing();
  }

  write(text: string): void {
    if (this.done || this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(text);
    this.lastTx = now();
  }

  /** Closes the connection at once; nothing more is read from it. */
  close(reason = 'closed by the consumer'): void {
    this.finish(reason);
    this.socket.destroy();
  }

  private finish(reason: string): void {
    if (!this.done) {
      this.done = true;
      this.endReason = reason;
      this.endSeenAt = now();
      if (this.splitter.fragmentLength > 0) log(`discarded ${this.splitter.fragmentLength} bytes of an unterminated line`);
    }
    clearTimeout(this.pingTimer);
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private armPing(): void {
    clearTimeout(this.pingTimer);
    if (this.done) return;
    const { pingMs } = this.s.config;
    this.pingTimer = setTimeout(
      () => {
        if (now() - this.lastTx >= pingMs - 1) this.write(encodePingPong('ping', String(this.s.nextPingId())));
        this.armPing();
      },
      Math.max(0, this.lastTx + pingMs - now()),
    );
  }

  private onData(chunk: Buffer): void {
    if (this.done) return;
    this.lastRx = now();
    const { lines, overflow } = this.splitter.push(chunk);
    for (const line of lines) {
      this.onLine(line);
      if (this.done) return;
    }
    if (overflow) {
      this.terminal({ kind: 'invalid', reason: `no LF within ${MAX_LINE_BYTES} bytes` });
      return;
    }
    if (this.queue.length >= QUEUE_HIGH_FRAMES || this.queuedBytes >= QUEUE_HIGH_BYTES) this.socket.pause();
    this.notify();
  }

  private onLine(line: Buffer): void {
    let frame: Frame;
    try {
      frame = this.s.steps.parseFrame(line);
      this.s.steps.acceptFrame(this.s, this, frame);
    } catch (err) {
      const reason = err instanceof InvalidFrame ? err.message : `cannot read the frame: ${String(err)}`;
      this.terminal({ kind: 'invalid', reason });
      return;
    }
    switch (frame.op) {
      case 'ping':
        this.s.steps.answerPing(this.s, frame.id); // at once, also while a transaction waits
        return;
      case 'pong':
      case 'unknown':
        return; // nothing to do: every byte already counted as a sign of life
      case 'reset':
        this.terminal({ kind: 'frame', frame, bytes: line.length }); // the server closes at once
        return;
      case 'event':
      case 'snapshot':
        this.gotData = true;
    }
    this.queue.push({ kind: 'frame', frame, bytes: line.length });
    this.queuedBytes += line.length;
  }

  /** Queues the last item of this connection (after what came before it) and closes. */
  private terminal(item: Item): void {
    this.queue.push(item);
    this.close(item.kind === 'invalid' ? `invalid frame: ${item.reason}` : 'reset');
  }

  /** The next frame in arrival order, or why there is none. */
  async next(): Promise<Next> {
    for (;;) {
      const item = this.queue.shift();
      if (item) {
        if (item.kind === 'frame') this.queuedBytes -= item.bytes;
        return item;
      }
      if (this.s.stopping) return { kind: 'stop' };
      if (this.done) return { kind: 'end', reason: this.endReason };
      if (this.socket.isPaused()) {
        this.socket.resume(); // caught up: read again, and count silence from now on
        this.lastRx = now();
      }
      const r = await this.waitForInput();
      if (r !== 'input') return { kind: r };
    }
  }

  private waitForInput(): Promise<'input' | 'idle' | 'stop'> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let immediate: NodeJS.Immediate | undefined;
      const settle = (r: 'input' | 'idle' | 'stop'): void => {
        clearTimeout(timer);
        if (immediate) clearImmediate(immediate);
        this.wake = undefined;
        this.s.offStop(onStop);
        resolve(r);
      };
      const onStop = (): void => settle('stop');
      const { idleMs } = this.s.config;
      // The timer only says "maybe"; the check runs after the poll phase has read whatever
      // the socket holds, so data that arrived while we were busy counts.
      const check = (): void => (now() - this.lastRx >= idleMs ? settle('idle') : arm());
      const arm = (): void => {
        timer = setTimeout(
          () => {
            immediate = setImmediate(check);
          },
          Math.max(0, this.lastRx + idleMs - now()),
        );
      };
      this.wake = () => settle('input');
      this.s.onStop(onStop);
      arm();
    });
  }
}
