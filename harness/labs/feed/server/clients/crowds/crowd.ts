// The fan-out's crowd (server.under_test.crowd): many light clients in the harness's own process,
// all through one Toxiproxy proxy (a proxy accepts many connections), not one process each. Each
// subscribes with cursor null like a new consumer, reads frames as they come, answers pings and
// pings every idle_ms/3 (a reader that only reads would be closed as idle). It keeps little:
// its snapshot's cursor, each event's cursor and arrival time, a SHA-256 of its event frames,
// and how it ended. Nothing goes on the wire journal (a thousand streams would swamp it): when
// the run is over each client is one `crowd-client` entry, which crowd-check.ts judges.

import { createHash, type Hash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { encodeSubscribe } from '../../../../../../protocol/feed/encode.js';
import type { CloseParty } from '../../../../../../publisher/transcript.js';
import type { RunContext } from '../../../../../lab-api/lab.js';
import type { HostPort } from '../../../../../toxiproxy/adapter.js';
import { sleep } from '../../../run/state.js';
import type { FeedPlan } from '../../../scenario/plan.js';
import { lastEventOf } from '../../../scenario/chain-script.js';
import type { AwaitDelivered } from '../../script.js';

/** Connections opened at once: a wave waits for the previous one (a server's listen backlog may be 100). */
const CONNECTING_AT_ONCE = 100;
/** Frames kept in words are cut to this many characters. */
const CUT = 200;

/** An event frame as the checker keys it (the chain's event: cursor, type, payload). */
export const eventFrameKey = (frame: { cursor?: unknown; type?: unknown; payload?: unknown }): string =>
  `${JSON.stringify({ op: 'event', cursor: frame.cursor, type: frame.type, payload: frame.payload })}\n`;

const cut = (line: string): string => (line.length > CUT ? `${line.slice(0, CUT)}…` : line);

class CrowdClient {
  subscribedAt?: number;
  snapshot?: string;
  firstFrame?: string;
  unexpected?: string;
  readonly events: string[] = [];
  readonly arrivals: number[] = [];
  private readonly hash: Hash = createHash('sha256');
  afterReset = 0;
  reset?: string;
  close?: { t: number; by: CloseParty; reason: string };
  private carry = '';
  private nextPing = 1;

  constructor(
    readonly n: number,
    readonly socket: Socket,
    private readonly clock: () => number,
  ) {}

  /** The lines of a chunk, each handled at the chunk's arrival time. */
  onData(chunk: Buffer): void {
    const t = this.clock();
    const parts = (this.carry + chunk.toString('utf8')).split('\n');
    this.carry = parts.pop() ?? '';
    for (const line of parts) this.onLine(line, t);
  }

  private onLine(line: string, t: number): void {
    if (this.reset !== undefined) {
      this.afterReset++;
      return;
    }
    let frame: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(line);
      frame = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    } catch {}
    const op = frame?.op;
    if (op === 'ping') this.send(`${JSON.stringify({ op: 'pong', id: frame!.id })}\n`);
    if (op === 'ping' || op === 'pong') return;
    const first = this.snapshot === undefined && this.firstFrame === undefined;
    if (op === 'snapshot' && first && typeof frame!.cursor === 'string') this.snapshot = frame!.cursor;
    else if (first) this.firstFrame = cut(line);
    if (op === 'event' && typeof frame!.cursor === 'string') {
      this.events.push(frame!.cursor);
      this.arrivals.push(Math.round(t * 100) / 100);
      this.hash.update(eventFrameKey(frame!));
    } else if (op === 'reset') {
      this.reset = String(frame!.reason);
      this.socket.end(); // a consumer that reads a reset closes its side
    } else if (!(op === 'snapshot' && first)) this.unexpected ??= cut(line);
  }

  send(line: string): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(line);
  }

  ping(): void {
    if (this.close === undefined) this.send(`${JSON.stringify({ op: 'ping', id: this.nextPing++ })}\n`);
  }

  ended(by: CloseParty, reason: string): void {
    this.close ??= { t: this.clock(), by, reason };
  }

  /** Its journal entry. */
  entry() {
    return {
      type: 'crowd-client' as const,
      client: this.n,
      ...(this.subscribedAt === undefined ? {} : { subscribedAt: this.subscribedAt }),
      ...(this.snapshot === undefined ? {} : { snapshot: this.snapshot }),
      ...(this.firstFrame === undefined ? {} : { firstFrame: this.firstFrame }),
      ...(this.unexpected === undefined ? {} : { unexpected: this.unexpected }),
      events: this.events,
      arrivals: this.arrivals,
      digest: this.hash.copy().digest('hex'),
      afterReset: this.afterReset,
      ...(this.reset === undefined ? {} : { reset: this.reset }),
      ...(this.close ? { close: this.close } : {}),
    };
  }
}

export interface Crowd {
  /** Until every client has its snapshot, or has ended, or `withinMs` passed. */
  ready(withinMs: number): Promise<void>;
  /** Until every open client has read the event at `cursor`, or `withinMs` passed, or the run ends: true when every one had. */
  caughtUp(cursor: string | undefined, withinMs: number): Promise<boolean>;
  /** Closes every connection still open and journals each client (once). */
  windUp(): void;
}

/**
 * The script's pace with a crowd (script.ts `playRest`): a block waits until every crowd client
 * read the last event committed before it, at most `boundMs` (the lag the run is judged by).
 */
export function crowdPace(crowd: Crowd, chainId: number, topics: readonly string[], boundMs: number): AwaitDelivered {
  let due: string | undefined;
  return async (change) => {
    due = lastEventOf(chainId, change, topics) ?? due;
    return crowd.caughtUp(due, boundMs);
  };
}

/** Opens one connection and subscribes; resolves once connected or refused. */
function open(ctx: RunContext<FeedPlan>, n: number, at: HostPort, every: CrowdClient[]): Promise<void> {
  const plan = ctx.scenario.lab;
  const socket = connect({ host: at.host, port: at.port });
  const client = new CrowdClient(n, socket, ctx.clock);
  every.push(client);
  socket.setNoDelay(true);
  socket.on('data', (chunk: Buffer) => client.onData(chunk));
  socket.on('end', () => client.ended('publisher', 'closed'));
  socket.on('error', (error: NodeJS.ErrnoException) => client.ended(error.code === 'ECONNRESET' ? 'reset' : 'publisher', error.code ?? error.message));
  socket.on('close', () => client.ended('publisher', 'connection closed'));
  return new Promise((resolve) => {
    socket.once('connect', () => {
      client.subscribedAt = ctx.clock();
      client.send(encodeSubscribe({ client: `${plan.consumer.clientId}-crowd-${n}`, topics: plan.topics, cursor: null, blockHash: null }));
      resolve();
    });
    socket.once('close', () => resolve());
  });
}

/** Opens `connections` clients through `proxy`, CONNECTING_AT_ONCE at a time. */
export async function startCrowd(ctx: RunContext<FeedPlan>, connections: number, proxy: HostPort): Promise<Crowd> {
  const every: CrowdClient[] = [];
  let wound = false;
  const windUp = () => {
    if (wound) return;
    wound = true;
    clearInterval(pinger);
    for (const c of every) {
      c.ended('consumer', 'the run is over');
      c.socket.destroy();
      ctx.journal.write(c.entry());
    }
  };
  ctx.defer(windUp);
  const pinger = setInterval(
    () => {
      for (const c of every) c.ping();
    },
    Math.max(50, Math.floor(ctx.scenario.lab.server.idleMs / 3)),
  );
  for (let n = 1; n <= connections && !ctx.signal.aborted; n += CONNECTING_AT_ONCE) {
    const wave: Promise<void>[] = [];
    for (let i = n; i < n + CONNECTING_AT_ONCE && i <= connections; i++) wave.push(open(ctx, i, proxy, every));
    await Promise.all(wave);
  }
  const until = async (done: (c: CrowdClient) => boolean, withinMs: number): Promise<boolean> => {
    const from = performance.now();
    for (;;) {
      if (every.every((c) => c.close !== undefined || done(c))) return true;
      if (performance.now() - from >= withinMs || ctx.signal.aborted) return false;
      await sleep(50);
    }
  };
  return {
    ready: async (withinMs) => void (await until((c) => c.snapshot !== undefined || c.firstFrame !== undefined, withinMs)),
    caughtUp: (cursor, withinMs) => until((c) => cursor === undefined || (c.events.at(-1) ?? '') >= cursor, withinMs),
    windUp,
  };
}
