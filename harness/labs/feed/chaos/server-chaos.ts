// The feed lab's server chaos model (`chaoslab chaos --lab feed --server CMD`): random schedules of
// server faults over a chain script — SIGKILL and a restart, SIGSTOP/SIGCONT, a handover to a
// second instance, a probe's proxy cut, a reorganisation (a probe cut off across it or not), the
// harness's bad, slow and half-open clients — drawn with fast-check, placed by ./server-place.ts
// and written as a server scene (server/scene/), so the run and its checks are the scenes' own:
// the probes' wire record, their stores against the chain, the clients, every instance's end.
// Each layer can reach a server mutant of publisher/feed/mutants/ (named beside it).

import fc from 'fast-check';
import type { ChaosLayer, ChaosModel, ChaosWhere } from '../../../lab-api/chaos-model.js';
import { INITIAL_BLOCKS, type Placement, placeServer, type ServerSchedule, type ServerStep } from './server-place.js';

export const SERVER_CHAOS_LAYERS: readonly ChaosLayer[] = [
  { name: 'kill', what: 'SIGKILL to instance 1 while probe 1 follows it, started again 1–3 blocks later (state-in-memory)' },
  { name: 'pause', what: 'SIGSTOP to instance 1 for 1–6 blocks, then SIGCONT' },
  { name: 'handover', what: 'probe 1 repointed to instance 2 and instance 1 killed for good: it resumes on the other instance' },
  { name: 'cut', what: "a probe's proxy down for 1–4 blocks" },
  { name: 'reorg', what: 'a reorganisation of 1–4 blocks while the probes follow (insertion-order)' },
  {
    name: 'reorg-away',
    what: 'one of 3–4 blocks with probe 2 cut off across it: it resumes from an abandoned block above the fork point (revoke-wrong-point)',
  },
  { name: 'garbage', what: 'a client sending a line that is not JSON (bad-client-crashes)' },
  { name: 'oversized', what: 'a client sending a 2 MiB line (bad-client-crashes)' },
  { name: 'half-open', what: 'a client that subscribes, then sends nothing and ignores pings (no-heartbeat)' },
  { name: 'pinger', what: "a client that pings and answers the server's pings" },
  { name: 'slow-reader', what: 'a client reading at a tenth of the event rate, in a dense run (drop-oldest-silently)', sealedOnly: true },
  { name: 'never-reads', what: 'a client reading nothing until the script is over, in a dense run (drop-oldest-silently)', sealedOnly: true },
  {
    name: 'dense',
    what: 'blocks every 48 ms with 3–7 events, 4 KiB socket buffers and a queue limit of 100, as feed-server-bad-clients',
    sealedOnly: true,
  },
];

const at = fc.nat({ max: 199 });
const layer = <L extends ServerStep['layer']>(name: L) => fc.constant(name);

const STEPS = {
  kill: fc.record({ layer: layer('kill'), at, down: fc.integer({ min: 1, max: 3 }) }),
  pause: fc.record({ layer: layer('pause'), at, span: fc.integer({ min: 1, max: 6 }) }),
  handover: fc.record({ layer: layer('handover'), at }),
  cut: fc.record({ layer: layer('cut'), at, probe: fc.integer({ min: 1, max: 2 }), span: fc.integer({ min: 1, max: 4 }) }),
  reorg: fc.record({ layer: layer('reorg'), at, depth: fc.integer({ min: 1, max: 4 }), away: fc.boolean() }),
  client: fc.record({ layer: layer('client'), which: fc.nat({ max: 3 }) }),
} satisfies Record<string, fc.Arbitrary<ServerStep>>;

/** The layers behind a mutant weigh more: each should turn up within ten runs or so. */
const WEIGHTS: Record<keyof typeof STEPS, number> = { kill: 3, pause: 2, handover: 1, cut: 2, reorg: 3, client: 4 };

function serverSchedules(): fc.Arbitrary<ServerSchedule> {
  // A step shrinks only by going (a run takes some 15 s; fewer steps is what a repro's reader needs).
  const step = fc.noShrink(fc.oneof(...Object.entries(STEPS).map(([k, arbitrary]) => ({ weight: WEIGHTS[k as keyof typeof STEPS], arbitrary }))));
  return fc.record({
    steps: fc.array(step, { minLength: 1, maxLength: 5 }),
    kind: fc.constant('server' as const),
    seed: fc.noShrink(fc.nat()),
    blocks: fc.noShrink(fc.integer({ min: 12, max: 18 })),
    // One sealed run in three is dense (left out where runs are not sealed: runHere).
    dense: fc.noShrink(fc.oneof({ weight: 2, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })),
  });
}

/** The schedule as it runs here: dense runs need small socket buffers, a sealed run's; elsewhere they run at the normal pace. */
export function serverRunHere(s: ServerSchedule, where: ChaosWhere): ServerSchedule {
  return where.sealed || !s.dense ? s : { ...s, dense: false };
}

const timeWords = (p: Placement) =>
  `Virtual time runs ${Math.round(1 / p.pace.timeScale)} times faster than real time (time_scale ${p.pace.timeScale}): a ${p.pace.blockIntervalMs / 1000} s block takes ${Math.round(p.pace.blockIntervalMs * p.pace.timeScale)} ms.`;

/** The scene file of a schedule: two instances on one outbox, probe 1 on instance 1 (the one the faults hit), probe 2 and the clients on instance 2. */
export function serverChaosScenario(s: ServerSchedule): Record<string, unknown> {
  const p = placeServer(s);
  const steps = p.placed.flatMap((x) => x.sceneSteps).sort((a, b) => a.before_block - b.before_block);
  const clients = p.clients.map((c) => ({
    name: c.name,
    kind: c.kind,
    instance: 2,
    // As in feed-server-heartbeats: an account with no events, so that silence is the server's to fill with pings.
    ...(c.kind === 'half-open' || c.kind === 'pinger' ? { quiet: true } : {}),
  }));
  const blocks = p.lastBlock - INITIAL_BLOCKS;
  return {
    description: `Probe 1 follows instance 1, which the faults hit; probe 2${clients.length ? ' and the clients' : ''} follow instance 2. ${timeWords(p)}`,
    time_scale: p.pace.timeScale,
    deadline_ms: 90_000,
    ...(p.dense ? { socket_buffer_bytes: 4096 } : {}),
    chain: {
      seed: s.seed,
      accounts: 4,
      confirmations: p.pace.confirmations,
      block_interval_ms: p.pace.blockIntervalMs,
      logs_per_block: p.pace.logs,
      amount_bits: 48,
      initial_blocks: INITIAL_BLOCKS,
      ...(p.reorg ? { reorgs: [{ after_block: p.reorg.afterBlock, depth: p.reorg.depth }] } : {}),
    },
    time: { duration_ms: blocks * p.pace.blockIntervalMs, converge_ms: p.dense ? 15_000 : 10_000 },
    server: {
      ...(p.dense ? { queue_limit: 100, idle_ms: 5000 } : { ping_ms: 500, idle_ms: 3000 }),
      under_test: {
        instances: 2,
        probes: [{ instance: 1 }, { instance: 2 }],
        ...(steps.length ? { steps } : {}),
        ...(clients.length ? { clients } : {}),
      },
    },
    // Back within a second of a restart or a cut at either pace, so that the next step meets it subscribed.
    consumer: { topics: [0, 1, 2, 3], backoff_cap_ms: 300, ...(p.dense ? {} : { ping_ms: 1000, idle_ms: 2500 }) },
  };
}

function layersOf(s: ServerSchedule): string[] {
  const p = placeServer(s);
  const names = p.placed.map((x, i) => (x.layer === 'client' ? p.clients[p.placed.slice(0, i).filter((y) => y.layer === 'client').length]!.kind : x.layer));
  const away = s.steps.some((x) => x.layer === 'reorg' && x.away) && p.placed.some((x) => x.layer === 'reorg' && x.sceneSteps.length > 0);
  return [...new Set([...names.map((n) => (n === 'reorg' && away ? 'reorg-away' : n)), ...(p.dense ? ['dense'] : [])])];
}

export const feedServerChaos: ChaosModel<ServerSchedule> = {
  layers: SERVER_CHAOS_LAYERS,
  schedules: serverSchedules,
  scenario: (s, where) => serverChaosScenario(serverRunHere(s, where)),
  steps: (s, where) => placeServer(serverRunHere(s, where)).placed.map((x) => x.words),
  layersOf: (s, where) => layersOf(serverRunHere(s, where)),
};
