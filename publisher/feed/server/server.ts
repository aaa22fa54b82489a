// The feed push server: one loopback listener per named stream, all reading the same outbox
// database and nothing else. It learns that the outbox changed from `outboxChanged()` (the
// indexer in the same process) or by polling SQLite's data_version (any other writer).

import { performance } from 'node:perf_hooks';
import { type Listening, listenFor } from '../../listener.js';
import type { TranscriptSink } from '../../transcript.js';
import { OutboxReader } from '../outbox/reader.js';
import { type Cancel, type Scheduler, realScheduler } from './scheduler.js';
import { FeedStream, type FeedStreamConfig } from './stream.js';

export interface FeedPublisherOptions {
  /** The outbox database the indexer writes. */
  outboxPath: string;
  /** One listener each; names must be unique. */
  streams: readonly FeedStreamConfig[];
  host?: string;
  /** Fixed listen ports by stream name; others get an ephemeral port. */
  ports?: Record<string, number>;
  /** Monotonic clock for transcript timestamps (ms); default performance.now(). */
  clock?: () => number;
  /** Timers for heartbeats, idle timeouts, stalls, lingering closes and polling; default real time. */
  scheduler?: Scheduler;
  onTranscript?: TranscriptSink;
  /** Poll the database for commits by other processes this often (default: no polling). */
  pollMs?: number;
  /** Rows per replay page, at most 1000 (default 1000). */
  pageSize?: number;
}

export interface ListeningFeedStream {
  stream: FeedStream;
  host: string;
  port: number;
}

type Listener = Listening<FeedStream>;

export class FeedPublisher {
  private stopPolling: Cancel = () => {};
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly reader: OutboxReader,
    private readonly listeners: Map<string, Listener>,
  ) {}

  static async start(options: FeedPublisherOptions): Promise<FeedPublisher> {
    const host = options.host ?? '127.0.0.1';
    const clock = options.clock ?? (() => performance.now());
    const scheduler = options.scheduler ?? realScheduler;
    const sink = options.onTranscript ?? (() => {});
    const reader = new OutboxReader(options.outboxPath);
    const listeners = new Map<string, Listener>();
    const publisher = new FeedPublisher(reader, listeners);
    try {
      for (const config of options.streams) {
        if (listeners.has(config.name)) throw new Error(`duplicate stream name ${config.name}`);
        const stream = new FeedStream(config, reader, scheduler, clock, sink, options.pageSize);
        listeners.set(config.name, await listenFor(stream, host, options.ports?.[config.name] ?? 0));
      }
    } catch (error) {
      await publisher.close();
      throw error;
    }
    if (options.pollMs !== undefined) publisher.poll(scheduler, options.pollMs);
    return publisher;
  }

  stream(name: string): ListeningFeedStream {
    const entry = this.listeners.get(name);
    if (!entry) throw new Error(`no stream named ${name}`);
    return entry;
  }

  get streamNames(): string[] {
    return [...this.listeners.keys()];
  }

  /** The outbox changed: every connection of every stream reads what is new for it. */
  outboxChanged(): void {
    if (this.closing) return;
    for (const { stream } of this.listeners.values()) stream.outboxChanged();
  }

  /**
   * Stops listening, sends `reset shutdown` on every connection and waits (at most `graceMs`
   * of real time) for the consumers to close their side before cutting them off.
   */
  close(graceMs = 2000): Promise<void> {
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.stopPolling();
    const entries = [...this.listeners.values()];
    for (const { stream } of entries) stream.shutdown();
    const allClosed = Promise.all(
      entries.map(
        ({ server }) =>
          new Promise<void>((resolve) => {
            if (!server.listening) return resolve();
            server.close(() => resolve());
          }),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([allClosed, grace]);
    clearTimeout(timer);
    for (const { sockets } of entries) for (const socket of sockets) socket.destroy();
    await allClosed;
    this.reader.close();
  }

  private poll(scheduler: Scheduler, pollMs: number): void {
    let seen = this.reader.dataVersion();
    const tick = () => {
      const version = this.reader.dataVersion();
      if (version !== seen) {
        seen = version;
        this.outboxChanged();
      }
      this.stopPolling = scheduler.after(pollMs, tick);
    };
    this.stopPolling = scheduler.after(pollMs, tick);
  }
}
