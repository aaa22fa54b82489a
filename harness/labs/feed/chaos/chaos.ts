// The feed lab's chaos model: random schedules over every layer its scenario language has — the
// link through Toxiproxy, signals to the consumer, the contract's hooks, the server's
// misbehaviour, reorganisations, retention, heartbeats, amounts, slow readers and packet loss
// where sealed, bad environments and restart storms — drawn with fast-check, placed by
// ./place.ts and written by ./scenario.ts. Each layer can reach a mutant of
// consumer/feed/mutants/ (named beside it) or is there for the reference's sake.

import fc from 'fast-check';
import type { ChaosLayer, ChaosModel, ChaosWhere } from '../../../lab-api/chaos-model.js';
import { feedChaosScenario } from './scenario.js';
import { BAD_ENVIRONMENT, type FeedSchedule, MALFORMED, type Step, type StreamSchedule, TOPIC_SETS } from './steps.js';
import { feedChaosLayers, feedChaosSteps } from './words.js';

export const FEED_CHAOS_LAYERS: readonly ChaosLayer[] = [
  { name: 'cut', what: 'the proxy down for 1–8 blocks (always-null-subscribe, stale-block-hash: every reconnect)' },
  { name: 'latency', what: 'latency one way, for a while' },
  { name: 'slicer', what: 'the stream sliced into small pieces, for a while' },
  { name: 'bandwidth', what: 'a starved downstream, for a while' },
  { name: 'byte-limit', what: 'every connection cut after a few bytes (limit_data), for a while' },
  { name: 'reset', what: 'connections reset (reset_peer), for a while' },
  { name: 'half-open', what: "no data either way (timeout toxic) for 3–6.5 s, feed-half-open's heartbeats (no-idle-timeout)" },
  { name: 'kill', what: 'SIGKILL before a block; the harness restarts the consumer' },
  { name: 'pause', what: 'SIGSTOP for up to 1.5 s, then SIGCONT' },
  { name: 'hook', what: "the contract's CHAOSLAB_FAULT in process 1: exit, raise or stop at apply, commit, revoke or snapshot (split-commit)" },
  { name: 'resend', what: 'events the consumer holds sent again (no-dedupe)' },
  { name: 'malformed', what: 'an invalid frame instead of an event, in each form of the catalogue' },
  { name: 'number-amount', what: "a Transfer's amount as a JSON number (number-amount-accepted)" },
  { name: 'unknown-op', what: 'a frame of an unknown op, on a link where nothing else closes a connection' },
  { name: 'stall', what: 'the server silent on a connection, for a while or for good' },
  { name: 'reorg', what: 'a reorganisation while connected: delivered events revoked (ignore-revoke, revoke-keeps-balances)' },
  { name: 'reorg-away', what: 'a reorganisation while the consumer is cut off: a revoke at subscribe, or none (stale-block-hash)' },
  { name: 'deep-reorg', what: 'a deep reorganisation forking at or below the first snapshots: a revoke into the snapshot, a new one needed' },
  { name: 'stale-cursor', what: 'retention of a few blocks and a longer cut: `reset stale-cursor`, then a snapshot (stale-cursor-resubscribe)' },
  { name: 'quiet-account', what: 'the same, following an account with no event meanwhile: a plain resume (always-null-subscribe)' },
  { name: 'big-amounts', what: 'amounts over the whole uint256 range, above 2^53 and 2^64 (float-amounts)' },
  { name: 'quiet-ping', what: 'after convergence the idle server pings, and the pong is required (never-pongs)' },
  {
    name: 'slow-reader',
    what: 'dense blocks, an apply delay, a queue limit and 4 KiB socket buffers: `reset slow-consumer` (slow-as-stale)',
    sealedOnly: true,
  },
  { name: 'loss', what: 'real packet loss, 2–10 % both ways', sealedOnly: true },
  { name: 'bad-environment', what: 'a missing or invalid CHAOSLAB_* variable: exit 64 before connecting' },
  {
    name: 'restart-storm',
    what: 'the storm of feed-restart-storm at 4 processes, ~30 s (no-jitter, jitter-clamped-at-cap, immediate-retry, backoff-never-reset)',
  },
];

/** A position: taken modulo the script where it is placed, so it survives any shrink. */
const at = fc.nat({ max: 199 });
/** Mostly the first connection, which carries every event live; a later one (beside a fault that closes one) becomes the first from 2 on (./misbehave.ts). */
const connection = fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) });
const ms = (min: number, max: number) => fc.integer({ min, max });
const layer = <L extends Step['layer']>(name: L) => fc.constant(name);

const STEPS = {
  cut: fc.record({ layer: layer('cut'), at, blocks: fc.integer({ min: 1, max: 8 }) }),
  latency: fc.record({ layer: layer('latency'), at, up: fc.boolean(), latency: ms(20, 400), jitter: ms(0, 50), ms: ms(300, 2500) }),
  slicer: fc.record({ layer: layer('slicer'), at, up: fc.boolean(), size: fc.integer({ min: 1, max: 16 }), ms: ms(300, 2000) }),
  bandwidth: fc.record({ layer: layer('bandwidth'), at, rate: fc.integer({ min: 2, max: 32 }), ms: ms(300, 2000) }),
  byteLimit: fc.record({ layer: layer('byte-limit'), at, up: fc.boolean(), bytes: fc.integer({ min: 1, max: 2000 }), ms: ms(300, 2000) }),
  reset: fc.record({ layer: layer('reset'), at, up: fc.boolean(), ms: ms(200, 2000) }),
  halfOpen: fc.record({ layer: layer('half-open'), at, ms: ms(3000, 6500) }),
  kill: fc.record({ layer: layer('kill'), at }),
  pause: fc.record({ layer: layer('pause'), at, ms: ms(100, 1500) }),
  hook: fc.record({
    layer: layer('hook'),
    action: fc.constantFrom('exit' as const, 'raise' as const, 'stop' as const),
    // Apply weighs most: a hook between an event's writes is what split-commit is found by.
    point: fc.oneof(
      { weight: 3, arbitrary: fc.constant('apply' as const) },
      { weight: 1, arbitrary: fc.constantFrom('commit' as const, 'revoke' as const, 'snapshot' as const) },
    ),
    at,
  }),
  resend: fc.record({ layer: layer('resend'), at, count: fc.integer({ min: 1, max: 5 }), connection }),
  malformed: fc.record({ layer: layer('malformed'), at, form: fc.nat({ max: MALFORMED.length - 1 }), connection }),
  numberAmount: fc.record({ layer: layer('number-amount'), at, connection }),
  unknownOp: fc.record({ layer: layer('unknown-op'), at }),
  stall: fc.record({ layer: layer('stall'), at, forever: fc.boolean(), ms: ms(300, 3000), connection }),
  reorg: fc.record({
    layer: layer('reorg'),
    at,
    depth: fc.integer({ min: 1, max: 3 }),
    extra: fc.nat({ max: 2 }),
    away: fc.boolean(),
    awayAt: fc.nat({ max: 9 }),
    awayFor: fc.nat({ max: 2 }),
  }),
  deepReorg: fc.record({ layer: layer('deep-reorg'), at, depth: fc.nat({ max: 5 }), extra: fc.nat({ max: 2 }) }),
  // Quiet one time in five: a quiet account only resumes (always-null-subscribe is found by every cut too).
  stale: fc.record({
    layer: layer('stale-cursor'),
    at,
    retention: fc.integer({ min: 1, max: 4 }),
    extra: fc.nat({ max: 3 }),
    quiet: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  }),
  loss: fc.record({ layer: layer('loss'), percent: fc.integer({ min: 2, max: 10 }) }),
} satisfies Record<string, fc.Arbitrary<Step>>;

/**
 * The layers behind a mutant weigh more: with three or so steps a schedule, each turns up in a
 * quarter of the runs or more, so that every mutant is found within 10 runs (median over seeds).
 */
const WEIGHTS: Partial<Record<keyof typeof STEPS, number>> = {
  cut: 2,
  kill: 2,
  hook: 5,
  resend: 5,
  malformed: 2,
  // Fires only on a Transfer sent on its connection (./misbehave.ts aims it at one that carries it).
  numberAmount: 6,
  reorg: 7,
  halfOpen: 6,
  // A stale cursor counts only without a half-open step, and is the only way to stale-cursor-resubscribe.
  stale: 6,
};

function stepArbitrary(): fc.Arbitrary<Step> {
  const entries = Object.entries(STEPS) as [keyof typeof STEPS, fc.Arbitrary<Step>][];
  // A step shrinks only by going: under the capped shrink runs, each failing candidate costs two
  // runs, and fewer steps (not smaller numbers inside one) is what a repro's reader needs.
  return fc.noShrink(fc.oneof(...entries.map(([k, arbitrary]) => ({ weight: WEIGHTS[k] ?? 1, arbitrary }))));
}

function streamSchedule(): fc.Arbitrary<StreamSchedule> {
  // Only the steps shrink, and only by going: fewer steps is what a shrink is for, and a feed run
  // takes some 10 s, so the capped shrink runs are not spent on a chain a few blocks shorter or a
  // server ping a little faster (each such candidate costs one run, or two when it fails).
  return fc.record({
    steps: fc.array(stepArbitrary(), { minLength: 1, maxLength: 6 }),
    kind: fc.constant('stream' as const),
    seed: fc.noShrink(fc.nat()), // a chain's name, not a size: another seed is another chain
    blocks: fc.noShrink(fc.integer({ min: 12, max: 20 })),
    topics: fc.noShrink(fc.nat({ max: TOPIC_SETS.length - 1 })),
    bigAmounts: fc.noShrink(fc.boolean()),
    serverPing: fc.noShrink(fc.integer({ min: 300, max: 800 })),
    quietPing: fc.noShrink(fc.boolean()),
    // About one sealed stream run in four is a slow reader (some 10 s more; the only way to
    // slow-as-stale); dropped where runs are not sealed (runHere).
    slow: fc.noShrink(fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })),
  });
}

export const feedChaos: ChaosModel<FeedSchedule> = {
  layers: FEED_CHAOS_LAYERS,
  schedules: () =>
    fc.oneof(
      { weight: 14, arbitrary: streamSchedule() },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('bad-environment' as const), which: fc.nat({ max: BAD_ENVIRONMENT.length - 1 }) }) },
      // About one run in five: slow (~30 s), but the only way to judge the backoff's shape (four mutants).
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('storm' as const), seed: fc.nat() }) },
    ),
  scenario: (schedule, where) => feedChaosScenario(runHere(schedule, where)),
  steps: (schedule, where) => feedChaosSteps(runHere(schedule, where)),
  layersOf: (schedule, where) => feedChaosLayers(runHere(schedule, where)),
};

/**
 * The schedule as it runs here: one seed draws the same schedules everywhere, but packet loss and
 * the slow reader (socket buffers) need a sealed run — elsewhere that run would be skipped — so
 * where runs are not sealed they are left out.
 */
export function runHere(schedule: FeedSchedule, where: ChaosWhere): FeedSchedule {
  if (where.sealed || schedule.kind !== 'stream') return schedule;
  return { ...schedule, slow: false, steps: schedule.steps.filter((step) => step.layer !== 'loss') };
}
