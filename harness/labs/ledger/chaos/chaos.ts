// The ledger lab's chaos model: random schedules over every layer the scenario language has —
// the network through Toxiproxy, signals to the consumer, the contract's own hooks, the
// publisher's misbehaviour and retention, packet loss where sealed, and a bad environment —
// drawn with fast-check, turned into scenarios by ./scenario.ts. Each layer can reach at
// least one mutant of consumer/ledger/mutants/ (named beside it).

import fc from 'fast-check';
import type { ChaosLayer, ChaosModel } from '../../../lab-api/chaos-model.js';
import { BAD_ENVIRONMENT, type LedgerSchedule, ledgerChaosLayers, ledgerChaosScenario, ledgerChaosSteps, MALFORMED, type Step } from './scenario.js';

export const LEDGER_CHAOS_LAYERS: readonly ChaosLayer[] = [
  { name: 'cut', what: 'the proxy down for 0.1–1.5 s (open connections closed, new ones refused)' },
  { name: 'latency', what: 'latency one way, for a while' },
  { name: 'slicer', what: 'the stream sliced into small pieces, for a while' },
  { name: 'bandwidth', what: 'a starved downstream, for a while' },
  { name: 'reset', what: 'connections reset (reset_peer) until that process exits' },
  { name: 'lost-ack', what: 'the upstream cut after a few bytes: an ACK lost (limit_data)' },
  { name: 'half-open', what: 'no data either way (timeout toxic), standard timeouts only' },
  { name: 'kill', what: 'SIGKILL before an EVENT or when an ACK arrives' },
  { name: 'pause', what: 'SIGSTOP for up to 1.5 s, then SIGCONT' },
  { name: 'hook', what: "the contract's CHAOSLAB_FAULT in process 1: exit, raise or stop at apply or ack" },
  { name: 'duplicate', what: 'an EVENT sent twice' },
  { name: 'gap', what: 'an EVENT skipped' },
  { name: 'conflict', what: 'an earlier seq again with another delta' },
  { name: 'malformed', what: "a malformed line, in each form of the catalogue's malformed-* scenarios" },
  { name: 'stall', what: 'the publisher falls silent, standard timeouts only' },
  { name: 'oversized', what: '10 KiB without LF, patient timeouts only' },
  { name: 'retention', what: 'the log moves on while the consumer is away (RESYNC expected, judged by final_last: resync)' },
  { name: 'forget-acked', what: 'the publisher forgets what was acknowledged (a schedule-wide setting)' },
  { name: 'loss', what: 'real packet loss, 2–15 % both ways', sealedOnly: true },
  { name: 'bad-environment', what: 'a missing or invalid CHAOSLAB_* variable: exit 64 before connecting' },
];

/** A position in the script: taken modulo its length (./scenario.ts), so it survives any shrink. */
const at = fc.nat({ max: 119 });
/** Mostly the first connection (every run has one); later ones only exist after a restart. */
const connection = fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) });
const ms = (min: number, max: number) => fc.integer({ min, max });

const STEPS = {
  cut: fc.record({ layer: fc.constant('cut' as const), at, ms: ms(100, 1500) }),
  latency: fc.record({ layer: fc.constant('latency' as const), at, up: fc.boolean(), latency: ms(10, 200), ms: ms(200, 2000) }),
  slicer: fc.record({ layer: fc.constant('slicer' as const), at, up: fc.boolean(), size: fc.integer({ min: 1, max: 8 }), delay: ms(0, 3), ms: ms(200, 2000) }),
  bandwidth: fc.record({ layer: fc.constant('bandwidth' as const), at, rate: fc.integer({ min: 1, max: 16 }), ms: ms(200, 1500) }),
  reset: fc.record({ layer: fc.constant('reset' as const), at }),
  lostAck: fc.record({ layer: fc.constant('lost-ack' as const), at, bytes: fc.integer({ min: 1, max: 120 }) }),
  halfOpen: fc.record({ layer: fc.constant('half-open' as const), at, ms: ms(300, 3000) }),
  kill: fc.record({ layer: fc.constant('kill' as const), at, onAck: fc.boolean() }),
  pause: fc.record({ layer: fc.constant('pause' as const), at, ms: ms(100, 1500) }),
  hook: fc.record({
    layer: fc.constant('hook' as const),
    action: fc.oneof(
      { weight: 2, arbitrary: fc.constant('exit' as const) },
      { weight: 2, arbitrary: fc.constant('raise' as const) },
      { weight: 1, arbitrary: fc.constant('stop' as const) },
    ),
    point: fc.constantFrom('apply' as const, 'ack' as const),
    at,
  }),
  duplicate: fc.record({ layer: fc.constant('duplicate' as const), at, connection }),
  gap: fc.record({ layer: fc.constant('gap' as const), at, connection }),
  conflict: fc.record({ layer: fc.constant('conflict' as const), at, back: fc.nat({ max: 9 }), delta: fc.integer({ min: -1000, max: 1000 }), connection }),
  malformed: fc.record({ layer: fc.constant('malformed' as const), at, form: fc.nat({ max: MALFORMED.length - 1 }), connection }),
  stall: fc.record({ layer: fc.constant('stall' as const), at, connection }),
  oversized: fc.record({ layer: fc.constant('oversized' as const), at, connection }),
  retention: fc.record({ layer: fc.constant('retention' as const), connection: fc.integer({ min: 2, max: 4 }), to: at }),
  loss: fc.record({ layer: fc.constant('loss' as const), percent: fc.integer({ min: 2, max: 15 }) }),
} satisfies Record<string, fc.Arbitrary<Step>>;

/**
 * How often each layer is drawn, relative to the others: the contract's hooks and the
 * publisher's misbehaviour most (each breaks one sentence of the contract when mishandled),
 * the network's slowness least (it tests robustness, and rarely changes a verdict). A layer that
 * alone reaches its mutant, and only when it is the first to end connection 1 (stall:
 * no-timeout, oversized: unbounded-line, malformed: lenient-parser), weighs more: at 2–3 of about 40,
 * a seed's 50 runs drew none in one seed of four or five.
 */
const WEIGHT: Record<keyof typeof STEPS, number> = {
  cut: 2,
  latency: 1,
  slicer: 1,
  bandwidth: 1,
  reset: 1,
  lostAck: 2,
  halfOpen: 2,
  kill: 3,
  pause: 1,
  hook: 9,
  duplicate: 3,
  gap: 4,
  conflict: 4,
  malformed: 8,
  stall: 5,
  oversized: 6,
  retention: 1,
  loss: 1,
};

/** The steps a schedule may hold: stalls only with standard timeouts, the fragment without LF only with patient ones. */
function stepArbitrary(patient: boolean): fc.Arbitrary<Step> {
  const excluded = new Set<keyof typeof STEPS>(patient ? ['halfOpen', 'stall'] : ['oversized']);
  const layers = (Object.keys(STEPS) as (keyof typeof STEPS)[]).filter((k) => !excluded.has(k));
  return fc.oneof(...layers.map((k) => ({ weight: WEIGHT[k], arbitrary: STEPS[k] as fc.Arbitrary<Step> })));
}

const streamSchedule: fc.Arbitrary<LedgerSchedule> = (() => {
  return fc.boolean().chain((patient) =>
    // Steps first: fast-check shrinks a record's fields in order, and fewer steps is what a shrink is for.
    fc.record({
      // At least one step, drawn as minLength 0 and filtered: with minLength 1, fast-check's
      // shrink never drops an array's last item (it keeps a suffix, or the first item and a
      // shrunk rest of at least one), so a repro kept a step it did not need.
      steps: fc.array(stepArbitrary(patient), { maxLength: 6 }).filter((steps) => steps.length > 0),
      kind: fc.constant('stream' as const),
      count: fc.integer({ min: 10, max: 120 }),
      seed: fc.nat(),
      window: fc.integer({ min: 1, max: 16 }),
      redeliver: fc.boolean(),
      forgetAcked: fc.boolean(),
      patient: fc.constant(patient),
    }),
  );
})();

const badEnvironment: fc.Arbitrary<LedgerSchedule> = fc.record({
  kind: fc.constant('bad-environment' as const),
  variable: fc.nat({ max: BAD_ENVIRONMENT.length - 1 }),
  value: fc.nat({ max: 5 }),
});

export const ledgerChaos: ChaosModel<LedgerSchedule> = {
  layers: LEDGER_CHAOS_LAYERS,
  // A bad environment is one process that exits at once: cheap, so it is drawn often enough for
  // the search to meet each variable's mishandling within a few dozen runs.
  schedules: () => fc.oneof({ weight: 8, arbitrary: streamSchedule }, { weight: 3, arbitrary: badEnvironment }),
  scenario: ledgerChaosScenario,
  steps: ledgerChaosSteps,
  layersOf: ledgerChaosLayers,
};
