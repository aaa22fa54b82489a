// The end of the feed run's script: waiting until both stores hold the chain's end (read through
// independent connections), then, where the scenario asks, a quiet moment for the heartbeat.

import { performance } from 'node:perf_hooks';
import type { Role } from '../../../record/journal.js';
import type { RunContext } from '../../../lab-api/lab.js';
import { simulate } from '../scenario/chain-script.js';
import type { FeedPlan } from '../scenario/plan.js';
import { atChainEnd, expectedOf, judgeStore, type SentSnapshot, viewOf } from '../check/state.js';
import type { Heartbeats } from './publisher.js';
import { type FeedRunState, sleep } from './state.js';
import { type FeedStores, journalRead, MID_RUN_READ } from './stores.js';

const POLL_MS = 250;
/** How long a consumer's store that stands at the chain's end without matching it must hold still before the wait ends. */
export const SETTLED_MS = 1000;
const ROLES: Role[] = ['consumer', 'control'];

/**
 * Polls both stores until they hold the chain's end, the store is refused, converge_ms passes or
 * the run ends, or the control's store holds it and nothing will change the consumer's any more:
 * no consumer will run again (its restarts are used up), or its store stands at the chain's end
 * (cursor and block hash) without matching it and has held still for SETTLED_MS (the server has
 * nothing left to send it: a failing consumer's run otherwise waited out converge_ms, 10–15 s).
 * The first and the last read of the wait are journaled: the last one is what a "did not
 * converge" finding shows.
 */
export async function awaitConvergence(ctx: RunContext<FeedPlan>, stores: FeedStores, sent: Record<Role, SentSnapshot[]>, state: FeedRunState): Promise<void> {
  const plan = ctx.scenario.lab;
  const expected = expectedOf(simulate(plan.chain, plan.topicIndexes));
  const deadline = performance.now() + plan.time.convergeMs;
  const journaled: Record<Role, string | undefined> = { consumer: undefined, control: undefined };
  const firstShown: Record<Role, boolean> = { consumer: false, control: false };
  const still = { text: '', since: performance.now() };
  for (;;) {
    const reads = { consumer: stores.read('consumer', MID_RUN_READ), control: stores.read('control', MID_RUN_READ) };
    const judged = (role: Role) => judgeStore(role, viewOf(reads[role]), expected, sent[role]);
    const consumer = judged('consumer');
    const controlDone = judged('control').problems.length === 0;
    const done = controlDone && consumer.problems.length === 0;
    // A store the harness refused to read decides the verdict alone: waiting cannot change it.
    const refused = reads.consumer.refused !== undefined;
    // The consumer's read as text once a poll: what the settle compares, and what journaling dedupes by.
    const consumerText = JSON.stringify(reads.consumer);
    if (consumerText !== still.text) Object.assign(still, { text: consumerText, since: performance.now() });
    const settled = controlDone && atChainEnd(consumer) && performance.now() - still.since >= SETTLED_MS;
    const consumerFinal = controlDone && (state.consumersOver || settled);
    const last = done || consumerFinal || refused || performance.now() >= deadline || state.loopError !== undefined || ctx.signal.aborted;
    // A read that met a lock held longer than its wait (a commit's sync on a loaded disk) says
    // nothing about the store: the next poll reads again, and only the last read stands as it is.
    for (const role of ROLES) {
      const busy = reads[role].error?.includes('SQLITE_BUSY') ?? false;
      if (!last && (firstShown[role] || busy)) continue;
      firstShown[role] = true;
      const text = role === 'consumer' ? consumerText : JSON.stringify(reads[role]);
      if (text === journaled[role]) continue;
      journaled[role] = text;
      journalRead(ctx, role, role === 'control' ? 1 : state.current?.incarnation, 'converging', stores.dbs[role], reads[role]);
    }
    if (last) break;
    await sleep(POLL_MS);
  }
}

/**
 * A quiet moment for the heartbeat (expect.quiet_ping): the feed is idle now, so the server
 * pings; wait until that ping is answered, or has waited as long as the checker allows (then it
 * is a finding). Only where asked: it costs every run seconds, and a consumer that never answers
 * must still be able to pass the happy path (a near miss), to be caught where pings are tested.
 */
export async function awaitQuietPing(ctx: RunContext<FeedPlan>, { pings, pongs }: Heartbeats, state: FeedRunState): Promise<void> {
  const plan = ctx.scenario.lab;
  if (!plan.expect.quietPing) return;
  const window = plan.server.idleMs + plan.time.latencyMs;
  const quietFrom = ctx.clock();
  const giveUp = quietFrom + plan.server.pingMs + window + 1000;
  for (;;) {
    const ping = pings.find((p) => p.t >= quietFrom);
    const settled = ping !== undefined && (pongs.has(`${ping.conn}:${ping.id}`) || ctx.clock() - ping.t >= window);
    if (settled || ctx.clock() >= giveUp || state.current === undefined || state.loopError !== undefined || ctx.signal.aborted) break;
    await sleep(50);
  }
}
