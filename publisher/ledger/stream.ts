// One consumer's stream of the script: its own retention, window, redelivery and trigger
// points, kept across that consumer's connections (a broker remembers what was acknowledged;
// a connection does not). The control consumer and the consumer under test each get one.

import type { Socket } from 'node:net';
import { LineSplitter, MalformedLine, encodeEvent, encodeResync, parseConsumerLine } from '../../protocol/ledger/wire.js';
import { type LogEvent, ResyncRequired, RetentionLog } from './log.js';
import { type Misbehaviour, stepsAt, waitsForAcks } from './misbehaviour.js';
import { type CloseParty, endsOf, type TranscriptEvent, type TranscriptSink } from '../transcript.js';

/**
 * Trigger points hold the stream until the returned promise settles, so a fault can be in
 * place before the traffic it targets — never a race with an HTTP call to Toxiproxy.
 */
export interface StreamHooks {
  onResume?(conn: number, cursor: number): Promise<void> | void;
  beforeEvent?(conn: number, seq: number): Promise<void> | void;
  onAck?(conn: number, seq: number): Promise<void> | void;
}

export interface StreamConfig {
  name: string;
  events: readonly LogEvent[];
  /** First seq still held by the log (default 0). */
  retentionStart?: number;
  /** At most this many unacknowledged events in flight (default 16, the seed's batch limit). */
  window?: number;
  /** On RESUME, resend events sent before but never acknowledged, before new ones. */
  redeliverUnacked?: boolean;
  /** How long to wait for an owed ACK when nothing more can be sent (window full, or all sent), before closing anyway. */
  ackDeadlineMs?: number;
  hooks?: StreamHooks;
  /** Deliberate misbehaviour, anchored to EVENT seqs on given connections. */
  misbehaviour?: readonly Misbehaviour[];
  /** Retention moves forward to `to` when connection number `connection` opens (the consumer was away). */
  retentionMoves?: readonly { connection: number; to: number }[];
  /** Forget acknowledged events, as real brokers do: retention moves past every acknowledged prefix. */
  forgetAcked?: boolean;
}

export class PublisherStream {
  readonly name: string;
  readonly log: RetentionLog;
  readonly acked = new Set<number>();
  private readonly sentEver = new Set<number>();
  private readonly window: number;
  private readonly redeliverUnacked: boolean;
  private readonly ackDeadlineMs: number;
  private readonly hooks: StreamHooks;
  private readonly misbehaviour: readonly Misbehaviour[];
  private readonly retentionMoves: readonly { connection: number; to: number }[];
  private readonly forgetAcked: boolean;
  private readonly connections = new Set<Connection>();
  private nextConn = 1;
  /** Set by whoever starts consumers (e.g. "incarnation 2"); stamped on each new connection. */
  tag: string | undefined;
  /** A RESUME was answered with RESYNC: its log no longer holds what that consumer needs. */
  resynced = false;

  constructor(
    config: StreamConfig,
    private readonly clock: () => number,
    private readonly sink: TranscriptSink,
  ) {
    this.name = config.name;
    this.log = new RetentionLog(config.events, config.retentionStart ?? 0);
    this.window = config.window ?? 16;
    if (!(Number.isInteger(this.window) && this.window >= 1)) throw new Error(`stream ${this.name}: window must be a positive integer`);
    this.redeliverUnacked = config.redeliverUnacked ?? false;
    this.ackDeadlineMs = config.ackDeadlineMs ?? 5000;
    this.hooks = config.hooks ?? {};
    this.misbehaviour = config.misbehaviour ?? [];
    this.retentionMoves = config.retentionMoves ?? [];
    this.forgetAcked = config.forgetAcked ?? false;
  }

  /** Takes over an accepted socket for the rest of its life. */
  accept(socket: Socket): void {
    const id = this.nextConn++;
    for (const move of this.retentionMoves.filter((m) => m.connection === id)) this.moveRetention(id, move.to, 'the consumer was away');
    const conn = new Connection(id, socket, this);
    this.connections.add(conn);
    socket.once('close', () => this.connections.delete(conn));
  }

  /** Destroys every open connection (publisher shutdown). */
  destroyAll(): void {
    for (const conn of this.connections) conn.close('publisher', 'publisher shut down', true);
  }

  // --- used by Connection ---------------------------------------------------------------

  record(conn: number, event: TranscriptEvent): void {
    this.sink({ t: this.clock(), stream: this.name, conn, ...event });
  }

  /** What a RESUME <cursor> is answered with: redelivered unacknowledged events, then the rest. */
  plan(cursor: number): LogEvent[] {
    const fresh = this.log.replay(cursor);
    if (!this.redeliverUnacked) return fresh;
    const redeliver = [...this.sentEver]
      .filter((seq) => seq <= cursor && !this.acked.has(seq))
      .sort((a, b) => a - b)
      .map((seq) => this.log.get(seq))
      .filter((e): e is LogEvent => e !== undefined);
    return [...redeliver, ...fresh];
  }

  markSent(seq: number): void {
    this.sentEver.add(seq);
  }

  markAcked(conn: number, seq: number): void {
    this.acked.add(seq);
    if (!this.forgetAcked) return;
    // The log never becomes empty: its last item stays even when acknowledged.
    let first = this.log.first;
    while (this.acked.has(first) && first < this.log.last) first++;
    if (first > this.log.first) this.moveRetention(conn, first, 'acknowledged events are forgotten');
  }

  /** The highest cursor a consumer resumed from: it holds every event up to it, durably. */
  private resumedTo = -1;

  noteResume(cursor: number): void {
    this.resumedTo = Math.max(this.resumedTo, cursor);
  }

  /**
   * True when every event from the retention start on has been acknowledged, or lies at or below
   * a cursor a consumer resumed from (an event committed whose ACK was lost is never sent again
   * without redelivery, so it is never acknowledged again).
   */
  get complete(): boolean {
    for (let seq = this.log.first; seq <= this.log.last; seq++) if (!this.acked.has(seq) && seq > this.resumedTo) return false;
    return true;
  }

  private moveRetention(conn: number, to: number, why: string): void {
    if (to <= this.log.first) return;
    this.log.moveStart(to);
    this.record(conn, { kind: 'note', text: `retention moved to ${to} (${why})` });
  }

  get settings() {
    return { window: this.window, ackDeadlineMs: this.ackDeadlineMs, hooks: this.hooks, misbehaviour: this.misbehaviour };
  }
}

/** One TCP connection of a stream: RESUME, then events within the window, then a clean close. */
class Connection {
  private readonly splitter = new LineSplitter();
  private state: 'awaiting-resume' | 'streaming' | 'silent' | 'closed' = 'awaiting-resume';
  /** What is left to send: `pending` from `next` on (an index: shift() on a 100 000-event array is quadratic). */
  private pending: LogEvent[] = [];
  private next = 0;
  private readonly inflight = new Set<number>();
  private pumping = false;
  private corked = false;
  private ackDeadline: NodeJS.Timeout | undefined;
  /** Why the connection closes once the last ACK is in (default: all events acknowledged). */
  private closeReason = 'all events acknowledged';
  /** Lines are handled one at a time, in order, even when a hook holds the stream. */
  private work: Promise<void> = Promise.resolve();

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    private readonly stream: PublisherStream,
  ) {
    socket.setNoDelay(true);
    const ends = endsOf(socket);
    stream.record(id, { kind: 'open', ...(stream.tag === undefined ? {} : { tag: stream.tag }), ...(ends ? { ends } : {}) });
    socket.on('data', (chunk: Buffer) => {
      const { lines, overflow } = this.splitter.push(chunk);
      for (const line of lines) this.enqueue(() => this.onLine(line));
      if (overflow) this.enqueue(() => this.onLine(overflow));
    });
    // Socket events queue behind the lines already received, so every ACK that arrived before
    // a close or a reset is still handled and recorded.
    socket.on('end', () => this.enqueue(() => this.close('consumer', this.splitter.fragment.length ? 'closed mid-line' : 'closed')));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      this.enqueue(() => this.close(error.code === 'ECONNRESET' ? 'reset' : 'consumer', error.code ?? error.message)),
    );
    socket.on('close', () => this.enqueue(() => this.close('consumer', 'connection closed')));
  }

  private enqueue(step: () => Promise<void> | void): void {
    this.work = this.work.then(step).catch((error: unknown) => this.close('publisher', `internal error: ${String(error)}`, true));
  }

  private async onLine(bytes: Buffer): Promise<void> {
    const text = bytes.toString('latin1');
    let line: ReturnType<typeof parseConsumerLine>;
    try {
      line = parseConsumerLine(bytes);
    } catch (error) {
      if (!(error instanceof MalformedLine)) throw error;
      this.stream.record(this.id, { kind: 'recv', line: text, error: error.reason });
      return this.close('publisher', `malformed line from consumer (${error.reason})`);
    }
    // Recorded even after our close: what the consumer said is evidence either way.
    this.stream.record(this.id, { kind: 'recv', line: text });
    if (this.state === 'closed') return;
    if (line.kind === 'resume') return this.onResume(line.last);
    return this.onAck(line.seq);
  }

  private async onResume(cursor: number): Promise<void> {
    if (this.state !== 'awaiting-resume') return this.close('publisher', 'second RESUME on one connection');
    this.stream.noteResume(cursor);
    await this.stream.settings.hooks.onResume?.(this.id, cursor);
    try {
      this.pending = this.stream.plan(cursor);
      this.next = 0;
    } catch (error) {
      if (!(error instanceof ResyncRequired)) throw error;
      this.stream.resynced = true;
      this.send(encodeResync(error.firstAvailable));
      return this.close('publisher', `resync required: ${error.message}`);
    }
    this.state = 'streaming';
    await this.pump();
  }

  private async onAck(seq: number): Promise<void> {
    if (this.state === 'awaiting-resume') return this.close('publisher', `ACK ${seq} before RESUME`);
    this.inflight.delete(seq);
    this.stream.markAcked(this.id, seq);
    await this.stream.settings.hooks.onAck?.(this.id, seq);
    await this.pump();
  }

  /** Sends while the window allows; closes once everything sent was acknowledged. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      const { window, hooks, misbehaviour } = this.stream.settings;
      while (this.state === 'streaming' && this.inflight.size < window && this.next < this.pending.length) {
        // Resumed by the ACK that empties the window (pump runs again on every ACK).
        if (this.inflight.size > 0 && waitsForAcks(misbehaviour, this.id, this.pending[this.next]!.seq)) break;
        const event = this.pending[this.next++]!;
        await hooks.beforeEvent?.(this.id, event.seq);
        for (const step of stepsAt(misbehaviour, this.id, event.seq)) {
          if (this.state !== 'streaming') return;
          if ('stop' in step) {
            if (step.stop === 'close') {
              // Nothing more is sent; the close still waits for the ACKs already owed.
              this.next = this.pending.length;
              this.closeReason = `misbehaviour: close at EVENT ${event.seq}`;
              break;
            }
            this.state = 'silent';
            return this.stream.record(this.id, { kind: 'note', text: `misbehaviour: silent from EVENT ${event.seq} on, connection kept open` });
          }
          if (step.send === 'bytes') {
            this.send(step.bytes, step.note);
            continue;
          }
          this.inflight.add(event.seq);
          this.stream.markSent(event.seq);
          this.send(encodeEvent(event.seq, event.delta));
        }
      }
    } finally {
      this.pumping = false;
      // On every way out — window full, all sent, silent, closed — so no deadline outlives its state.
      this.awaitAcks();
    }
  }

  // No ACK may be needed after our close (a proxy may turn a half-close into a full close),
  // so we close only once the last ACK is in. While ACKs are owed and nothing more can be
  // sent (window full, a misbehaviour waiting, or everything sent), the stated deadline runs
  // from the last progress: a consumer that stops acknowledging is not waited for forever.
  private awaitAcks(): void {
    clearTimeout(this.ackDeadline);
    if (this.state !== 'streaming') return;
    if (this.inflight.size === 0) {
      if (this.next === this.pending.length) this.close('publisher', this.closeReason);
      return;
    }
    const { ackDeadlineMs } = this.stream.settings;
    this.ackDeadline = setTimeout(() => {
      if (this.state === 'streaming') this.close('publisher', `ack deadline (${ackDeadlineMs} ms) passed without ACK ${[...this.inflight].join(', ')}`);
    }, ackDeadlineMs);
  }

  private send(line: string, note?: string): void {
    this.stream.record(this.id, { kind: 'send', line, ...(note ? { note } : {}) });
    // What one turn sends (the events that the ACKs of one read free) leaves in one write(2):
    // a write a line cost the publisher more than the rest of its work.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(line, 'latin1');
  }

  close(by: CloseParty, reason: string, destroy = false): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.ackDeadline);
    this.stream.record(this.id, { kind: 'close', by, reason });
    if (destroy || by !== 'publisher') this.socket.destroy();
    else this.socket.end();
  }
}
