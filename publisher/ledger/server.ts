// The scripted publisher: one loopback TCP listener per stream, so each consumer (control or
// under test) has its own stream of the same script, cursor, retention and misbehaviour.

import { performance } from 'node:perf_hooks';
import { PublisherStream, type StreamConfig } from './stream.js';
import { type Listening, listenFor } from '../listener.js';
import type { TranscriptSink } from '../transcript.js';

export interface PublisherOptions {
  host?: string;
  /** Fixed listen ports by stream name; others get an ephemeral port. */
  ports?: Record<string, number>;
  /** Monotonic clock for transcript timestamps (ms); default performance.now(). */
  clock?: () => number;
  onTranscript?: TranscriptSink;
}

export interface ListeningStream {
  stream: PublisherStream;
  host: string;
  port: number;
}

export class Publisher {
  private constructor(private readonly listeners: Map<string, Listening<PublisherStream>>) {}

  /** Starts one listener per stream, each on an ephemeral port. */
  static async start(configs: StreamConfig[], options: PublisherOptions = {}): Promise<Publisher> {
    const host = options.host ?? '127.0.0.1';
    const clock = options.clock ?? (() => performance.now());
    const sink = options.onTranscript ?? (() => {});
    const listeners = new Map<string, Listening<PublisherStream>>();
    const publisher = new Publisher(listeners);
    try {
      for (const config of configs) {
        if (listeners.has(config.name)) throw new Error(`duplicate stream name ${config.name}`);
        const stream = new PublisherStream(config, clock, sink);
        listeners.set(config.name, await listenFor(stream, host, options.ports?.[config.name] ?? 0));
      }
    } catch (error) {
      await publisher.close();
      throw error;
    }
    return publisher;
  }

  stream(name: string): ListeningStream {
    const entry = this.listeners.get(name);
    if (!entry) throw new Error(`no stream named ${name}`);
    return entry;
  }

  /** Stops listening and destroys every open connection. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.listeners.values()].map(
        ({ stream, server, sockets }) =>
          new Promise<void>((resolve) => {
            stream.destroyAll();
            for (const socket of sockets) socket.destroy();
            if (!server.listening) return resolve();
            server.close(() => resolve());
          }),
      ),
    );
  }
}
