// What each kind of client does on its connection (server/clients/schema.ts): what it sends,
// how it reads, what it answers. Every client but the bad ones subscribes with cursor null like
// a new consumer; a client that reads a `reset` closes its side, as a consumer must.

import { encodeSubscribe } from '../../../../../protocol/feed/encode.js';
import type { ClientKind } from './schema.js';
import { RawClient, type ReadMode } from './client.js';
import type { TranscriptEvent } from '../../../../../publisher/transcript.js';

/** The oversized client's line: twice the contract's 1 MiB limit. */
export const OVERSIZED_BYTES = 2 * 1024 * 1024;
export const GARBAGE_LINE = 'this is not JSON {\n';

export interface ClientSettings {
  host: string;
  port: number;
  clientId: string;
  topics: readonly string[];
  /** The server's CHAOSLAB_PING_MS and CHAOSLAB_IDLE_MS. */
  serverPingMs: number;
  serverIdleMs: number;
  /** A slow reader's lines a second. */
  readsPerSecond: number;
  record(event: TranscriptEvent): void;
}

export interface DrivenClient {
  readonly client: RawClient;
  /** The last event frame it read: its cursor, and when (performance.now()). */
  readonly lastEvent: { cursor: string; at: number } | undefined;
  /** The script is over: a client holding back reads everything now (its backlog is judged). */
  sceneOver(): void;
  /** The run is over: timers stop, the connection is closed if still open. */
  windUp(): void;
}

const opOf = (line: string): { op?: unknown; id?: unknown; cursor?: unknown } => {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as { op?: unknown; id?: unknown; cursor?: unknown }) : {};
  } catch {
    return {};
  }
};

function readModeOf(kind: ClientKind, settings: ClientSettings): ReadMode {
  if (kind === 'slow-reader') return { kind: 'paced', perSecond: settings.readsPerSecond };
  if (kind === 'never-reads') return { kind: 'paused' };
  return { kind: 'flowing' };
}

/** The first line: a subscribe, or the bad frame. */
function firstLine(kind: ClientKind, settings: ClientSettings): string {
  if (kind === 'garbage') return GARBAGE_LINE;
  if (kind === 'oversized') return `{"op":"subscribe","client":"${'x'.repeat(OVERSIZED_BYTES)}"}\n`;
  return encodeSubscribe({ client: settings.clientId, topics: settings.topics, cursor: null, blockHash: null });
}

export async function driveClient(kind: ClientKind, settings: ClientSettings): Promise<DrivenClient> {
  const client = await RawClient.open(settings.host, settings.port, settings.record, readModeOf(kind, settings));
  const timers: NodeJS.Timeout[] = [];
  let nextPing = 1;
  let lastEvent: DrivenClient['lastEvent'];
  const ping = () => client.send(`${JSON.stringify({ op: 'ping', id: nextPing++ })}\n`);
  client.onLine = (line) => {
    if (kind === 'half-open') return; // reads, answers nothing, never closes: its peer is as good as gone
    const frame = opOf(line);
    if (frame.op === 'event' && typeof frame.cursor === 'string') lastEvent = { cursor: frame.cursor, at: performance.now() };
    if (frame.op === 'ping') client.send(`${JSON.stringify({ op: 'pong', id: frame.id })}\n`);
    if (frame.op === 'reset') client.close('read the reset: closing its side');
  };
  client.send(firstLine(kind, settings));
  // A slow reader keeps itself heard while it lags (the server's pings wait behind its backlog).
  if (kind === 'slow-reader') timers.push(setInterval(ping, Math.max(50, Math.floor(settings.serverIdleMs / 3))));
  if (kind === 'pinger') timers.push(setInterval(ping, Math.max(50, Math.floor(settings.serverPingMs / 2))));
  return {
    client,
    get lastEvent() {
      return lastEvent;
    },
    sceneOver: () => {
      if (kind === 'slow-reader' || kind === 'never-reads') client.read({ kind: 'flowing' });
    },
    windUp: () => {
      for (const timer of timers) clearInterval(timer);
      client.close('the run is over');
    },
  };
}
