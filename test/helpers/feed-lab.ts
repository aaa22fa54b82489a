// Shared rig for the feed server tests: the lab on a fresh outbox file, a small NDJSON test
// client over real loopback TCP that checks every frame with the strict codec, and a model of
// what a correct consumer's store holds after a list of frames (contract section 4). Not a
// test file itself (.taprc runs test/**/*.test.ts).

import { type Socket, connect } from 'node:net';
import { join } from 'node:path';
import type { Test } from 'tap';
import { compareCursors, parseCursor } from '../../protocol/feed/cursor.js';
import { encodeSubscribe } from '../../protocol/feed/encode.js';
import { FrameError, type ServerFrame, type TransferPayload, parseServerFrame } from '../../protocol/feed/frames.js';
import { NdjsonSplitter } from '../../protocol/feed/lines.js';
import type { SimChain } from '../../publisher/feed/chain/chain.js';
import { type FeedLab, type FeedLabOptions, startFeedLab } from '../../publisher/feed/lab.js';
import type { TranscriptEntry } from '../../publisher/transcript.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `condition` until true; fails with `what` after `ms` (generous: these are liveness checks, not timings). */
export async function waitFor(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export interface Rig extends FeedLab {
  outboxPath: string;
  transcript: TranscriptEntry[];
  port(stream?: string): number;
  /** Notes the publisher wrote on one stream, in order. */
  notes(stream?: string): string[];
}

export async function startRig(t: Test, options: Partial<FeedLabOptions> & { seed?: number }): Promise<Rig> {
  const transcript: TranscriptEntry[] = [];
  const { seed = 1, ...rest } = options;
  // One testdir per test: tap empties it again on every t.testdir() call.
  const outboxPath = join(t.testdir(), 'outbox.db');
  const lab = await startFeedLab({
    chain: { seed, confirmations: 3, logsPerBlock: { min: 1, max: 4 } },
    outboxPath,
    streams: [{ name: 'main' }],
    onTranscript: (entry) => transcript.push(entry),
    ...rest,
  });
  t.teardown(() => lab.close(500));
  return {
    ...lab,
    outboxPath,
    close: (graceMs?: number) => lab.close(graceMs),
    transcript,
    port: (stream = 'main') => lab.publisher.stream(stream).port,
    notes: (stream = 'main') => transcript.filter((e) => e.stream === stream && e.kind === 'note').map((e) => (e as { text: string }).text),
  };
}

/** A test consumer: sends lines, parses every received line strictly, keeps them all. */
export class FeedClient {
  readonly lines: string[] = [];
  /** Each received line, parsed; an invalid one as its FrameError, an unknown op as `{ unknownOp }`. */
  readonly frames: (ServerFrame | FrameError | { unknownOp: string })[] = [];
  readonly closed: Promise<void>;
  private readonly splitter = new NdjsonSplitter();

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const line of this.splitter.push(chunk).lines) {
        this.lines.push(line.toString('utf8'));
        try {
          const parsed = parseServerFrame(line);
          this.frames.push(parsed.kind === 'frame' ? parsed.frame : { unknownOp: parsed.op });
        } catch (error) {
          if (!(error instanceof FrameError)) throw error;
          this.frames.push(error);
        }
      }
    });
    this.closed = new Promise((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
  }

  static open(port: number): Promise<FeedClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new FeedClient(socket)));
      socket.once('error', reject);
    });
  }

  static async subscribe(port: number, topics: readonly string[], cursor: string | null = null, blockHash: string | null = null): Promise<FeedClient> {
    const client = await FeedClient.open(port);
    client.send(encodeSubscribe({ client: 'c1', topics, cursor, blockHash }));
    return client;
  }

  send(line: string): void {
    this.socket.write(line);
  }

  /** Valid frames only, of the given ops. */
  ofOp<Op extends ServerFrame['op']>(...ops: Op[]): Extract<ServerFrame, { op: Op }>[] {
    return this.frames.filter((f): f is Extract<ServerFrame, { op: Op }> => 'op' in f && (ops as string[]).includes(f.op));
  }

  /** Received lines other than heartbeats. */
  get dataLines(): string[] {
    return this.lines.filter((line) => !/^\{"op":"p[io]ng"/.test(line));
  }

  /** Frames other than heartbeats. */
  get data(): (ServerFrame | FrameError | { unknownOp: string })[] {
    return this.frames.filter((f) => !('op' in f) || (f.op !== 'ping' && f.op !== 'pong'));
  }

  async waitFrames(what: string, condition: (client: FeedClient) => boolean, ms?: number): Promise<void> {
    await waitFor(() => condition(this), `${what}; have ${this.lines.length} lines, last ${JSON.stringify(this.lines.at(-1))?.slice(0, 300)}`, ms);
  }

  get isClosed(): boolean {
    return this.socket.destroyed || this.socket.readableEnded;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export interface ModelStore {
  cursor: string | null;
  snapshotCursor: string | null;
  events: { cursor: string; type: string; payload: Record<string, unknown> }[];
  balances: Map<string, bigint>;
  duplicates: number;
  snapshots: number;
}

/** What a correct consumer's store holds after these frames (contract section 4), for `topics`. */
export function applyFrames(frames: readonly unknown[], topics: readonly string[], start?: ModelStore): ModelStore {
  const store: ModelStore = start ?? { cursor: null, snapshotCursor: null, events: [], balances: new Map(), duplicates: 0, snapshots: 0 };
  const followed = new Set(topics);
  const after = (a: string, b: string | null) => b === null || compareCursors(parseCursor(a), parseCursor(b)) > 0;
  const effect = (payload: Record<string, unknown>, type: string, sign: 1n | -1n) => {
    if (type !== 'Transfer') return;
    const { from, to, amount } = payload as TransferPayload;
    if (from === to) return;
    if (followed.has(from)) store.balances.set(from, (store.balances.get(from) ?? 0n) - BigInt(amount) * sign);
    if (followed.has(to)) store.balances.set(to, (store.balances.get(to) ?? 0n) + BigInt(amount) * sign);
  };
  for (const frame of frames as ServerFrame[]) {
    if (!frame || typeof frame !== 'object' || !('op' in frame)) continue;
    if (frame.op === 'snapshot') {
      store.snapshots++;
      store.events = [];
      store.balances = new Map(topics.map((a) => [a, BigInt(frame.state.balances[a] ?? '0')]));
      store.cursor = store.snapshotCursor = frame.cursor;
    } else if (frame.op === 'event') {
      if (!after(frame.cursor, store.cursor)) {
        store.duplicates++;
        continue;
      }
      store.events.push({ cursor: frame.cursor, type: frame.type, payload: frame.payload });
      effect(frame.payload, frame.type, 1n);
      store.cursor = frame.cursor;
    } else if (frame.op === 'revoke') {
      if (!after(frame.fromCursor, store.snapshotCursor)) throw new Error(`revoke ${frame.fromCursor} reaches into the snapshot ${store.snapshotCursor}`);
      const voided = store.events.filter((e) => !after(frame.fromCursor, e.cursor));
      for (const e of voided) effect(e.payload, e.type, -1n);
      store.events = store.events.filter((e) => !voided.includes(e));
      store.cursor = store.events.at(-1)?.cursor ?? store.snapshotCursor;
    }
  }
  return store;
}

/** The events a consumer of `topics` must hold after `afterCursor`, from the chain itself. */
export function chainEvents(chain: SimChain, topics: readonly string[], afterCursor: string): string[] {
  const from = parseCursor(afterCursor);
  const followed = new Set(topics);
  const cursors: string[] = [];
  for (let n = from.blockNumber; n <= chain.head.number; n++) {
    for (const log of chain.canonicalAt(n)!.logs) {
      if (n === from.blockNumber && log.logIndex <= from.logIndex) continue;
      if (followed.has(log.from) || followed.has(log.to))
        cursors.push(`${chain.chainId}:${String(n).padStart(14, '0')}:${String(log.logIndex).padStart(4, '0')}`);
    }
  }
  return cursors;
}

/** The chain's balances of `topics` at the head. */
export const chainBalances = (chain: SimChain, topics: readonly string[]) => {
  const all = chain.balancesAt(chain.head.number);
  return new Map(topics.map((a) => [a, all.get(a) ?? 0n]));
};

/** A valid feed scenario's body (without `name`), line by line, so a test can add or replace lines. */
export const FEED_SCENARIO_HEAD = [
  'description: Virtual time runs 10 times faster than real time.',
  'protocol: feed',
  'time_scale: 0.1',
  'chain:',
  '  seed: 17',
  '  block_interval_ms: 2500',
  'time:',
  '  duration_ms: 50000',
  'consumer:',
  '  topics: [0, 2]',
];
