// The feed lab (seed 002, T18 "real-time systems"): a seeded chain with reorganisations, its
// outbox, and a push server speaking subscribe/snapshot/event/revoke/reset/ping/pong over NDJSON;
// long-running consumers that reconnect by themselves, compared with an always-connected control
// consumer and with the chain's end.

import { join } from 'node:path';
import type { ChaosModel } from '../../lab-api/chaos-model.js';
import { defineLab, type RunContext } from '../../lab-api/lab.js';
import { projectRoot, shellQuote } from '../../base/paths.js';
import { type FeedPlan, feedScenario } from './scenario/load.js';
import { REQUIRED_ENV_VARS } from './scenario/schema.js';
import { FEED_FAULT_POINTS } from './scenario/fault-points.js';
import { feedVocabulary } from './report/vocabulary.js';

// The checkers (a third of what loading the labs cost) load while the run's processes start:
// the run fetches them, the verdict awaits them.
const checker = () => import('./check-run.js');

export const feedLab = defineLab<FeedPlan>({
  name: 'feed',
  title: 'feed lab: a chain feed over NDJSON (subscribe/snapshot/event/revoke/reset/ping); long-running consumers that reconnect by themselves',
  scenario: feedScenario,
  faultPoints: FEED_FAULT_POINTS,
  // Imported when a run starts: loading and listing scenarios need none of the publisher.
  run: async (ctx: RunContext<FeedPlan>) => {
    void checker().catch(() => {}); // a checker that cannot load is the verdict's error
    const { storm, serverUnderTest } = ctx.scenario.lab;
    if (serverUnderTest) return (await import('./server/run.js')).runServerScenario(ctx, serverUnderTest);
    return storm ? (await import('./storm/run.js')).runStorm(ctx, storm) : (await import('./run/run.js')).runFeed(ctx);
  },
  check: async (ctx: RunContext<FeedPlan>) => (await checker()).checkRun(ctx),
  // A bad environment's script never runs; the storm's rounds are its script.
  scriptMs: (plan: FeedPlan) => (plan.consumer.badEnvironment ? 0 : plan.storm ? plan.storm.rounds * plan.storm.roundMs : plan.time.scriptMs),
  vocabulary: feedVocabulary,
  scenariosDir: join(projectRoot, 'scenarios', 'feed'),
  consumerDir: join(projectRoot, 'consumer', 'feed'),
  referenceCommand: `node ${shellQuote(join(projectRoot, 'dist', 'consumer', 'feed', 'typescript', 'client.js'))}`,
  mutantIndex: join(projectRoot, 'consumer', 'feed', 'mutants', 'index.yaml'),
  happyPath: 'feed-happy-path',
  consumerSignature: {
    // A JSON object whose op is subscribe (members in any order, spaces allowed).
    opens: (line) => /^\s*\{.*"op"\s*:\s*"subscribe"/.test(line),
    // Those it always gets, and the two a scenario may add.
    variables: [...REQUIRED_ENV_VARS, 'CHAOSLAB_APPLY_DELAY_MS', 'CHAOSLAB_FAULT'],
  },
  server: {
    referenceCommand: `node ${shellQuote(join(projectRoot, 'dist', 'publisher', 'feed', 'server', 'main.js'))}`,
    mutantIndex: join(projectRoot, 'publisher', 'feed', 'mutants', 'index.yaml'),
    // The snapshot race's chain with no fault: a server that answers a null cursor and streams passes it.
    happyPath: 'feed-server-happy-path',
    testsServer: (plan: FeedPlan) => plan.serverUnderTest !== undefined,
    chaos: async () => (await import('./chaos/server-chaos.js')).feedServerChaos as ChaosModel,
  },
  chaos: async () => (await import('./chaos/chaos.js')).feedChaos as ChaosModel,
});
