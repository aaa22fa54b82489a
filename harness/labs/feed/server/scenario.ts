// The `server.under_test` key of a feed scenario: the push server is the program under test and
// the reference consumer its probe. Its plan, and the checks the schema cannot express: what a
// server run does not take (yet), and blocks committed while the server is stopped that really
// hold events for the probe's accounts (otherwise the race would test nothing).

import type { RawProblem } from '../../../scenario/problems.js';
import type { CoreFile } from '../../../scenario/schema.js';
import type { simulate } from '../scenario/chain-script.js';
import type { ChainPlan, ServerUnderTestPlan } from '../scenario/plan.js';
import { type FeedFile, SERVER_UNDER_TEST_DEFAULTS } from '../scenario/schema.js';
import { clientPlansOf, clientProblems } from './clients/plan.js';
import { sceneProblems, scenePlanOf } from './scene/scene.js';

type File = FeedFile & CoreFile;

export function serverUnderTestPlanOf(file: FeedFile): ServerUnderTestPlan | undefined {
  const u = file.server?.under_test;
  if (!u) return undefined;
  return {
    ...(u.fault === undefined ? {} : { fault: u.fault }),
    blocksWhileStopped: u.blocks_while_stopped ?? SERVER_UNDER_TEST_DEFAULTS.blocksWhileStopped,
    pollMs: u.poll_ms ?? SERVER_UNDER_TEST_DEFAULTS.pollMs,
    clients: clientPlansOf(u.clients),
    ...(u.subscribers ? { subscribers: { count: u.subscribers.count, everyMs: u.subscribers.every_ms ?? SERVER_UNDER_TEST_DEFAULTS.subscribeEveryMs } } : {}),
    ...(u.max_rss_growth_mib === undefined ? {} : { maxRssGrowthBytes: u.max_rss_growth_mib * 1024 * 1024 }),
    ...(u.crowd === undefined ? {} : { crowd: u.crowd }),
    ...(u.max_lag_p99_ms === undefined ? {} : { maxLagP99Ms: u.max_lag_p99_ms }),
    ...(scenePlanOf(u) ? { scene: scenePlanOf(u)! } : {}),
  };
}

/** The script blocks committed while the server is stopped: the first ones after the initial blocks. */
export const blocksWhileStopped = (chain: Pick<ChainPlan, 'initialBlocks'>, plan: ServerUnderTestPlan): { from: number; to: number } => ({
  from: chain.initialBlocks + 1,
  to: chain.initialBlocks + plan.blocksWhileStopped,
});

/** Keys a server scenario does not take: the consumer side is the project's reference probe, and faults come later. */
function refusedKeys(file: File): RawProblem[] {
  const why = 'a server scenario (server.under_test) runs the reference consumer as its probe, unchanged';
  const out: RawProblem[] = [];
  const refuse = (segments: (string | number)[], message: string) => out.push({ segments, at: 'key', message });
  const c = file.consumer;
  for (const key of ['processes', 'env', 'unset', 'restart', 'apply_delay_ms'] as const)
    if (c[key] !== undefined) refuse(['consumer', key], `leave it out: ${why}`);
  if (file.server?.misbehave) refuse(['server', 'misbehave'], 'leave it out: the server under test is the one that may misbehave');
  if (file.storm) refuse(['storm'], 'leave it out: a restart storm tests consumers, not a server');
  if ((file.faults ?? []).length > 0)
    refuse(['faults'], "a server scenario takes no `faults` yet: its fault is the server's own hook (server.under_test.fault)");
  if (file.expect?.processes !== undefined || file.expect?.quiet_ping !== undefined)
    refuse(['expect'], "leave it out: a server scenario checks the probe's store and the server's exit");
  return out;
}

export function serverUnderTestProblems(file: File, chain: ChainPlan, sim: ReturnType<typeof simulate> | undefined): RawProblem[] {
  const plan = serverUnderTestPlanOf(file);
  if (!plan) return [];
  const out = [
    ...refusedKeys(file),
    ...clientProblems(file.server?.under_test?.clients, plan.scene?.instances ?? 1),
    ...sceneProblems(file.server?.under_test, chain),
  ];
  const at = (key: string): (string | number)[] => ['server', 'under_test', key];
  // A scene runs its own instances (scene/scene-run.ts): the memory bound (sampled for one server process), the crowd, the subscribers and the lag bound are not in it yet.
  for (const key of ['max_rss_growth_mib', 'crowd', 'subscribers', 'max_lag_p99_ms'] as const)
    if (plan.scene && file.server?.under_test?.[key] !== undefined)
      out.push({ segments: at(key), at: 'key', message: `a scene (instances, probes, steps) takes no ${key} yet` });
  // The script's real time without its confirmation blocks: blocks committed after the last subscribe.
  const scriptMs = (chain.lastBlock - chain.initialBlocks) * chain.blockIntervalMs * (file.time_scale ?? 1);
  if (plan.subscribers && (plan.subscribers.count - 1) * plan.subscribers.everyMs >= scriptMs)
    out.push({
      segments: [...at('subscribers'), 'every_ms'],
      at: 'value',
      message: `${plan.subscribers.count} subscribers ${plan.subscribers.everyMs} ms apart would go on subscribing after the script is over (it takes ${Math.round(scriptMs)} ms of real time): lower count or every_ms`,
    });
  const items = (plan.fault ?? '').split(',').filter(Boolean);
  if (items.some((item) => item.startsWith('exit@')))
    out.push({ segments: at('fault'), at: 'value', message: 'only `stop@` hooks are run so far: the harness does not restart a server that exits' });
  const stops = items.some((item) => item.startsWith('stop@'));
  if (file.server?.under_test?.blocks_while_stopped !== undefined && !stops)
    out.push({
      segments: at('blocks_while_stopped'),
      at: 'key',
      message: 'needs a `stop@` hook in `fault`: blocks are committed while the server is stopped by it',
    });
  if (!stops || !sim) return out;
  const { from, to } = blocksWhileStopped(chain, plan);
  if (to > chain.lastBlock) {
    out.push({
      segments: at('blocks_while_stopped'),
      at: 'value',
      message: `the script mines blocks ${chain.initialBlocks + 1}..${chain.lastBlock}: at most ${chain.lastBlock - chain.initialBlocks} can be committed while the server is stopped (got ${plan.blocksWhileStopped})`,
    });
    return out;
  }
  const quiet = [];
  for (let block = from; block <= to; block++) if (!sim.produced.some((e) => Number(e.cursor.split(':')[1]) === block)) quiet.push(block);
  if (quiet.length)
    out.push({
      segments: at('blocks_while_stopped'),
      at: 'value',
      message: `block${quiet.length === 1 ? '' : 's'} ${quiet.join(', ')} of the seeded chain hold${quiet.length === 1 ? 's' : ''} no event for the followed accounts: what is committed while the server is stopped must involve them (follow more accounts, raise logs_per_block.min, or change the seed)`,
    });
  return out;
}
