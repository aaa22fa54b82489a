// One TCP connection of a feed stream: `subscribe`, then a snapshot or a resume (revoke first
// when the consumer's block was abandoned), replay in pages, then live delivery, with
// heartbeats both ways. Frames wait in a bounded per-connection queue; when it overflows,
// everything pending is dropped and the consumer is told so with `reset slow-consumer`.

import type { Socket } from 'node:net';
import { encodePing, encodePong, encodeReset, encodeRevoke, encodeSnapshot } from '../../../protocol/feed/encode.js';
import { FrameError, type ResetReason, type SubscribeFrame, parseClientFrame } from '../../../protocol/feed/frames.js';
import { NdjsonSplitter } from '../../../protocol/feed/lines.js';
import { type CloseParty, endsOf, type TranscriptEvent } from '../../transcript.js';
import { type DeliverySteps, type DeliveryState, planDelivery, planSnapshot } from './delivery.js';
import type { ConnectionHeartbeat, ConnectionPolicy } from './policy.js';
import type { FeedMisbehaviour } from './misbehaviour.js';
import { encodeRealEvent, eventOf } from '../outbox/events.js';
import type { OutboxReader } from '../outbox/reader.js';
import type { OutboxRow } from '../outbox/schema.js';
import { comparePositions, cursorAt, type Position, positionAfterBlock, positionOf } from '../outbox/position.js';
import type { Cancel, Scheduler } from './scheduler.js';
import { FrameWriter, forTranscript } from './writer.js';

/**
 * Trigger points hold the connection until the returned promise settles, so a fault can be in
 * place before the traffic it targets (as the ledger stream's hooks do).
 */
export interface FeedStreamHooks {
  /** A `subscribe` arrived; `nth` counts the stream's subscribes from 1. */
  onSubscribe?(conn: number, nth: number, frame: SubscribeFrame): Promise<void> | void;
  /** A snapshot is about to be read (the connection already waits for events). */
  beforeSnapshot?(conn: number): Promise<void> | void;
  /** The snapshot was read at `cursor` and is about to be sent. */
  afterSnapshot?(conn: number, cursor: string): Promise<void> | void;
  /** The event at `cursor` is about to be written (before any misbehaviour at it). */
  beforeEvent?(conn: number, cursor: string): Promise<void> | void;
  /** The connection learnt of a reorganisation; `revoke` says whether it sends a revoke for it. */
  onReorg?(conn: number, reorg: { fromCursor: string; depth: number; deep: boolean; revoke: boolean }): Promise<void> | void;
  /**
   * An event or revoke frame is about to enter the connection's queue (a frame a reset drops
   * later was still queued). Synchronous: the server contract's fault points count frames here.
   */
  beforeQueue?(conn: number, op: 'event' | 'revoke', cursor: string): void;
}

export interface ConnectionSettings {
  queueLimit: number;
  pageSize: number;
  pingMs: number;
  idleMs: number;
  /** How long a closing connection waits for the consumer's FIN before destroying the socket. */
  lingerMs: number;
  hooks: FeedStreamHooks;
  misbehaviour: readonly FeedMisbehaviour[];
  /** The reference's steps, or a mutant's. */
  steps: DeliverySteps;
  /** The reference's answers to a misbehaving client, or a mutant's. */
  policy: ConnectionPolicy;
}

/** What a connection needs from its stream. */
export interface StreamContext {
  readonly reader: OutboxReader;
  readonly scheduler: Scheduler;
  readonly settings: ConnectionSettings;
  /** The connection each misbehaviour rule fired on: a rule fires once in the stream. */
  readonly misbehaviourFired: Map<FeedMisbehaviour, number>;
  record(conn: number, event: TranscriptEvent): void;
  /** Counts a subscribe on the stream; returns its number (from 1). */
  countSubscribe(): number;
}

/** A read position in words: a cursor, or the edge of a block (before its first log, after its last). */
function positionWords(chainId: number, at: Position): string {
  if (at.logIndex < 0) return `block ${at.block - 1}`;
  if (comparePositions(at, positionAfterBlock(at.block)) >= 0) return `block ${at.block}`;
  return cursorAt(chainId, at);
}

type State = 'awaiting-subscribe' | 'subscribing' | 'catching-up' | 'live' | 'closed';

export class FeedConnection {
  private readonly splitter = new NdjsonSplitter();
  private readonly heartbeat: ConnectionHeartbeat;
  private readonly writer: FrameWriter;
  private state: State = 'awaiting-subscribe';
  private topics: readonly string[] = [];
  private delivery: DeliveryState = { read: { block: 0, logIndex: -1 }, held: { block: 0, logIndex: -1 }, reorgSeen: 0 };
  /** An outbox change came while the writer was stalled: read it once the stall is over. */
  private missedWhileStalled = false;
  /** A read of the outbox is already queued: it will see every change made before it runs. */
  private advanceQueued = false;
  private nextPingId = 1;
  private cancelLinger: Cancel = () => {};
  /** After a `slow-consumer` reset: the half-closed socket stays while the consumer is heard from. */
  private lingerWhileHeard = false;
  /** Frames and outbox changes are handled one at a time, in order, even while a hook holds the connection. */
  private work: Promise<void> = Promise.resolve();

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    private readonly stream: StreamContext,
    tag: string | undefined,
  ) {
    socket.setNoDelay(true);
    const ends = endsOf(socket);
    this.record({ kind: 'open', ...(tag === undefined ? {} : { tag }), ...(ends ? { ends } : {}) });
    const { pingMs, idleMs, hooks, misbehaviour } = stream.settings;
    this.heartbeat = stream.settings.policy.heartbeat(stream.scheduler, { pingMs, idleMs }, { ping: () => this.ping(), idle: () => this.onIdle() });
    const { beforeEvent } = hooks;
    this.writer = new FrameWriter({
      id,
      socket,
      scheduler: stream.scheduler,
      misbehaviour,
      misbehaviourFired: stream.misbehaviourFired,
      ...(beforeEvent ? { beforeEvent: (cursor: string) => beforeEvent(id, cursor) } : {}),
      eventsBefore: (cursor, count) => stream.reader.read(() => stream.reader.eventsBefore(positionOf(cursor), this.topics, count)).map((row) => eventOf(row)),
      record: (event) => this.record(event),
      wrote: () => this.heartbeat.sent(),
      emptied: () => this.onQueueEmptied(),
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // Socket events queue behind the frames already received, so each is still handled and recorded.
    socket.on('end', () => this.enqueue(() => this.close('consumer', this.splitter.fragmentLength ? 'closed mid-line' : 'closed')));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      this.enqueue(() => this.close(error.code === 'ECONNRESET' ? 'reset' : 'consumer', error.code ?? error.message)),
    );
    socket.on('close', () => {
      this.cancelLinger();
      this.enqueue(() => this.close('consumer', 'connection closed'));
    });
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** The outbox changed: read what is new (live), or the next page when the queue is empty (catching up). */
  outboxChanged(): void {
    if (this.advanceQueued) return;
    this.advanceQueued = true;
    this.enqueue(() => {
      this.advanceQueued = false;
      return this.advance();
    });
  }

  /** Publisher stop: drop what is pending, say `reset shutdown`, close. */
  shutdown(): void {
    if (!this.closed) this.reset('shutdown', 'publisher shut down');
  }

  // --- input --------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    if (this.state === 'closed' && this.lingerWhileHeard) this.armLinger();
    this.heartbeat.received();
    const { lines, overflow } = this.splitter.push(chunk);
    for (const line of lines) this.enqueue(() => this.onLine(line));
    if (overflow) {
      this.stream.settings.policy.onBadFrame('line longer than the 1 MiB limit');
      this.enqueue(() => {
        this.record({ kind: 'recv', line: `…[${this.splitter.fragmentLength} bytes without LF]`, error: 'line longer than the 1 MiB limit' });
        this.close('publisher', 'line from consumer longer than the 1 MiB limit', true);
      });
    }
  }

  private enqueue(step: () => Promise<void> | void): void {
    this.work = this.work.then(step).catch((error: unknown) => this.close('publisher', `internal error: ${String(error)}`, true));
  }

  private async onLine(bytes: Buffer): Promise<void> {
    const text = `${bytes.toString('utf8')}\n`;
    let parsed: ReturnType<typeof parseClientFrame>;
    try {
      // A cursor of another chain is not malformed: it is answered with `reset stale-cursor` (planResume).
      parsed = parseClientFrame(bytes);
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      this.record({ kind: 'recv', line: forTranscript(text), error: error.reason });
      this.stream.settings.policy.onBadFrame(error.reason);
      return this.close('publisher', `invalid frame from consumer (${error.reason})`);
    }
    // Recorded even after our close: what the consumer said is evidence either way.
    this.record({ kind: 'recv', line: forTranscript(text) });
    if (this.closed) return;
    if (parsed.kind === 'unknown-op') return this.note(`unknown op ${JSON.stringify(parsed.op)} from consumer ignored`);
    const frame = parsed.frame;
    if (frame.op === 'ping') return this.writer.writeNow(encodePong(frame.id));
    if (frame.op === 'subscribe') return this.onSubscribe(frame);
  }

  // --- subscribe ------------------------------------------------------------------------

  private async onSubscribe(frame: SubscribeFrame): Promise<void> {
    if (this.state !== 'awaiting-subscribe') return this.close('publisher', 'second subscribe on one connection');
    this.state = 'subscribing';
    this.topics = frame.topics;
    const nth = this.stream.countSubscribe();
    await this.stream.settings.hooks.onSubscribe?.(this.id, nth, frame);
    if (this.closed) return;
    if (frame.cursor === null || frame.blockHash === null) await this.startFromSnapshot();
    else this.startFromCursor(frame.cursor, frame.blockHash);
    if (this.closed) return;
    this.state = 'catching-up';
    await this.advance();
  }

  // Subscribe, buffer, snapshot, release: the connection is registered before the snapshot is
  // read, and the outbox is its buffer. Whatever is appended meanwhile lies after the snapshot
  // cursor and is read from there, in order, once: not lost, not sent twice.
  private async startFromSnapshot(): Promise<void> {
    const { hooks } = this.stream.settings;
    await hooks.beforeSnapshot?.(this.id);
    if (this.closed) return;
    const plan = planSnapshot(this.stream.reader, this.topics);
    const cursor = cursorAt(this.stream.reader.chainId, plan.position);
    await hooks.afterSnapshot?.(this.id, cursor);
    if (this.closed) return;
    this.note(`snapshot at ${cursor} (the safe height)`);
    this.writer.push({ kind: 'frame', line: encodeSnapshot(cursor, plan.blockHash, plan.balances) });
    const follow = await this.stream.settings.steps.followFromSnapshot(this.stream.reader, this.topics, plan, {
      send: (rows) => this.queueEvents(rows),
      written: () => this.writer.written(),
    });
    if (this.closed) return;
    this.delivery = follow.state;
  }

  private queueEvents(rows: readonly OutboxRow[]): void {
    for (const row of rows) {
      if (this.closed) return;
      const event = eventOf(row);
      this.stream.settings.hooks.beforeQueue?.(this.id, 'event', event.cursor);
      this.writer.push({ kind: 'event', event, line: encodeRealEvent(event) });
    }
  }

  private startFromCursor(cursor: string, blockHash: string): void {
    const plan = this.stream.settings.steps.resume(this.stream.reader, cursor, blockHash, this.topics);
    if (plan.kind !== 'replay') {
      const why = plan.kind === 'untraceable' ? plan.why : `retention deleted ${cursorAt(this.stream.reader.chainId, plan.pruned)} of ${plan.account}`;
      this.reset('stale-cursor', `stale cursor ${cursor}: ${why}`);
      return;
    }
    this.delivery = { read: plan.from, held: plan.from, reorgSeen: plan.reorgSeen };
    if (plan.revokeFromBlock !== undefined) {
      const fromCursor = cursorAt(this.stream.reader.chainId, { block: plan.revokeFromBlock, logIndex: 0 });
      this.note(`revoke from ${fromCursor} at subscribe: ${plan.why}`);
      this.stream.settings.hooks.beforeQueue?.(this.id, 'revoke', fromCursor);
      this.writer.push({ kind: 'frame', line: encodeRevoke(fromCursor) });
    }
  }

  // --- delivery -------------------------------------------------------------------------

  private async advance(): Promise<void> {
    if (this.state !== 'catching-up' && this.state !== 'live') return;
    if (this.writer.stalled) {
      this.missedWhileStalled = true;
      return;
    }
    const live = this.state === 'live';
    // Replay is paced by the consumer: the next page is read once the queue has drained.
    if (!live && this.writer.length > 0) return;
    const { reader, settings } = this.stream;
    const from = this.delivery.read;
    const step = planDelivery(reader, this.delivery, this.topics, Math.min(settings.pageSize, settings.queueLimit), live, settings.steps.page);
    this.delivery = step.state;
    for (const { reorg, revoke } of step.reorgs) {
      const fromCursor = cursorAt(reader.chainId, { block: reorg.forkNumber, logIndex: 0 });
      await settings.hooks.onReorg?.(this.id, { fromCursor, depth: reorg.depth, deep: reorg.deep, revoke });
      if (this.closed) return;
      this.note(`reorg from ${fromCursor} (depth ${reorg.depth}${reorg.deep ? ', deep' : ''}): ${revoke ? 'revoke' : 'nothing sent here yet, no revoke'}`);
      if (!revoke) continue;
      settings.hooks.beforeQueue?.(this.id, 'revoke', fromCursor);
      this.writer.push({ kind: 'frame', line: encodeRevoke(fromCursor) });
    }
    if (step.stale) {
      const pruned = cursorAt(reader.chainId, step.stale.pruned);
      return this.reset('stale-cursor', `fell behind retention: ${pruned} of ${step.stale.account} deleted before it was read`);
    }
    if (!live) this.note(`replay page: ${step.rows.length} events after ${positionWords(reader.chainId, from)}`);
    for (const row of step.rows) {
      const event = eventOf(row);
      settings.hooks.beforeQueue?.(this.id, 'event', event.cursor);
      this.writer.push({ kind: 'event', event, line: encodeRealEvent(event) });
      // Only a consumer that is not reading overflows the queue (the socket wants a drain):
      // frames held by a trigger hook are our own doing.
      if (live && this.writer.length > settings.queueLimit && this.writer.backedUp && settings.policy.onOverflow(this.writer) === 'reset') {
        return this.reset('slow-consumer', `slow consumer: ${this.writer.length} frames pending, limit ${settings.queueLimit}`);
      }
    }
    if (!live && step.caughtUp) {
      this.state = 'live';
      this.note(`caught up at block ${step.state.read.block}: live`);
    }
  }

  private onQueueEmptied(): void {
    if (this.state === 'catching-up' || this.missedWhileStalled) {
      this.missedWhileStalled = false;
      this.outboxChanged();
    }
  }

  // --- heartbeats and closing -----------------------------------------------------------

  private ping(): void {
    if (!this.closed && !this.writer.stalled) this.writer.writeNow(encodePing(this.nextPingId++));
  }

  private onIdle(): void {
    this.close('publisher', `idle: nothing received for ${this.stream.settings.idleMs} ms`, true);
  }

  /** Drops everything pending, sends `reset`, closes: the consumer must start over from its store. */
  private reset(reason: ResetReason, why: string): void {
    // A slow consumer reads this reset only once it has worked through what it already holds.
    // Keep the socket open (sending nothing more) until it closes its side, or falls silent for
    // the idle time: a close now would travel through Toxiproxy, which closes both ways, and the
    // consumer's next ping would draw a TCP reset that discards the frame before it is read.
    this.lingerWhileHeard = reason === 'slow-consumer';
    this.writer.drop();
    this.writer.writeNow(encodeReset(reason));
    this.close('publisher', why);
  }

  private note(text: string): void {
    this.record({ kind: 'note', text });
  }

  private record(event: TranscriptEvent): void {
    this.stream.record(this.id, event);
  }

  close(by: CloseParty, reason: string, destroy = false): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.writer.close();
    this.heartbeat.stop();
    this.record({ kind: 'close', by, reason });
    if (destroy || by !== 'publisher') {
      this.socket.destroy();
      return;
    }
    // A half-close lets the consumer read our last frame; a consumer that never closes its side is cut off.
    if (!this.lingerWhileHeard) this.socket.end();
    this.armLinger();
  }

  private armLinger(): void {
    this.cancelLinger();
    const { lingerMs, idleMs } = this.stream.settings;
    this.cancelLinger = this.stream.scheduler.after(this.lingerWhileHeard ? Math.max(lingerMs, idleMs) : lingerMs, () => this.socket.destroy());
  }
}
