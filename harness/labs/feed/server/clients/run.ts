// The server run's own clients: each through a proxy of its own, recorded on the wire as stream
// `client:<name>`. Started once the server listens, told when the script is over (a client
// holding back then reads its backlog), and wound up when the clients the server must close are
// closed, or the wait for them is over.

import { performance } from 'node:perf_hooks';
import type { RunContext } from '../../../../lab-api/lab.js';
import { sleep } from '../../run/state.js';
import type { SimulatedChain } from '../../scenario/chain-script.js';
import type { FeedPlan, ServerUnderTestPlan } from '../../scenario/plan.js';
import { type DrivenClient, driveClient } from './behaviours.js';
import { type ClientPlan, QUIET_ACCOUNT } from './schema.js';
import { clientStream, SCENE_OVER_NOTE } from './streams.js';

/** Beyond the server's idle time, how long the harness waits for the server to close the clients it must close. */
const CLOSE_WAIT_SLACK_MS = 3000;
/** How long a slow reader that has read the chain's last event still waits for a reset written just behind it. */
const CAUGHT_UP_GRACE_MS = 1000;

/**
 * Whether the wind-up still waits for the server to close this client. A pinger is heard all
 * along: the server has no reason to close it. Nor idleness a slow reader (it pings), and once it
 * has read the chain's last event (`lastCursor`) it has no backlog left to be reset for: a server
 * that never reset it was waited for until idle + ping + slack for nothing (9 s of a mutant's
 * feed-server-slow-reader run). Its grace is for a reset written just behind that last event.
 */
export function awaitedAtWindUp(
  c: Pick<ClientPlan, 'kind' | 'quiet'>,
  isOpen: boolean,
  lastEvent: DrivenClient['lastEvent'],
  lastCursor: string | undefined,
  now: number,
): boolean {
  if (!isOpen || c.kind === 'pinger') return false;
  if (c.kind !== 'slow-reader') return true;
  const caughtUp = c.quiet || lastCursor === undefined || (lastEvent?.cursor === lastCursor && now - lastEvent.at >= CAUGHT_UP_GRACE_MS);
  return !caughtUp;
}

/** Events of the followed accounts a second of real time, over the script: a slow reader's yardstick. */
export function eventRate(sim: SimulatedChain, plan: FeedPlan): number {
  return sim.produced.length / Math.max(0.001, plan.time.scriptMs / 1000);
}

/** A slow reader's pace: its own, or a tenth of the event rate. */
export const readsPerSecondOf = (client: ClientPlan, rate: number): number => client.readsPerSecond ?? Math.max(1, Math.round(rate / 10));

export interface RunningClients {
  sceneOver(): void;
  /** Waits (bounded) for the server to close what it must, then closes the rest. */
  windUp(): Promise<void>;
}

export async function startClients(
  ctx: RunContext<FeedPlan>,
  under: ServerUnderTestPlan,
  upstream: { host: string; port: number },
  sim: SimulatedChain,
): Promise<RunningClients> {
  const plan = ctx.scenario.lab;
  const wire = ctx.wire(() => undefined);
  const rate = eventRate(sim, plan);
  const driven: { plan: ClientPlan; client: DrivenClient }[] = [];
  for (const c of under.clients) {
    const stream = clientStream(c.name);
    nameClient(ctx, c.name, c.kind, stream);
    const proxy = await ctx.proxy(`client-${c.name}`, upstream);
    const client = await driveClient(c.kind, {
      host: proxy.listen.host,
      port: proxy.listen.port,
      clientId: `${plan.consumer.clientId}-${c.name}`,
      topics: c.quiet ? [QUIET_ACCOUNT] : plan.topics,
      serverPingMs: plan.server.pingMs,
      serverIdleMs: plan.server.idleMs,
      readsPerSecond: readsPerSecondOf(c, rate),
      record: (event) => wire({ t: ctx.clock(), stream, conn: 1, ...event }),
    });
    ctx.defer(() => client.windUp());
    driven.push({ plan: c, client });
  }
  return {
    sceneOver: () => {
      for (const { plan: c, client } of driven) {
        wire({ t: ctx.clock(), stream: clientStream(c.name), conn: 1, kind: 'note', text: `${SCENE_OVER_NOTE}: ${client.client.linesRead} lines read` });
        client.sceneOver();
      }
    },
    windUp: async () => {
      const lastCursor = sim.events.at(-1)?.cursor;
      const until = performance.now() + plan.server.idleMs + plan.server.pingMs + CLOSE_WAIT_SLACK_MS;
      const awaited = () => driven.some(({ plan: c, client }) => awaitedAtWindUp(c, client.client.isOpen, client.lastEvent, lastCursor, performance.now()));
      while (awaited() && performance.now() < until && !ctx.signal.aborted) await sleep(50);
      for (const { client } of driven) client.windUp();
    },
  };
}

/** Names a client of the harness (its wire stream): a `party` entry, so that reports draw it on its own lane. */
function nameClient(ctx: RunContext<FeedPlan>, name: string, kind: string, stream: string): void {
  ctx.journal.write({ type: 'party', id: stream, name, side: 'client', about: `${kind} client of the harness`, stream });
}
