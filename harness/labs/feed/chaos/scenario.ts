// A feed chaos schedule (./chaos.ts draws them) as a scenario file: the placement of
// ./place.ts written in the feed lab's keys and the core's faults. Windows that matter in
// chain time (cuts, retention) are anchored to blocks; the ones that matter in real time (a pause
// against the server's idle timeout, a half-open link against the consumer's) end after real
// milliseconds, written as virtual ones (after_ms is scaled by time_scale).

import { type Placed, place } from './place.js';
import { BACKOFF, type RuleConnection, BAD_ENVIRONMENT, CHAIN, type FeedSchedule, SLOW, STORM, type StreamSchedule } from './steps.js';

/** Every feed scenario's description says what its virtual time stands for: the core's words get this appended. */
const timeWords = (timeScale: number) =>
  `Virtual time runs ${Math.round(1 / timeScale)} times faster than real time (time_scale ${timeScale}): a ${CHAIN.blockIntervalMs / 1000} s block takes ${CHAIN.blockIntervalMs * timeScale} ms.`;

export function feedChaosScenario(schedule: FeedSchedule): Record<string, unknown> {
  if (schedule.kind === 'bad-environment') {
    const { env } = BAD_ENVIRONMENT[schedule.which % BAD_ENVIRONMENT.length]!;
    const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== null));
    const unset = Object.entries(env).flatMap(([k, v]) => (v === null ? [k] : []));
    return {
      description: `${timeWords(0.1)} The script never starts, nor does the control consumer.`,
      time_scale: 0.1,
      deadline_ms: 10_000,
      chain: { seed: 17, block_interval_ms: CHAIN.blockIntervalMs, initial_blocks: CHAIN.initialBlocks },
      time: { duration_ms: CHAIN.blockIntervalMs, converge_ms: 1000 },
      consumer: { topics: [0, 2, 3], ...(Object.keys(set).length ? { env: set } : {}), ...(unset.length ? { unset } : {}) },
    };
  }
  if (schedule.kind === 'storm')
    return {
      description: `${timeWords(0.1)} The chain's script is not run: it only supplies the topics, the snapshot and the events served.`,
      time_scale: 0.1,
      deadline_ms: 120_000,
      chain: {
        seed: schedule.seed,
        accounts: 6,
        confirmations: 3,
        block_interval_ms: CHAIN.blockIntervalMs,
        logs_per_block: { min: 0, max: 3 },
        initial_blocks: 10,
      },
      time: { duration_ms: 25_000, converge_ms: 5000 },
      consumer: { topics: [0, 2, 3], idle_ms: 30_000, backoff_base_ms: STORM.baseMs, backoff_cap_ms: STORM.capMs },
      storm: { processes: STORM.processes, rounds: STORM.rounds, round_ms: STORM.roundMs, min_at_cap: STORM.minAtCap },
    };
  return streamScenario(schedule);
}

/** A rule's connection in the scenario's keys: `connection: n`, or `from_connection: n` (the first from n on that is about to send its event). */
const connectionKeys = (c: RuleConnection): Record<string, number> => (typeof c === 'number' ? { connection: c } : { from_connection: c.from });

/** Where a schedule's steps go in the scenario file: core faults, server misbehaviour, hook plans. */
interface ScenarioParts {
  faults: Record<string, unknown>[];
  misbehave: Record<string, unknown>[];
  hooks: string[];
}

/** One placed step, as the scenario file says it (a table of cases, one per layer); `virtual` turns real ms into the scenario's time. */
function addStep(x: Placed, name: string, virtual: (realMs: number) => number, { faults, misbehave, hooks }: ScenarioParts): void {
  const toxic = (type: string, up: boolean, attributes: Record<string, number>) => ({ toxic: type, stream: up ? 'upstream' : 'downstream', attributes });
  const fault = (faultName: string, effect: Record<string, unknown>, from: number, end?: Record<string, unknown>) =>
    faults.push({ name: faultName, ...effect, start: { before_block: from }, ...(end ? { end } : {}) });
  const forMs = (ms: number) => ({ after_ms: virtual(ms) });
  switch (x.layer) {
    case 'cut':
    case 'stale-cursor':
      fault(name, { network: { down: true } }, x.from, { before_block: x.to });
      break;
    case 'reorg':
      if (x.away) fault(`${name}-away`, { network: { down: true } }, x.away.from, { before_block: x.away.to });
      break;
    case 'latency':
      fault(name, { network: toxic('latency', x.up, { latency: x.latency, jitter: x.jitter }) }, x.from, forMs(x.ms));
      break;
    case 'slicer':
      fault(name, { network: toxic('slicer', x.up, { average_size: x.size, size_variation: 0, delay: 0 }) }, x.from, forMs(x.ms));
      break;
    case 'bandwidth':
      fault(name, { network: toxic('bandwidth', false, { rate: x.rate }) }, x.from, forMs(x.ms));
      break;
    case 'byte-limit':
      fault(name, { network: toxic('limit_data', x.up, { bytes: x.bytes }) }, x.from, forMs(x.ms));
      break;
    case 'reset':
      fault(name, { network: toxic('reset_peer', x.up, { timeout: 0 }) }, x.from, forMs(x.ms));
      break;
    case 'half-open':
      fault(`${name}-down`, { network: toxic('timeout', false, { timeout: 0 }) }, x.from, forMs(x.ms));
      fault(`${name}-up`, { network: toxic('timeout', true, { timeout: 0 }) }, x.from, forMs(x.ms));
      break;
    case 'kill':
      fault(name, { process: { signal: 'SIGKILL' } }, x.at);
      break;
    case 'pause':
    case 'slow-reader':
      fault(name, { process: { signal: 'SIGSTOP' } }, x.from, forMs(x.ms));
      break;
    case 'loss':
      faults.push({ name, loss: { percent: x.percent }, start: x.from === undefined ? { incarnation: 1 } : { before_block: x.from } });
      break;
    case 'hook':
      hooks.push(x.item);
      break;
    case 'resend':
      misbehave.push({ action: 'resend', event: x.event, count: x.count, ...connectionKeys(x.connection) });
      break;
    case 'malformed':
      misbehave.push({ action: 'malformed', form: x.form, event: x.event, ...connectionKeys(x.connection) });
      break;
    case 'number-amount':
      misbehave.push({ action: 'number-amount', event: x.event, ...connectionKeys(x.connection) });
      break;
    case 'unknown-op':
      misbehave.push({ action: 'unknown-op', event: x.event });
      break;
    case 'stall':
      misbehave.push({ action: 'stall', event: x.event, ...(x.ms === undefined ? {} : { ms: x.ms }), ...connectionKeys(x.connection) });
      break;
    case 'deep-reorg':
      break; // in the chain's script
  }
}

function streamScenario(s: StreamSchedule): Record<string, unknown> {
  const p = place(s);
  const virtual = (realMs: number) => Math.round(realMs / p.timeScale);
  const faults: Record<string, unknown>[] = [];
  const misbehave: Record<string, unknown>[] = [];
  const hooks: string[] = [];
  for (const [i, x] of p.steps.entries()) addStep(x, `${x.layer}-${i + 1}`, virtual, { faults, misbehave, hooks });
  const { chain, link } = p;
  const scriptMs = (p.blocks + chain.confirmations + 10) * CHAIN.blockIntervalMs * p.timeScale;
  const quietMs = s.quietPing ? link.serverPingMs + link.serverIdleMs + 2000 : 0;
  return {
    description: timeWords(p.timeScale),
    time_scale: p.timeScale,
    deadline_ms: Math.max(60_000, Math.ceil(scriptMs + p.convergeMs + quietMs + 20_000)),
    ...(s.slow ? { socket_buffer_bytes: 4096 } : {}),
    chain: {
      seed: chain.seed,
      accounts: chain.accounts,
      confirmations: chain.confirmations,
      block_interval_ms: chain.blockIntervalMs,
      logs_per_block: chain.logsPerBlock,
      ...(chain.amountBits === undefined ? {} : { amount_bits: chain.amountBits }),
      initial_blocks: chain.initialBlocks,
      ...(chain.retentionMs === undefined ? {} : { retention_ms: chain.retentionMs }),
      ...(chain.reorgs.length
        ? { reorgs: chain.reorgs.map((r) => ({ after_block: r.afterBlock, depth: r.depth, length: r.length, ...(r.deep ? { deep: true } : {}) })) }
        : {}),
    },
    time: { duration_ms: p.blocks * chain.blockIntervalMs, converge_ms: p.convergeMs },
    server: {
      ping_ms: link.serverPingMs,
      idle_ms: link.serverIdleMs,
      ...(s.slow ? { queue_limit: SLOW.queueLimit } : {}),
      ...(misbehave.length ? { misbehave } : {}),
    },
    consumer: {
      topics: p.topics,
      ping_ms: link.consumerPingMs,
      idle_ms: link.consumerIdleMs,
      backoff_base_ms: BACKOFF.baseMs,
      backoff_cap_ms: BACKOFF.capMs,
      ...(s.slow ? { apply_delay_ms: SLOW.applyDelayMs } : {}),
      // Hooks in process 1 only; restarts (after a hook or a SIGKILL) run without.
      ...(hooks.length ? { processes: [{ fault: hooks.join(',') }] } : {}),
      restart: { max: 20 },
    },
    ...(s.quietPing ? { expect: { quiet_ping: true } } : {}),
    ...(faults.length ? { faults } : {}),
  };
}
