// A probe's line relay: the harness's own listener between a probe and its Toxiproxy proxy. It
// forwards bytes both ways unchanged, as they come, and reports every complete line it saw in
// the publisher's transcript terms (`recv`: the probe to the server, `send`: the server to the
// probe), so the probe's wire record is what the probe really got, whatever server it talks to.
// It also lets the harness lead the probe's next connections to another proxy (another instance)
// without the probe noticing: it keeps connecting to the same address.

import { createServer, type Server, type Socket, connect } from 'node:net';
import type { TranscriptEvent } from '../../../../../publisher/transcript.js';
import type { HostPort } from '../../../../toxiproxy/adapter.js';

/** Longest line recorded whole; the rest of a longer one is counted, not kept (the bytes still flow). */
const MAX_LINE_BYTES = 1 << 20;

export interface RelayTarget extends HostPort {
  /** Written on each connection's `open` (`tag`): which server instance it leads to. */
  tag: string;
}

/** What the relay reports: a connection's events, numbered from 1 per relay. */
export type RelaySink = (conn: number, event: TranscriptEvent) => void;

/** Splits a byte stream into lines (without their LF); what is left is the unfinished one. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private length = 0;
  private dropped = 0;

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let lf = chunk.indexOf(10, start); lf >= 0; lf = chunk.indexOf(10, start)) {
      this.keep(chunk.subarray(start, lf));
      lines.push(this.take());
      start = lf + 1;
    }
    this.keep(chunk.subarray(start));
    return lines;
  }

  /** Bytes of an unfinished line. */
  get pending(): number {
    return this.length + this.dropped;
  }

  private keep(bytes: Buffer): void {
    const room = Math.max(0, MAX_LINE_BYTES - this.length);
    if (bytes.length > room) this.dropped += bytes.length - room;
    if (room > 0 && bytes.length > 0) {
      this.parts.push(bytes.subarray(0, room));
      this.length += Math.min(room, bytes.length);
    }
  }

  private take(): string {
    const text = Buffer.concat(this.parts, this.length).toString('utf8');
    const cut = this.dropped;
    this.parts = [];
    this.length = 0;
    this.dropped = 0;
    return cut > 0 ? `${text}…[${cut} more bytes]` : text;
  }
}

export class LineRelay {
  private nextConn = 1;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private target: RelayTarget,
    private readonly sink: RelaySink,
  ) {}

  /** Listens on an ephemeral loopback port, leading every connection to `target`. */
  static async start(target: RelayTarget, sink: RelaySink): Promise<LineRelay> {
    const server = createServer();
    const relay = new LineRelay(server, target, sink);
    server.on('connection', (socket) => relay.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return relay;
  }

  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('the relay is not listening');
    return address.port;
  }

  get current(): RelayTarget {
    return this.target;
  }

  /** Later connections go to `target`; open ones stay where they are. */
  repoint(target: RelayTarget): void {
    this.target = target;
  }

  /** Stops listening and cuts every connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** A probe connected: reach the target first; a refused target closes the probe's socket, unrecorded. */
  private accept(probe: Socket): void {
    this.track(probe);
    probe.pause();
    const { host, port, tag } = this.target;
    const upstream = connect({ host, port });
    this.track(upstream);
    const early = () => {
      probe.destroy();
      upstream.destroy();
    };
    probe.once('error', early);
    upstream.once('error', early);
    upstream.once('connect', () => {
      probe.off('error', early);
      upstream.off('error', early);
      this.pipe(this.nextConn++, probe, upstream, tag);
    });
  }

  private pipe(conn: number, probe: Socket, upstream: Socket, tag: string): void {
    probe.setNoDelay(true);
    upstream.setNoDelay(true);
    this.sink(conn, { kind: 'open', tag });
    let closed = false;
    const close = (by: 'publisher' | 'consumer' | 'reset', reason: string) => {
      if (closed) return;
      closed = true;
      this.sink(conn, { kind: 'close', by, reason });
    };
    const fromProbe = new LineSplitter();
    const fromServer = new LineSplitter();
    probe.on('data', (chunk: Buffer) => {
      for (const line of fromProbe.push(chunk)) this.sink(conn, { kind: 'recv', line: `${line}\n` });
      // The probe's pace is the server's: a full socket pauses the other side, as a direct connection would.
      if (!upstream.write(chunk)) probe.pause();
    });
    upstream.on('drain', () => probe.resume());
    probe.on('drain', () => upstream.resume());
    upstream.on('data', (chunk: Buffer) => {
      for (const line of fromServer.push(chunk)) this.sink(conn, { kind: 'send', line: `${line}\n` });
      if (!probe.write(chunk)) upstream.pause();
    });
    const midLine = (s: LineSplitter) => (s.pending > 0 ? ` (${s.pending} bytes of an unfinished line)` : '');
    // An end travels on as an end (a half-close), so a `reset` followed by a FIN reaches the probe whole.
    probe.on('end', () => {
      close('consumer', `closed${midLine(fromProbe)}`);
      upstream.end();
    });
    upstream.on('end', () => {
      close('publisher', `closed${midLine(fromServer)}`);
      probe.end();
    });
    const onError = (side: 'publisher' | 'consumer') => (error: NodeJS.ErrnoException) => {
      close(error.code === 'ECONNRESET' ? 'reset' : side, error.code ?? error.message);
      probe.destroy();
      upstream.destroy();
    };
    probe.on('error', onError('consumer'));
    upstream.on('error', onError('publisher'));
    const bothGone = () => {
      if (probe.destroyed && upstream.destroyed) close('consumer', 'connection closed');
    };
    probe.on('close', () => {
      if (!upstream.writableEnded) upstream.end();
      bothGone();
    });
    upstream.on('close', () => {
      if (!probe.writableEnded) probe.end();
      bothGone();
    });
    probe.resume();
  }
}
