// One raw TCP client the harness drives itself: it connects (through its proxy), sends what its
// behaviour says, and reads the server's lines in one of three ways — as they come (`flowing`),
// a number a second (`paced`), or not at all until told (`paused`). What it reads and sends is
// recorded on the wire in the server's terms: a line the client read is one the server `send`s,
// a line the client wrote one the server `recv`s; `close` says who ended the connection.
// Lines are recorded when the client reads them, so a paused client's lines carry the time of
// its drain: the order is the wire's, the times are the client's.

import { connect, type NetConnectOpts, type Socket } from 'node:net';
import type { TranscriptEvent } from '../../../../../publisher/transcript.js';

/** The client's own read-ahead in user space: small, so that a client that does not read pushes back on TCP at once. */
const READ_AHEAD_BYTES = 4096;
const PACE_TICK_MS = 20;

export type ReadMode = { kind: 'flowing' } | { kind: 'paced'; perSecond: number } | { kind: 'paused' };

export class RawClient {
  private readonly socket: Socket;
  private carry = '';
  private readonly unread: string[] = [];
  private pace: NodeJS.Timeout | undefined;
  private isClosed = false;
  private endedBy: 'publisher' | 'consumer' | 'reset' | undefined;
  /** Settles when the connection is over, whoever ended it. */
  readonly closed: Promise<void>;
  /** Each line the client reads, after it is recorded. */
  onLine: (line: string) => void = () => {};
  /** Lines read so far. */
  linesRead = 0;

  private constructor(
    host: string,
    port: number,
    private readonly record: (event: TranscriptEvent) => void,
    mode: ReadMode,
  ) {
    // readableHighWaterMark reaches the socket's stream: Node reads ahead no more than this before it stops reading the kernel.
    this.socket = connect({ host, port, allowHalfOpen: true, readableHighWaterMark: READ_AHEAD_BYTES } as NetConnectOpts);
    this.socket.setNoDelay(true);
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.once('end', () => this.ended('publisher', 'closed'));
    this.socket.on('error', (error: NodeJS.ErrnoException) => this.ended(error.code === 'ECONNRESET' ? 'reset' : 'publisher', error.code ?? error.message));
    this.socket.once('close', () => this.ended('publisher', 'connection closed'));
    this.read(mode);
  }

  /** Connects; rejects when nothing accepts. */
  static open(host: string, port: number, record: (event: TranscriptEvent) => void, mode: ReadMode): Promise<RawClient> {
    const client = new RawClient(host, port, record, mode);
    return new Promise((resolve, reject) => {
      client.socket.once('connect', () => {
        record({ kind: 'open' });
        resolve(client);
      });
      client.socket.once('error', reject);
    });
  }

  get isOpen(): boolean {
    return !this.isClosed;
  }

  /** Who ended the connection, once it is over. */
  get endedByWhom(): 'publisher' | 'consumer' | 'reset' | undefined {
    return this.endedBy;
  }

  /** Writes a line (LF included); what is recorded is capped by the wire journal. */
  send(line: string): void {
    if (this.isClosed || this.socket.destroyed) return;
    this.record({ kind: 'recv', line });
    this.socket.write(line);
  }

  /** From now on, reads this way (a paused client starts reading; a paced one reads all). */
  read(mode: ReadMode): void {
    clearInterval(this.pace);
    this.pace = undefined;
    this.socket.removeAllListeners('data');
    if (mode.kind === 'flowing') {
      for (const line of this.unread.splice(0)) this.deliver(line);
      this.socket.on('data', (chunk: Buffer) => {
        for (const line of this.split(chunk)) this.deliver(line);
      });
      // A stream paused on purpose stays paused when a listener comes: resume it.
      this.socket.resume();
    } else if (mode.kind === 'paced') {
      this.socket.pause();
      let budget = 0;
      let last = performance.now();
      this.pace = setInterval(() => {
        const now = performance.now();
        budget = Math.min(budget + ((now - last) * mode.perSecond) / 1000, Math.max(1, mode.perSecond / 10));
        last = now;
        for (let line = this.nextLine(budget); line !== undefined && !this.isClosed; line = this.nextLine(budget)) {
          budget--;
          this.deliver(line);
        }
      }, PACE_TICK_MS);
    } else {
      this.socket.pause();
    }
  }

  /** Ends the connection from the client's side (recorded), and destroys it after `graceMs`. */
  close(reason: string, graceMs = 500): void {
    if (this.isClosed) return;
    this.ended('consumer', reason);
    this.socket.end();
    setTimeout(() => this.socket.destroy(), graceMs).unref();
  }

  private nextLine(budget: number): string | undefined {
    if (budget < 1) return undefined;
    while (this.unread.length === 0) {
      const chunk = this.socket.read() as Buffer | null;
      if (chunk === null) return undefined;
      this.unread.push(...this.split(chunk));
    }
    return this.unread.shift();
  }

  private split(chunk: Buffer): string[] {
    const text = this.carry + chunk.toString('utf8');
    const parts = text.split('\n');
    this.carry = parts.pop() ?? '';
    return parts.map((p) => `${p}\n`);
  }

  private deliver(line: string): void {
    this.linesRead++;
    this.record({ kind: 'send', line });
    this.onLine(line);
  }

  private ended(by: 'publisher' | 'consumer' | 'reset', reason: string): void {
    if (this.isClosed) return;
    // What reached the client before the server's end is read first (a paused or paced client's backlog).
    if (by !== 'consumer') {
      for (const line of this.unread.splice(0)) this.deliver(line);
      for (let chunk = this.socket.read() as Buffer | null; chunk !== null; chunk = this.socket.read() as Buffer | null)
        for (const line of this.split(chunk)) this.deliver(line);
    }
    this.isClosed = true;
    this.endedBy = by;
    clearInterval(this.pace);
    this.record({ kind: 'close', by, reason });
    if (by !== 'consumer') this.socket.destroy();
  }
}
