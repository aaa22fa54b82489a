// The feed lab's part of loading a scenario: the checks its schema cannot express (the script
// must be runnable — reorganisations the chain allows and that really happen, fault points and
// misbehaviour anchors the script reaches, heartbeats consistent with the link's latency, a
// deadline the run fits in) and the resolved plan (accounts and anchors resolved against the
// simulated chain, defaults filled, virtual time scaled into real time).

import type { FeedMisbehaviour } from '../../../../publisher/feed/server/misbehaviour.js';
import type { LabScenario } from '../../../lab-api/lab.js';
import type { RawProblem, Segment } from '../../../scenario/problems.js';
import { CORE_DEFAULTS, type CoreFile } from '../../../scenario/schema.js';
import { simulate } from './chain-script.js';
import { FAULT_SHAPE, parseFaultPlan } from './fault-plan.js';
import { badBackoff, badValue } from '../check/environment.js';
import { badEnvironmentValueProblems } from '../../../judge/environment-duty.js';
import type { ChainPlan, FeedPlan } from './plan.js';
import { DEFAULTS, FAULT_PLAN_PATTERN, type FeedFile, feedProperties, SERVER_FAULT_PATTERN } from './schema.js';
import { stormPlanOf, stormProblems } from '../storm/scenario.js';
import { serverUnderTestPlanOf, serverUnderTestProblems } from '../server/scenario.js';

export type { FeedPlan } from './plan.js';

type File = FeedFile & CoreFile;

const blocksOf = (file: FeedFile): number => Math.floor(file.time.duration_ms / (file.chain.block_interval_ms ?? DEFAULTS.blockIntervalMs));

export function chainPlanOf(file: FeedFile): ChainPlan {
  const c = file.chain;
  const initialBlocks = c.initial_blocks ?? DEFAULTS.initialBlocks;
  const reorgs = (c.reorgs ?? [])
    .map((r, i) => ({ i, afterBlock: r.after_block, depth: r.depth, length: r.length ?? r.depth, deep: r.deep ?? false }))
    .sort((a, b) => a.afterBlock - b.afterBlock || a.i - b.i)
    .map(({ i: _i, ...r }) => r);
  return {
    seed: c.seed,
    chainId: c.chain_id ?? DEFAULTS.chainId,
    accounts: c.accounts ?? DEFAULTS.accounts,
    confirmations: c.confirmations ?? DEFAULTS.confirmations,
    blockIntervalMs: c.block_interval_ms ?? DEFAULTS.blockIntervalMs,
    logsPerBlock: c.logs_per_block ? { ...c.logs_per_block } : { ...DEFAULTS.logsPerBlock },
    approvalShare: c.approval_share ?? DEFAULTS.approvalShare,
    ...(c.amount_bits === undefined ? {} : { amountBits: c.amount_bits }),
    initialBlocks,
    lastBlock: initialBlocks + blocksOf(file),
    ...(c.retention_ms === undefined ? {} : { retentionMs: c.retention_ms }),
    reorgs,
  };
}

/** Worst one-way latency (latency + jitter) the scenario's toxics add in each direction, in real ms. */
export function worstLatency(faults: CoreFile['faults']): { upstream: number; downstream: number } {
  const worst = { upstream: 0, downstream: 0 };
  for (const f of faults ?? []) {
    if (f.network?.toxic !== 'latency') continue;
    const stream = f.network.stream ?? 'downstream';
    const ms = (f.network.attributes?.latency ?? 0) + (f.network.attributes?.jitter ?? 0);
    worst[stream] = Math.max(worst[stream], ms);
  }
  return worst;
}

/** Real milliseconds of the script: its blocks and the confirmation blocks, one block period each. */
const scriptRealMs = (plan: ChainPlan, timeScale: number): number =>
  Math.round((plan.lastBlock - plan.initialBlocks + plan.confirmations) * plan.blockIntervalMs * timeScale);

/** The misbehaviour anchor's event cursor, or why there is none. */
function anchorCursor(
  rule: { event?: number; block?: number },
  produced: readonly { cursor: string }[],
  initialBlocks: number,
): { cursor: string } | { problem: string; field: 'event' | 'block' } {
  if (rule.event !== undefined) {
    const e = produced[rule.event - 1];
    return e
      ? { cursor: e.cursor }
      : { problem: `the script produces ${produced.length} events for the followed accounts (got event ${rule.event})`, field: 'event' };
  }
  const block = rule.block ?? 0;
  if (block <= initialBlocks) return { problem: `must be above initial_blocks (${initialBlocks}): misbehaviour is anchored in the script`, field: 'block' };
  const e = produced.find((p) => Number(p.cursor.split(':')[1]) >= block);
  return e ? { cursor: e.cursor } : { problem: `no event for the followed accounts is produced in block ${block} or later`, field: 'block' };
}

export const feedScenario: LabScenario<FeedPlan> = {
  schema: { properties: feedProperties, required: ['chain', 'time', 'consumer'] },

  patternMessage(pattern, value) {
    if (pattern === SERVER_FAULT_PATTERN)
      return `must look like <exit|stop>@<snapshot|event|revoke>:<n>[,...] with n >= 1 and no spaces, e.g. stop@snapshot:1 (got ${JSON.stringify(value)})`;
    if (pattern !== FAULT_PLAN_PATTERN) return undefined;
    const result = parseFaultPlan(value);
    return `must look like ${FAULT_SHAPE} (got ${JSON.stringify(value)})${result.ok ? '' : `: ${result.reason}`}`;
  },

  // Fault points valued by position are block numbers: the script's blocks are below lastBlock + 1.
  positions: (file) => chainPlanOf(file as unknown as FeedFile).lastBlock + 1,

  semanticProblems(raw) {
    const file = raw as unknown as File;
    const out: RawProblem[] = [];
    const problem: Report = (segments, message, at = 'value') => out.push({ segments, at, message });
    const plan = chainPlanOf(file);
    basicProblems(file, plan, problem);
    const reorgsOk = reorgProblems(file, plan, problem);
    const sim = runnableScript(file, plan, reorgsOk) ? simulate(plan, file.consumer.topics) : undefined;
    if (sim) unreachedReorgProblems(file, plan, sim, problem);
    faultPointProblems(file, plan, sim, problem);
    misbehaviourProblems(file, plan, sim, problem);
    contractVariableProblems(file, problem);
    out.push(...badEnvironmentProblems(file));
    const deadline = deadlineProblems(file, plan, problem);
    out.push(...stormProblems(file, deadline));
    out.push(...serverUnderTestProblems(file, plan, sim));
    return out;
  },

  resolve(raw, timeScale) {
    const file = raw as unknown as File;
    const chain = chainPlanOf(file);
    const topicIndexes = [...file.consumer.topics];
    const sim = simulate(chain, topicIndexes);
    const misbehaviour: FeedMisbehaviour[] = [];
    const anchors: string[] = [];
    for (const rule of file.server?.misbehave ?? []) {
      const anchor = anchorCursor(rule, sim.produced, chain.initialBlocks);
      if (!('cursor' in anchor)) continue; // refused by semanticProblems
      anchors.push(rule.event !== undefined ? `event ${rule.event}` : `block ${rule.block}`);
      const connection = rule.from_connection === undefined ? rule.connection : { from: rule.from_connection };
      const common = { at: anchor.cursor, ...(connection === undefined ? {} : { connection }) };
      switch (rule.action) {
        case 'resend':
          misbehaviour.push({ ...common, action: 'resend', count: rule.count ?? DEFAULTS.resendCount });
          break;
        case 'malformed':
          misbehaviour.push({ ...common, action: 'malformed', form: rule.form ?? 'trailing-comma' });
          break;
        case 'stall':
          misbehaviour.push({ ...common, action: 'stall', ...(rule.ms === undefined ? {} : { ms: rule.ms }) });
          break;
        default:
          misbehaviour.push({ ...common, action: rule.action });
      }
    }
    const processes = (file.consumer.processes ?? [{}]).map((p) => (p.fault === undefined ? {} : { fault: p.fault }));
    const blockPeriodMs = chain.blockIntervalMs * timeScale;
    return {
      chain,
      topics: sim.topics,
      topicIndexes,
      server: {
        queueLimit: file.server?.queue_limit ?? DEFAULTS.queueLimit,
        pingMs: file.server?.ping_ms ?? DEFAULTS.serverPingMs,
        idleMs: file.server?.idle_ms ?? DEFAULTS.serverIdleMs,
        misbehaviour,
        anchors,
      },
      consumer: {
        clientId: file.consumer.client_id ?? DEFAULTS.clientId,
        pingMs: file.consumer.ping_ms ?? DEFAULTS.consumerPingMs,
        idleMs: file.consumer.idle_ms ?? DEFAULTS.consumerIdleMs,
        backoffBaseMs: file.consumer.backoff_base_ms ?? DEFAULTS.backoffBaseMs,
        backoffCapMs: file.consumer.backoff_cap_ms ?? DEFAULTS.backoffCapMs,
        applyDelayMs: file.consumer.apply_delay_ms ?? DEFAULTS.applyDelayMs,
        processes,
        restart: {
          max: file.consumer.restart?.max ?? Math.max(processes.length, DEFAULTS.restartMax),
          delayMs: file.consumer.restart?.delay_ms ?? DEFAULTS.restartDelayMs,
        },
        ...(file.consumer.env || file.consumer.unset
          ? { badEnvironment: { set: { ...(file.consumer.env ?? {}) } as Record<string, string>, unset: [...(file.consumer.unset ?? [])] } }
          : {}),
      },
      time: {
        durationMs: file.time.duration_ms,
        blockPeriodMs,
        scriptMs: scriptRealMs(chain, timeScale),
        convergeMs: file.time.converge_ms ?? DEFAULTS.convergeMs,
        startMs: file.time.start_ms ?? DEFAULTS.startMs,
        latencyMs: worstLatency(file.faults).upstream + worstLatency(file.faults).downstream,
      },
      expect: {
        ...(file.expect?.processes === undefined ? {} : { processes: file.expect.processes }),
        quietPing: file.expect?.quiet_ping === true,
      },
      ...(file.storm ? { storm: stormPlanOf(file.storm) } : {}),
      ...(file.server?.under_test ? { serverUnderTest: serverUnderTestPlanOf(file)! } : {}),
    };
  },
};

/** Which reorganisation's new branch covers `block`, in words. */
/** Reports one problem of the scenario file: where it is, what is wrong. */
type Report = (segments: Segment[], message: string, at?: 'key' | 'value') => void;
type Simulation = ReturnType<typeof simulate>;

const scriptBlocksOf = (plan: ChainPlan): string => `the script mines blocks ${plan.initialBlocks + 1}..${plan.lastBlock}`;

/** The description, the chain's block counts and the followed accounts. */
function basicProblems(file: File, plan: ChainPlan, problem: Report): void {
  if (!/virtual/i.test(file.description))
    problem(
      ['description'],
      'must say what the script\'s virtual time stands for (e.g. "virtual time runs 10x faster than real time: a 2.5 s block takes 250 ms")',
    );

  const c = file.chain;
  if (c.logs_per_block && c.logs_per_block.min > c.logs_per_block.max)
    problem(['chain', 'logs_per_block', 'min'], `must be <= max (got min ${c.logs_per_block.min}, max ${c.logs_per_block.max})`);
  const blocks = blocksOf(file);
  if (blocks < 1)
    problem(['time', 'duration_ms'], `must last at least one block interval (${plan.blockIntervalMs} ms of virtual time; got ${file.time.duration_ms})`);
  if (plan.lastBlock > 10_000) problem(['time', 'duration_ms'], `the script would mine ${blocks} blocks after the initial ones; at most 10 000 blocks in all`);

  file.consumer.topics.forEach((index, i) => {
    if (index >= plan.accounts) problem(['consumer', 'topics', i], `the chain has accounts 0..${plan.accounts - 1} (got ${index})`);
  });
}

/** Reorganisations the chain refuses; true when there is none. */
function reorgProblems(file: File, plan: ChainPlan, problem: Report): boolean {
  const scriptBlocks = scriptBlocksOf(plan);
  return (file.chain.reorgs ?? []).every((r, i) => {
    const at = (key: string): Segment[] => ['chain', 'reorgs', i, key];
    let refused = false;
    const refuse = (segments: Segment[], message: string) => {
      refused = true;
      problem(segments, message);
    };
    if (r.after_block <= plan.initialBlocks || r.after_block > plan.lastBlock)
      refuse(at('after_block'), `must be a block of the script: ${scriptBlocks} (got ${r.after_block})`);
    if (r.length !== undefined && r.length < r.depth) refuse(at('length'), `must be at least depth ${r.depth} (got ${r.length}): the head never moves back`);
    if (r.depth > r.after_block) refuse(at('depth'), `reaches below block 1 (after block ${r.after_block}, depth ${r.depth}); genesis stays`);
    else if (!r.deep && r.depth > plan.confirmations)
      refuse(
        at('depth'),
        `depth ${r.depth} reaches the safe height (confirmations: ${plan.confirmations}): only a deep reorganisation may, set \`deep: true\` or make it shallower`,
      );
    return !refused;
  });
}

/** Whether the script can be simulated: valid reorganisations, accounts, logs per block and length. */
function runnableScript(file: File, plan: ChainPlan, reorgsOk: boolean): boolean {
  const topicsOk = file.consumer.topics.every((index) => index < plan.accounts);
  const logsOk = plan.logsPerBlock.min <= plan.logsPerBlock.max;
  return reorgsOk && topicsOk && logsOk && blocksOf(file) >= 1 && plan.lastBlock <= 10_000;
}

/** Reorganisations the script would never reach. */
function unreachedReorgProblems(file: File, plan: ChainPlan, sim: Simulation, problem: Report): void {
  const happened = new Set(sim.reorgs.map((r) => r.ordinal));
  plan.reorgs.forEach((r, i) => {
    if (happened.has(i + 1) || sim.error) return;
    const fileIndex = (file.chain.reorgs ?? []).findIndex((f) => f.after_block === r.afterBlock && f.depth === r.depth);
    problem(
      ['chain', 'reorgs', fileIndex, 'after_block'],
      `block ${r.afterBlock} is never mined one by one: an earlier reorganisation's new branch ${describeSkip(sim.reorgs, r.afterBlock)}`,
    );
  });
  if (sim.error) problem(['chain', 'reorgs'], sim.error, 'key');
}

/** Fault points: blocks the script mines one by one, reorganisations that happen. */
function faultPointProblems(file: File, plan: ChainPlan, sim: Simulation | undefined, problem: Report): void {
  const scriptBlocks = scriptBlocksOf(plan);
  for (const [i, fault] of (file.faults ?? []).entries()) {
    for (const role of ['start', 'end'] as const) {
      const trigger = fault[role];
      if (!trigger) continue;
      const block = trigger.before_block;
      if (typeof block === 'number' && block < plan.lastBlock + 1) {
        if (block <= plan.initialBlocks)
          problem(['faults', i, role, 'before_block'], `block ${block} is an initial block, mined before the run: ${scriptBlocks}`);
        else if (sim && !sim.mined.has(block))
          problem(
            ['faults', i, role, 'before_block'],
            `block ${block} is never mined one by one: a reorganisation's new branch ${describeSkip(sim.reorgs, block)}`,
          );
      }
      const reorg = trigger.before_reorg;
      if (typeof reorg === 'number' && reorg > plan.reorgs.length)
        problem(
          ['faults', i, role, 'before_reorg'],
          `the script has ${plan.reorgs.length} reorganisation${plan.reorgs.length === 1 ? '' : 's'} (got ${reorg})`,
        );
      const event = trigger.before_event;
      if (typeof event === 'number' && sim) {
        const total = sim.produced.length + sim.events.filter((e) => Number(e.cursor.split(':')[1]) <= plan.initialBlocks).length;
        if (event > total) problem(['faults', i, role, 'before_event'], `the chain has at most ${total} events for the followed accounts (got ${event})`);
      }
    }
  }
}

/** Misbehaviour: anchors the script reaches, options that belong to the action. */
function misbehaviourProblems(file: File, plan: ChainPlan, sim: Simulation | undefined, problem: Report): void {
  for (const [i, rule] of (file.server?.misbehave ?? []).entries()) {
    const at = (key: string): Segment[] => ['server', 'misbehave', i, key];
    const only: [keyof typeof rule, string][] = [
      ['count', 'resend'],
      ['form', 'malformed'],
      ['ms', 'stall'],
    ];
    for (const [key, action] of only) if (rule[key] !== undefined && rule.action !== action) problem(at(key), `only a ${action} takes \`${key}\``, 'key');
    if (rule.connection !== undefined && rule.from_connection !== undefined)
      problem(
        at('from_connection'),
        `give \`connection\` (exactly that connection) or \`from_connection\` (the first from it on that is about to send the event), not both`,
        'key',
      );
    if (!sim) continue;
    const anchor = anchorCursor(rule, sim.produced, plan.initialBlocks);
    if ('problem' in anchor) {
      problem(at(anchor.field), anchor.problem);
      continue;
    }
    // An amount is checked in a Transfer only: anywhere else the "bad" amount is no bad frame at all.
    const type = sim.produced.find((e) => e.cursor === anchor.cursor)?.type;
    if ((rule.action === 'number-amount' || rule.form === 'noncanonical-amount') && type !== undefined && type !== 'Transfer')
      problem(at(rule.event !== undefined ? 'event' : 'block'), `${rule.form ?? rule.action} needs a Transfer, but the anchor ${anchor.cursor} is a ${type}`);
  }
}

/** The contract's variables must agree with the server's heartbeat and the link's latency. */
function contractVariableProblems(file: File, problem: Report): void {
  const latency = worstLatency(file.faults);
  const serverPing = file.server?.ping_ms ?? DEFAULTS.serverPingMs;
  const serverIdle = file.server?.idle_ms ?? DEFAULTS.serverIdleMs;
  const consumerPing = file.consumer.ping_ms ?? DEFAULTS.consumerPingMs;
  const consumerIdle = file.consumer.idle_ms ?? DEFAULTS.consumerIdleMs;
  if (serverIdle < 2 * consumerPing + latency.upstream)
    problem(
      file.server?.idle_ms === undefined ? ['server'] : ['server', 'idle_ms'],
      `the server's idle_ms (${serverIdle}) must be at least twice the consumer's ping_ms (${consumerPing}) plus the worst upstream latency (${latency.upstream} ms): otherwise it closes live connections`,
      file.server?.idle_ms === undefined ? 'key' : 'value',
    );
  if (consumerIdle < 2 * serverPing + latency.downstream)
    problem(
      file.consumer.idle_ms === undefined ? ['consumer'] : ['consumer', 'idle_ms'],
      `the consumer's idle_ms (${consumerIdle}) must be at least twice the server's ping_ms (${serverPing}) plus the worst downstream latency (${latency.downstream} ms): otherwise it drops live connections`,
      file.consumer.idle_ms === undefined ? 'key' : 'value',
    );
  const base = file.consumer.backoff_base_ms ?? DEFAULTS.backoffBaseMs;
  const cap = file.consumer.backoff_cap_ms ?? DEFAULTS.backoffCapMs;
  if (cap < base)
    problem(
      ['consumer', file.consumer.backoff_cap_ms === undefined ? 'backoff_base_ms' : 'backoff_cap_ms'],
      `backoff_cap_ms (${cap}) must be at least backoff_base_ms (${base})`,
    );
  const listed = file.consumer.processes?.length ?? 1;
  const max = file.consumer.restart?.max;
  if (max !== undefined && max < listed) problem(['consumer', 'restart', 'max'], `must be at least the number of listed processes, ${listed} (got ${max})`);
  const expected = file.expect?.processes;
  if (expected !== undefined && expected > (max ?? Math.max(listed, DEFAULTS.restartMax)))
    problem(['expect', 'processes'], `more than consumer.restart.max allows (${max ?? Math.max(listed, DEFAULTS.restartMax)})`);
}

/** Long-running consumers are killed at the core's deadline: the whole run must fit in it. Returns the deadline. */
function deadlineProblems(file: File, plan: ChainPlan, problem: Report): number {
  const timeScale = file.time_scale ?? 1;
  const deadline = file.deadline_ms ?? CORE_DEFAULTS.deadlineMs;
  const need = scriptRealMs(plan, timeScale) + (file.time.converge_ms ?? DEFAULTS.convergeMs) + 5000;
  if (blocksOf(file) >= 1 && deadline < need)
    problem(
      file.deadline_ms === undefined ? ['time', 'duration_ms'] : ['deadline_ms'],
      `consumer processes are killed at deadline_ms (${deadline} ms${file.deadline_ms === undefined ? ', the default' : ''}), but the script takes ${scriptRealMs(plan, timeScale)} ms of real time and the stores get up to ${file.time.converge_ms ?? DEFAULTS.convergeMs} ms more: deadline_ms must be at least ${need}`,
    );
  return deadline;
}

function describeSkip(reorgs: readonly { ordinal: number; afterBlock: number; forkNumber: number; headAfter: number }[], block: number): string {
  const r = reorgs.find((x) => x.forkNumber <= block && block <= x.headAfter);
  return r ? `(reorganisation ${r.ordinal}, after block ${r.afterBlock}) mined blocks ${r.forkNumber}..${r.headAfter}` : 'moved the head past it';
}

/**
 * A bad environment grades one duty on its own: one plain process that must exit 64 before it
 * connects. Values the contract calls valid are refused (the scenario would grade nothing), as is
 * anything that assumes the process gets further.
 */
function badEnvironmentProblems(file: File): RawProblem[] {
  const consumer = file.consumer;
  if (!consumer.env && !consumer.unset) return [];
  const env: Record<string, string | undefined> = consumer.env ?? {};
  const unset = consumer.unset ?? [];
  const base = env.CHAOSLAB_BACKOFF_BASE_MS ?? String(consumer.backoff_base_ms ?? DEFAULTS.backoffBaseMs);
  const cap = env.CHAOSLAB_BACKOFF_CAP_MS ?? String(consumer.backoff_cap_ms ?? DEFAULTS.backoffCapMs);
  // BASE and CAP may each be valid alone and bad together (CAP < BASE).
  const backoffBad = badBackoff(base, cap) !== undefined;
  const out = badEnvironmentValueProblems(
    env,
    unset,
    (name, value) => badValue(name, value) !== undefined || (backoffBad && /^CHAOSLAB_BACKOFF_(BASE|CAP)_MS$/.test(name)),
  );
  const why = 'with consumer.env or consumer.unset the scenario runs one plain process, which must exit 64 before it connects';
  if ((consumer.processes ?? [{}]).length > 1 || consumer.processes?.some((p) => p.fault !== undefined))
    out.push({ segments: ['consumer', 'processes'], at: 'key', message: `leave it out: ${why}` });
  if (consumer.restart) out.push({ segments: ['consumer', 'restart'], at: 'key', message: `leave it out: ${why}` });
  if (file.server?.misbehave) out.push({ segments: ['server', 'misbehave'], at: 'key', message: `leave it out: ${why}` });
  if (file.expect?.processes !== undefined && file.expect.processes !== 1)
    out.push({ segments: ['expect', 'processes'], at: 'value', message: `must be 1: ${why}` });
  return out;
}
