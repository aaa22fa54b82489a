// The statistical snapshot race's clients: many lightweight null-cursor subscribers of the
// harness's own, all through one proxy, subscribing one after the other while the chain runs
// fast, and reading as frames come (pinging now and then, as a consumer does) until the run is
// over (they overlap). Each is recorded on the
// wire as stream `client:sub-<n>`, with a note of the outbox's head when it sent its subscribe:
// a row it lacks above that head was committed after it subscribed (clients/crowds/check-subscribers.ts).

import { performance } from 'node:perf_hooks';
import { encodeSubscribe } from '../../../../../../protocol/feed/encode.js';
import type { TranscriptEvent } from '../../../../../../publisher/transcript.js';
import type { RunContext } from '../../../../../lab-api/lab.js';
import { sleep } from '../../../run/state.js';
import type { FeedPlan } from '../../../scenario/plan.js';
import { RawClient } from '../client.js';
import { clientStream } from '../streams.js';

/** A subscriber's name: its wire stream is `client:<name>`. */
export const subscriberName = (n: number): string => `sub-${n}`;
/** The note each subscriber's stream carries at its subscribe. */
export const SUBSCRIBED_NOTE = 'subscribe sent; the outbox head was block';

export interface RunningSubscribers {
  /** Settles once every subscriber has subscribed (or the run is over). */
  started: Promise<void>;
  /** Waits (bounded by `until`) until every open subscriber has read an event at `lastCursor` or beyond. */
  caughtUp(lastCursor: string | undefined, until: number): Promise<void>;
  windUp(): void;
}

interface Subscriber {
  client: RawClient;
  lastCursor: string;
}

function frameOf(line: string): { op?: unknown; id?: unknown; cursor?: unknown } {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as { op?: unknown }) : {};
  } catch {
    return {};
  }
}

export function startSubscribers(
  ctx: RunContext<FeedPlan>,
  proxy: { host: string; port: number },
  plan: { count: number; everyMs: number },
  outboxHead: () => number,
): RunningSubscribers {
  const lab = ctx.scenario.lab;
  const wire = ctx.wire(() => undefined);
  const subscribers: Subscriber[] = [];
  const open = async (n: number): Promise<void> => {
    const stream = clientStream(subscriberName(n));
    const record = (event: TranscriptEvent) => wire({ t: ctx.clock(), stream, conn: 1, ...event });
    const client = await RawClient.open(proxy.host, proxy.port, record, { kind: 'flowing' });
    const sub: Subscriber = { client, lastCursor: '' };
    client.onLine = (line) => {
      const frame = frameOf(line);
      if (frame.op === 'ping') client.send(`${JSON.stringify({ op: 'pong', id: frame.id })}\n`);
      else if (frame.op === 'event' && typeof frame.cursor === 'string') sub.lastCursor = frame.cursor;
      else if (frame.op === 'reset') client.close('read the reset: closing its side');
    };
    // A consumer keeps itself heard: the server closes a connection that sent nothing for CHAOSLAB_IDLE_MS.
    let nextPing = 1;
    const pinger = setInterval(() => client.send(`${JSON.stringify({ op: 'ping', id: nextPing++ })}\n`), Math.max(50, Math.floor(lab.server.idleMs / 3)));
    void client.closed.then(() => clearInterval(pinger));
    subscribers.push(sub);
    ctx.defer(() => {
      clearInterval(pinger);
      client.close('the run is over');
    });
    record({ kind: 'note', text: `${SUBSCRIBED_NOTE} ${outboxHead()}` });
    client.send(encodeSubscribe({ client: `${lab.consumer.clientId}-${subscriberName(n)}`, topics: lab.topics, cursor: null, blockHash: null }));
  };
  const started = (async () => {
    const t0 = performance.now();
    for (let n = 1; n <= plan.count && !ctx.signal.aborted; n++) {
      await sleep(t0 + (n - 1) * plan.everyMs - performance.now());
      // Each subscribes on its own: a slow connect does not delay the next one.
      void open(n).catch((error: unknown) =>
        wire({ t: ctx.clock(), stream: clientStream(subscriberName(n)), conn: 1, kind: 'note', text: `could not connect: ${String(error)}` }),
      );
    }
  })();
  return {
    started,
    caughtUp: async (lastCursor, until) => {
      if (lastCursor === undefined) return;
      const behind = () => subscribers.some((s) => s.client.isOpen && s.lastCursor < lastCursor);
      while (behind() && performance.now() < until && !ctx.signal.aborted) await sleep(50);
    },
    windUp: () => {
      for (const s of subscribers) s.client.close('the run is over');
    },
  };
}
