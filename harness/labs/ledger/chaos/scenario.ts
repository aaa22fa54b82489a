// A ledger chaos schedule (./chaos.ts draws them) as a scenario file, and its fault steps in
// words. Positions are drawn as plain numbers and taken modulo the script, so any schedule a
// shrink reaches still makes a valid scenario. Two rules keep every schedule fair to a correct
// consumer, whatever else it holds:
//   - timeouts: a "standard" schedule waits at most CHAOSLAB_TIMEOUT_MS (3 s) per network await,
//     so it may stall the link; a "patient" one (60 s, past the 10 s deadline) sends a fragment
//     without LF that only the 64-byte rule can refuse, so it may not stall;
//   - process 1 is the one with the contract's hooks (CHAOSLAB_FAULT); a step that could end it
//     cleanly (exit 0) before its first exit/raise hook fires — a cut, a reset, an upstream byte
//     limit, a half-open link whose end closes it, a pause past the publisher's ACK deadline —
//     starts after that hook's event (./placement.ts: a window after it, so the hook fires
//     first), so the hook's "exit non-zero" stays a fair expectation, as is a later process's
//     whose connection a gap, a conflict or a bad line ends (./placement.ts: exitsInError);
//     packet loss has no position (it may close a connection anywhere), so with loss no exit
//     status is judged.

import type { ChaosWhere } from '../../../lab-api/chaos-model.js';
import { generateDeltas } from '../../../scenario/generate.js';
import { type LedgerSchedule, placedSteps, exitsInError, type Step } from './placement.js';

export type { LedgerSchedule, Step };

// The publisher's ACK deadline stays below the consumer's timeout (a consumer that swallows an
// error and stays connected is then closed on and exits 0, which the hook's expectation catches),
// and both well above a commit's sync on a loaded machine.
export const TIMEOUTS = {
  standard: { timeoutMs: 5000, deadlineMs: 25_000 },
  patient: { timeoutMs: 60_000, deadlineMs: 12_000 },
  ackDeadlineMs: 3000,
} as const;

/** The malformed line forms of the catalogue's `malformed-*` scenarios, for EVENT `seq` with `delta`. */
export const MALFORMED: readonly { name: string; line(seq: number, delta: number): string }[] = [
  { name: 'CRLF', line: (s, d) => `EVENT ${s} ${d}\r\n` },
  { name: 'delta out of range', line: (s) => `EVENT ${s} 1001\n` },
  { name: 'double space', line: (s, d) => `EVENT  ${s} ${d}\n` },
  { name: 'empty line', line: () => '\n' },
  { name: 'extra field', line: (s, d) => `EVENT ${s} ${d} 0\n` },
  { name: 'leading zero', line: (s, d) => `EVENT 0${s} ${d}\n` },
  { name: 'lowercase', line: (s, d) => `event ${s} ${d}\n` },
  { name: 'minus zero', line: (s) => `EVENT ${s} -0\n` },
  { name: 'non-ASCII', line: (s, d) => `EVENT ${s} ${d}\xe9\n` },
  { name: 'over 64 bytes', line: (s, d) => `${`EVENT ${s} ${d}`.padEnd(70, ' ')}\n` },
  { name: 'plus sign', line: (s, d) => `EVENT ${s} +${Math.abs(d)}\n` },
  { name: 'tab', line: (s, d) => `EVENT\t${s} ${d}\n` },
];

/** Bad environments: a variable and the values the contract calls invalid (null: the variable left out). */
export const BAD_ENVIRONMENT: readonly { variable: string; values: readonly (string | null)[] }[] = [
  { variable: 'CHAOSLAB_TIMEOUT_MS', values: ['0', '-5', 'soon', '', '1.5', null] },
  { variable: 'CHAOSLAB_PORT', values: ['0', '70000', 'http', ''] },
  { variable: 'CHAOSLAB_DB', values: [null, ''] },
  { variable: 'CHAOSLAB_HOST', values: [null, ''] },
];

/** Where a schedule's steps go in the scenario file: core faults, publisher misbehaviour, retention moves, hook plans. */
interface ScenarioParts {
  faults: Record<string, unknown>[];
  misbehave: Record<string, unknown>[];
  moves: { connection: number; to: number }[];
  hooks: string[];
}

/** One step of a schedule, as the scenario file says it (a table of cases, one per layer). */
function addStep(step: Step, name: string, deltas: number[], { faults, misbehave, moves, hooks }: ScenarioParts): void {
  const before = (at: number) => ({ before_event: at });
  switch (step.layer) {
    case 'cut':
      faults.push({ name, network: { down: true }, start: before(step.at), end: { after_ms: step.ms } });
      break;
    case 'latency':
      faults.push({ name, network: toxic('latency', step.up, { latency: step.latency, jitter: 0 }), start: before(step.at), end: { after_ms: step.ms } });
      break;
    case 'slicer':
      faults.push({
        name,
        network: toxic('slicer', step.up, { average_size: step.size, size_variation: 0, delay: step.delay }),
        start: before(step.at),
        end: { after_ms: step.ms },
      });
      break;
    case 'bandwidth':
      faults.push({ name, network: toxic('bandwidth', false, { rate: step.rate }), start: before(step.at), end: { after_ms: step.ms } });
      break;
    case 'reset':
      faults.push({ name, network: toxic('reset_peer', false, { timeout: 0 }), start: before(step.at), end: { incarnation_exit: true } });
      break;
    case 'lost-ack':
      faults.push({ name, network: toxic('limit_data', true, { bytes: step.bytes }), start: before(step.at), end: { incarnation_exit: true } });
      break;
    case 'half-open':
      faults.push({ name: `${name}-down`, network: toxic('timeout', false, { timeout: 0 }), start: before(step.at), end: { after_ms: step.ms } });
      faults.push({ name: `${name}-up`, network: toxic('timeout', true, { timeout: 0 }), start: before(step.at), end: { after_ms: step.ms } });
      break;
    case 'kill':
      faults.push({ name, process: { signal: 'SIGKILL' }, start: step.onAck ? { on_ack: step.at } : before(step.at) });
      break;
    case 'pause':
      faults.push({ name, process: { signal: 'SIGSTOP' }, start: before(step.at), end: { after_ms: step.ms } });
      break;
    case 'loss':
      faults.push({ name, loss: { percent: step.percent }, start: { incarnation: 1 } });
      break;
    case 'hook':
      hooks.push(`${step.action}@${step.point}:${step.at}`);
      break;
    case 'duplicate':
      misbehave.push({ action: 'duplicate', seq: step.at, connection: step.connection });
      break;
    case 'gap':
      misbehave.push({ action: 'skip', seq: step.at, connection: step.connection });
      break;
    case 'conflict': {
      const c = conflictOf(step, deltas);
      if (c) misbehave.push({ action: 'insert', seq: step.at, bytes: `EVENT ${c.seq} ${c.delta}\n`, connection: step.connection });
      break;
    }
    case 'malformed':
      misbehave.push({
        action: 'insert',
        seq: step.at,
        bytes: MALFORMED[step.form % MALFORMED.length]!.line(step.at, deltas[step.at]!),
        connection: step.connection,
      });
      break;
    case 'stall':
      misbehave.push({ action: 'silence', seq: step.at, connection: step.connection });
      break;
    case 'oversized':
      // One rule, so the publisher falls silent only after the fragment: on a later connection
      // EVENT `at` may be behind the consumer's cursor, and a silence at `at + 1` alone stalled a
      // patient schedule (found by chaos-proof against the reference).
      misbehave.push({ action: 'silence', seq: step.at, bytes: 'A', repeat: 10240, connection: step.connection });
      break;
    case 'retention':
      moves.push({ connection: step.connection, to: step.to });
      break;
  }
}

/** The scenario file (the lab's keys and the core's faults and timeouts) for a schedule. */
export function ledgerChaosScenario(schedule: LedgerSchedule, where: ChaosWhere): Record<string, unknown> {
  if (schedule.kind === 'bad-environment') {
    const { variable, value } = badEnvironmentOf(schedule);
    return {
      deadline_ms: 10_000,
      events: { generate: { count: 5, seed: 1 } },
      consumer: value === null ? { unset: [variable] } : { env: { [variable]: value } },
    };
  }
  const steps = placedSteps(schedule, where);
  const deltas = generateDeltas({ count: schedule.count, seed: schedule.seed, min: -1000, max: 1000 });
  const { timeoutMs, deadlineMs } = schedule.patient ? TIMEOUTS.patient : TIMEOUTS.standard;
  const faults: Record<string, unknown>[] = [];
  const misbehave: Record<string, unknown>[] = [];
  const moves: { connection: number; to: number }[] = [];
  const hooks: string[] = [];
  for (const [i, step] of steps.entries()) addStep(step, `${step.layer}-${i + 1}`, deltas, { faults, misbehave, moves, hooks });
  const plan = [...new Set(hooks)].join(',');
  // Packet loss may close a connection anywhere: then no process's status is judged.
  const judged = steps.some((x) => x.layer === 'loss') ? [] : exitsInError(steps);
  return {
    timeout_ms: timeoutMs,
    deadline_ms: deadlineMs,
    events: { generate: { count: schedule.count, seed: schedule.seed } },
    publisher: {
      window: schedule.window,
      redeliver_unacked: schedule.redeliver,
      forget_acked: schedule.forgetAcked,
      ack_deadline_ms: TIMEOUTS.ackDeadlineMs,
      ...(moves.length ? { retention_moves: dedupeMoves(moves) } : {}),
      ...(misbehave.length ? { misbehave: dedupeMisbehave(misbehave) } : {}),
    },
    consumer: {
      // Restarts may end either way (the final state judges them), but a process that a hook or
      // a refused line ends exits non-zero (./placement.ts: exitsInError).
      incarnations: (judged.length ? judged : [false]).map((nonzero, i) => ({
        ...(i === 0 && plan ? { fault: plan } : {}),
        expect_exit: nonzero ? 'nonzero' : 'any',
      })),
      // At most 30 processes: a reference needed 8 at most in 200 random runs (six steps end a
      // few processes each), and a mutant that never completes (no-duplicate-ack waits out the
      // publisher's ACK deadline each time, 3 s) is as plainly wrong at 30 as at 100, in 100 s, not 320.
      restart: { until: 'complete', max: 30, delay_ms: 100 },
    },
    // A retention move may leave the log behind the consumer: then it must stop where RESYNC found it.
    ...(moves.length ? { expect: { final_last: 'resync' } } : {}),
    ...(faults.length ? { faults } : {}),
  };
}

const toxic = (type: string, up: boolean, attributes: Record<string, number>) => ({ toxic: type, stream: up ? 'upstream' : 'downstream', attributes });

/** The conflicting line: an earlier seq again, with a delta the script does not give it (none before seq 0). */
function conflictOf(step: Extract<Step, { layer: 'conflict' }>, deltas: readonly number[]): { seq: number; delta: number } | undefined {
  if (step.at === 0) return undefined;
  const seq = step.at - 1 - (step.back % step.at);
  const delta = step.delta === deltas[seq] ? (step.delta === 1000 ? 999 : step.delta + 1) : step.delta;
  return { seq, delta };
}

/** One rule per (seq, connection): the publisher takes the first rule for an EVENT. */
function dedupeMisbehave(rules: Record<string, unknown>[]): Record<string, unknown>[] {
  const seen = new Set<string>();
  return rules.filter((r) => {
    const key = `${r.seq}/${r.connection}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One move per connection: the first. */
const dedupeMoves = (moves: { connection: number; to: number }[]) => moves.filter((m, i) => moves.findIndex((x) => x.connection === m.connection) === i);

function badEnvironmentOf(s: Extract<LedgerSchedule, { kind: 'bad-environment' }>): { variable: string; value: string | null } {
  const entry = BAD_ENVIRONMENT[s.variable % BAD_ENVIRONMENT.length]!;
  return { variable: entry.variable, value: entry.values[s.value % entry.values.length]! };
}

/** The layers a schedule draws on, by the names of LEDGER_CHAOS_LAYERS. */
export function ledgerChaosLayers(schedule: LedgerSchedule, where: ChaosWhere): string[] {
  if (schedule.kind === 'bad-environment') return ['bad-environment'];
  return [...new Set([...placedSteps(schedule, where).map((s) => s.layer), ...(schedule.forgetAcked ? ['forget-acked'] : [])])];
}

/** The schedule's fault steps in words, as they take effect. */
export function ledgerChaosSteps(schedule: LedgerSchedule, where: ChaosWhere): string[] {
  if (schedule.kind === 'bad-environment') {
    const { variable, value } = badEnvironmentOf(schedule);
    return [value === null ? `bad environment: ${variable} left out` : `bad environment: ${variable}=${JSON.stringify(value)}`];
  }
  const deltas = generateDeltas({ count: schedule.count, seed: schedule.seed, min: -1000, max: 1000 });
  return placedSteps(schedule, where).flatMap((step) => stepWords(step, deltas));
}

function stepWords(step: Step, deltas: readonly number[]): string[] {
  const on = (c: number) => `on connection ${c}`;
  switch (step.layer) {
    case 'cut':
      return [`proxy down before EVENT ${step.at} for ${step.ms} ms`];
    case 'latency':
      return [`latency ${step.latency} ms ${step.up ? 'upstream' : 'downstream'} from EVENT ${step.at} for ${step.ms} ms`];
    case 'slicer':
      return [`${step.up ? 'upstream' : 'downstream'} sliced into ${step.size}-byte pieces ${step.delay} ms apart from EVENT ${step.at} for ${step.ms} ms`];
    case 'bandwidth':
      return [`downstream limited to ${step.rate} KB/s from EVENT ${step.at} for ${step.ms} ms`];
    case 'reset':
      return [`connection reset from EVENT ${step.at} (until that process exits)`];
    case 'lost-ack':
      return [`upstream cut after ${step.bytes} more bytes from EVENT ${step.at} (an ACK lost)`];
    case 'half-open':
      return [`half-open link (no data either way) from EVENT ${step.at} for ${step.ms} ms`];
    case 'kill':
      return [`SIGKILL ${step.onAck ? `when ACK ${step.at} arrives` : `before EVENT ${step.at}`}`];
    case 'pause':
      return [`SIGSTOP before EVENT ${step.at} for ${step.ms} ms`];
    case 'loss':
      return [`packet loss ${step.percent} % both ways`];
    case 'hook':
      return [`process 1's hook ${step.action}@${step.point}:${step.at}`];
    case 'duplicate':
      return [`EVENT ${step.at} sent twice ${on(step.connection)}`];
    case 'gap':
      return [`EVENT ${step.at} skipped (a gap) ${on(step.connection)}`];
    case 'conflict': {
      const c = conflictOf(step, deltas);
      return c ? [`conflicting \`EVENT ${c.seq} ${c.delta}\` before EVENT ${step.at} ${on(step.connection)}`] : [];
    }
    case 'malformed':
      return [`malformed line (${MALFORMED[step.form % MALFORMED.length]!.name}) before EVENT ${step.at} ${on(step.connection)}`];
    case 'stall':
      return [`publisher silent from EVENT ${step.at} ${on(step.connection)}`];
    case 'oversized':
      return [`10 KiB without LF instead of EVENT ${step.at} ${on(step.connection)}`];
    case 'retention':
      return [`retention moves to ${step.to} when connection ${step.connection} opens`];
  }
}
