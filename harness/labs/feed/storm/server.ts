// The restart storm's server (issue 12): one listener per consumer process, so that every
// connection attempt is attributed to its process (an attempt closed at once never sends
// `subscribe`, so the client id cannot tell them apart). Each listener is either serving (it
// answers `subscribe` with the snapshot, or with the next event, and answers pings) or down
// (it accepts and closes at once, like a restarting server's load balancer). A round begins
// with `reset shutdown` on every served connection; each process's round ends, on its own,
// at the first attempt after `roundMs` once it has made `minAtCap` attempts at the cap (or at
// `maxAttempts`, or at `roundMaxMs`): that attempt is served. Everything goes to the transcript;
// the checker judges from it alone.

import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { encodeReset } from '../../../../protocol/feed/encode.js';
import { type ClientFrame, parseClientFrame } from '../../../../protocol/feed/frames.js';
import { type Listening, listenFor } from '../../../../publisher/listener.js';
import { endsOf, type TranscriptEvent, type TranscriptSink } from '../../../../publisher/transcript.js';

export interface StormRules {
  roundMs: number;
  roundMaxMs: number;
  /** Attempts whose nominal step is the cap that each process must make in a round. */
  minAtCap: number;
  /** Attempts before the cap: ceil(log2(CAP / BASE)). */
  preCapSteps: number;
  maxAttempts: number;
}

export interface StormServerOptions {
  processes: number;
  rules: StormRules;
  /** The answer to `cursor: null`, and the events served one per served connection (lines with their LF). */
  snapshot: string;
  events: string[];
  onTranscript: TranscriptSink;
  clock: () => number;
}

export const streamName = (k: number): string => `storm-${k}`;

class StormStream {
  private conns = 0;
  /** The connection served now, if any. */
  private open: { socket: Socket; conn: number } | undefined;
  down = false;
  private roundFrom = 0;
  private attempts = 0;
  /** Served connections (subscribe answered with data). */
  served = 0;
  private nextEvent = 0;

  constructor(
    readonly name: string,
    private readonly opts: StormServerOptions,
  ) {}

  private emit(conn: number, entry: TranscriptEvent): void {
    this.opts.onTranscript({ t: this.opts.clock(), stream: this.name, conn, ...entry });
  }

  accept(socket: Socket): void {
    const conn = ++this.conns;
    const ends = endsOf(socket);
    this.emit(conn, { kind: 'open', ...(ends ? { ends } : {}) });
    socket.on('error', () => {});
    if (this.down && !this.roundOver()) {
      this.attempts++;
      // Journaled before it happens: the journal stamps its own time, so a close stamped early
      // only lengthens the next measured wait, never shortens it.
      this.emit(conn, { kind: 'close', by: 'publisher', reason: 'the server is down: accepted and closed at once' });
      socket.destroy();
      return;
    }
    this.down = false;
    this.serve(socket, conn);
  }

  /** The round is over for this process once it has shown enough of its backoff. */
  private roundOver(): boolean {
    const { roundMs, roundMaxMs, minAtCap, preCapSteps, maxAttempts } = this.opts.rules;
    const elapsed = performance.now() - this.roundFrom;
    const atCap = this.attempts - preCapSteps;
    return (elapsed >= roundMs && atCap >= minAtCap) || this.attempts >= maxAttempts || elapsed >= roundMaxMs;
  }

  private serve(socket: Socket, conn: number): void {
    this.open = { socket, conn };
    let buffer = '';
    let subscribed = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > 1 << 20) buffer = buffer.slice(-4096); // an untrusted peer cannot grow it
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        this.emit(conn, { kind: 'recv', line });
        // Read as the contract's frame, whatever the order of its members (a Go map encodes them
        // sorted: `op` came fourth, and a pattern for `{"op":…` first took the subscribe for none).
        const frame = clientFrameOf(line);
        if (frame === undefined) {
          this.emit(conn, { kind: 'note', text: 'not a subscribe, ping or pong: ignored' });
          continue;
        }
        if (frame.op === 'subscribe' && !subscribed) {
          subscribed = true;
          const needsSnapshot = frame.cursor === null;
          const event = this.opts.events[Math.min(this.nextEvent, this.opts.events.length - 1)];
          const answer = needsSnapshot || event === undefined ? this.opts.snapshot : event;
          if (!needsSnapshot) this.nextEvent++;
          this.send(socket, conn, answer);
          this.served++;
        } else if (frame.op === 'ping') this.send(socket, conn, `{"op":"pong","id":${frame.id}}\n`);
      }
    });
    socket.once('close', () => {
      if (this.open?.socket === socket) this.open = undefined;
      this.emit(conn, { kind: 'close', by: 'consumer', reason: 'the consumer closed' });
    });
  }

  private send(socket: Socket, conn: number, line: string): void {
    this.emit(conn, { kind: 'send', line: line.trimEnd() });
    socket.write(line);
  }

  /** `reset shutdown` on the served connection, then down until this process's round is over. */
  beginRound(): void {
    this.down = true;
    this.roundFrom = performance.now();
    this.attempts = 0;
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    open.socket.removeAllListeners('close');
    const reset = encodeReset('shutdown');
    this.emit(open.conn, { kind: 'send', line: reset.trimEnd() });
    this.emit(open.conn, { kind: 'close', by: 'publisher', reason: 'reset shutdown: the server restarts' }); // before it happens (see accept)
    // Written, then closed at once: the line is in the kernel's buffer and goes out before the
    // FIN. (A graceful end() would leave the close to the consumer, and Toxiproxy passes the
    // close on only when both sides are done: the consumer would see the end late.)
    open.socket.write(reset);
    open.socket.destroy();
  }

  /** Served since the round began (or ever, before the first round). */
  get settled(): boolean {
    return !this.down && this.open !== undefined;
  }
}

export class StormServer {
  private constructor(
    private readonly listening: Listening<StormStream>[],
    private readonly opts: StormServerOptions,
  ) {}

  static async start(opts: StormServerOptions): Promise<StormServer> {
    const listening: Listening<StormStream>[] = [];
    const server = new StormServer(listening, opts);
    for (let k = 1; k <= opts.processes; k++) listening.push(await listenFor(new StormStream(streamName(k), opts), '127.0.0.1', 0));
    return server;
  }

  /** Host and port of process k's listener (1-based). */
  address(k: number): { host: string; port: number } {
    const l = this.listening[k - 1]!;
    return { host: l.host, port: l.port };
  }

  /** Every process holds a served connection (the round, if any, is over for all). */
  allSettled(): boolean {
    return this.listening.every((l) => l.stream.settled);
  }

  beginRound(): void {
    for (const l of this.listening) l.stream.beginRound();
  }

  get processes(): number {
    return this.opts.processes;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.listening.map(
        (l) =>
          new Promise<void>((resolve) => {
            for (const s of l.sockets) s.destroy();
            l.server.close(() => resolve());
          }),
      ),
    );
  }
}

/** A line as a client frame; undefined for an invalid one or an op the server does not know. */
function clientFrameOf(line: string): ClientFrame | undefined {
  try {
    const parsed = parseClientFrame(line);
    return parsed.kind === 'frame' ? parsed.frame : undefined;
  } catch {
    return undefined;
  }
}
