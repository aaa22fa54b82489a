// The chain's script, step by step: the initial blocks, then one block at a time up to the last
// block with the scripted reorganisations right after their block, then `confirmations` empty
// blocks so that the script's last block is safe. The run drives a live SimChain through these
// steps in real time; the scenario checks and the checker drive a second SimChain through the
// very same calls, in the same order, which gives the very same chain (its PRNG sees the same
// sequence), so the expected state is derived from the script alone, never from a consumer.

import type { ChainLog } from '../../../../publisher/feed/chain/activity.js';
import { type Block, type ChainChange, type ChainConfig, SimChain } from '../../../../publisher/feed/chain/chain.js';
import { hash32 } from '../../../../publisher/feed/chain/hash.js';
import type { RealEvent } from '../../../../publisher/feed/server/misbehaviour.js';
import { eventOf } from '../../../../publisher/feed/outbox/events.js';
import type { ChainPlan } from './plan.js';

export const chainConfig = (p: ChainPlan): ChainConfig => ({
  seed: p.seed,
  chainId: p.chainId,
  accounts: p.accounts,
  confirmations: p.confirmations,
  blockIntervalMs: p.blockIntervalMs,
  logsPerBlock: { ...p.logsPerBlock },
  approvalShare: p.approvalShare,
  ...(p.amountBits === undefined ? {} : { amountBits: p.amountBits }),
});

export type ScriptStep =
  | { kind: 'block'; number: number }
  /** `ordinal`: 1-based, in the order reorganisations happen. */
  | { kind: 'reorg'; ordinal: number; afterBlock: number; depth: number; length: number; deep: boolean };

export class ChainScript {
  private readonly due: Extract<ScriptStep, { kind: 'reorg' }>[] = [];

  constructor(
    readonly chain: SimChain,
    readonly plan: ChainPlan,
  ) {}

  /** The blocks mined before the listeners open. */
  mineInitial(): ChainChange[] {
    const changes: ChainChange[] = [];
    while (this.chain.head.number < this.plan.initialBlocks) changes.push(this.chain.mine());
    return changes;
  }

  /** What the script does next, or undefined once its last block is mined (confirmation blocks are separate). */
  next(): ScriptStep | undefined {
    if (this.due.length > 0) return this.due[0];
    if (this.chain.head.number < this.plan.lastBlock) return { kind: 'block', number: this.chain.head.number + 1 };
    return undefined;
  }

  perform(step: ScriptStep): ChainChange {
    if (step.kind === 'reorg') {
      this.due.shift();
      return this.chain.reorg({ depth: step.depth, length: step.length, deep: step.deep });
    }
    const change = this.chain.mine();
    const head = this.chain.head.number;
    this.plan.reorgs.forEach((r, i) => {
      if (r.afterBlock === head) this.due.push({ kind: 'reorg', ordinal: i + 1, ...r });
    });
    return change;
  }
}

/** `count` empty blocks on top of `head`: they only confirm what came before (no log, so no event). */
export function confirmationBlocks(chain: Pick<SimChain, 'chainId' | 'genesisTimeMs' | 'blockIntervalMs'>, head: Block, count: number): Block[] {
  const blocks: Block[] = [];
  let parent = head;
  for (let i = 0; i < count; i++) {
    const number = parent.number + 1;
    const block: Block = {
      number,
      hash: hash32('confirmation', chain.chainId, number, parent.hash),
      parentHash: parent.hash,
      timeMs: chain.genesisTimeMs + number * chain.blockIntervalMs,
      logs: [],
    };
    blocks.push(block);
    parent = block;
  }
  return blocks;
}

/** A log of a block as the event frame the publisher sends for it. */
export const eventOfLog = (chainId: number, block: Block, log: ChainLog): RealEvent =>
  eventOf({
    chain_id: chainId,
    block_number: block.number,
    log_index: log.logIndex,
    block_hash: block.hash,
    block_time_ms: block.timeMs,
    tx_hash: log.txHash,
    type: log.type,
    from_account: log.from,
    to_account: log.to,
    amount: log.amount.toString(),
  });

export interface SimulatedChain {
  chain: SimChain;
  topics: string[];
  /** The canonical chain's block hashes at the end, confirmation blocks included. */
  canonicalHash(number: number): string | undefined;
  headNumber: number;
  /** The canonical events for the topics at the end, in chain order: what every store must hold (above its snapshot). */
  events: RealEvent[];
  /** The topics' balances at the end. */
  balances: Map<string, bigint>;
  /** Events for the topics in the order the script produced them after the initial blocks (abandoned branches included). */
  produced: RealEvent[];
  /** Block numbers the script mines one by one (a reorganisation's new blocks are not among them). */
  mined: Set<number>;
  /** Reorganisations that happened, in order, with the block they abandoned the chain from. */
  reorgs: { ordinal: number; afterBlock: number; forkNumber: number; headAfter: number; deep: boolean }[];
  /** Why the script cannot run (a reorganisation the chain refuses), if it cannot. */
  error?: string;
}

const involves = (topics: ReadonlySet<string>, log: ChainLog): boolean => topics.has(log.from) || topics.has(log.to);

/** The cursor of the last event for `topics` that `change` committed (a block's, or a reorganisation's new blocks'), if any. */
export function lastEventOf(chainId: number, change: ChainChange, topics: readonly string[]): string | undefined {
  const followed = new Set(topics);
  const blocks = change.kind === 'block' ? [change.block] : change.added;
  let last: string | undefined;
  for (const block of blocks) for (const log of block.logs) if (involves(followed, log)) last = eventOfLog(chainId, block, log).cursor;
  return last;
}

/** Runs the whole script on a fresh chain, as the run will; `topicIndexes` out of range are ignored. */
export function simulate(plan: ChainPlan, topicIndexes: readonly number[]): SimulatedChain {
  const chain = new SimChain(chainConfig(plan));
  const topics = topicIndexes.flatMap((i) => (chain.accounts[i] === undefined ? [] : [chain.accounts[i]!]));
  const followed = new Set(topics);
  const script = new ChainScript(chain, plan);
  const produced: RealEvent[] = [];
  const mined = new Set<number>();
  const reorgs: SimulatedChain['reorgs'] = [];
  const record = (blocks: readonly Block[]) => {
    for (const block of blocks) for (const log of block.logs) if (involves(followed, log)) produced.push(eventOfLog(chain.chainId, block, log));
  };
  let error: string | undefined;
  let pruned = -1;
  const prunedThrough = (): number => {
    if (plan.retentionMs === undefined) return -1;
    // Block n's time is genesis + n x interval: the newest block older than the cutoff, by arithmetic.
    const cutoff = chain.head.timeMs - plan.retentionMs;
    const oldest = Math.min(chain.head.number, Math.ceil((cutoff - chain.genesisTimeMs) / chain.blockIntervalMs) - 1);
    return Math.max(pruned, Math.min(oldest, chain.safeHeight));
  };
  script.mineInitial();
  pruned = prunedThrough();
  try {
    for (let step = script.next(); step; step = script.next()) {
      if (step.kind === 'block') {
        mined.add(step.number);
        const change = script.perform(step);
        if (change.kind === 'block') record([change.block]);
      } else {
        const change = script.perform(step);
        if (change.kind !== 'reorg') continue;
        if (change.forkNumber <= pruned)
          throw new Error(`reorganisation ${step.ordinal} reaches block ${change.forkNumber}, which retention has already deleted (through block ${pruned})`);
        record(change.added);
        reorgs.push({ ordinal: step.ordinal, afterBlock: step.afterBlock, forkNumber: change.forkNumber, headAfter: chain.head.number, deep: change.deep });
      }
      pruned = prunedThrough();
    }
  } catch (caught) {
    error = (caught as Error).message;
  }
  const confirmations = confirmationBlocks(chain, chain.head, plan.confirmations);
  const head = chain.head.number;
  const events: RealEvent[] = [];
  for (let n = 1; n <= head; n++) {
    const block = chain.canonicalAt(n)!;
    for (const log of block.logs) if (involves(followed, log)) events.push(eventOfLog(chain.chainId, block, log));
  }
  const all = chain.balancesAt(head);
  return {
    chain,
    topics,
    canonicalHash: (number) => (number <= head ? chain.canonicalAt(number)?.hash : confirmations[number - head - 1]?.hash),
    headNumber: head + confirmations.length,
    events,
    balances: new Map(topics.map((a) => [a, all.get(a) ?? 0n])),
    produced,
    mined,
    reorgs,
    ...(error === undefined ? {} : { error }),
  };
}
