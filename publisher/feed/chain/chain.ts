// The simulated chain behind the feed lab, fully determined by its seed and the sequence of
// calls: blocks of Transfer/Approval logs at a fixed virtual interval, and reorganisations
// that abandon the last k blocks for a new branch. Every block of every branch stays known
// by hash with its parent link, as a node keeps them, so a consumer's stale block hash can be
// traced back to where its branch left the canonical chain.

import { type ActivityOptions, type Balances, type ChainLog, applyLog, genesisBalances, makeAccounts, nextLog } from './activity.js';
import { hash32 } from './hash.js';
import { Prng } from './prng.js';

export interface Block {
  number: number;
  hash: string;
  parentHash: string;
  /** Virtual time: genesis time + number x block interval. */
  timeMs: number;
  logs: readonly ChainLog[];
}

export type ChainChange =
  | { kind: 'block'; block: Block }
  | {
      kind: 'reorg';
      /** The first abandoned block number (the revoke starts at its log index 0). */
      forkNumber: number;
      abandoned: readonly Block[];
      added: readonly Block[];
      /** Reached at or below the safe height: only an explicitly scripted deep reorg may. */
      deep: boolean;
    };

export interface ChainConfig {
  seed: number;
  chainId?: number;
  accounts?: number;
  /** Blocks at or below head - confirmations are safe (confirmed). */
  confirmations?: number;
  blockIntervalMs?: number;
  genesisTimeMs?: number;
  /** Logs per block, drawn uniformly from this range. */
  logsPerBlock?: { min: number; max: number };
  approvalShare?: number;
  /** Amounts of Transfers and Approvals have at most this many bits; default 256. */
  amountBits?: number;
}

export interface ReorgRequest {
  /** How many blocks at the head are abandoned. */
  depth: number;
  /** Blocks on the new branch (default `depth`; never fewer, so the head never moves back). */
  length?: number;
  /** Allows reaching at or below the safe height (a scripted deep reorg). */
  deep?: boolean;
}

export const ZERO_HASH = `0x${'0'.repeat(64)}`;

export class SimChain {
  readonly chainId: number;
  readonly accounts: readonly string[];
  readonly confirmations: number;
  readonly blockIntervalMs: number;
  readonly genesisTimeMs: number;
  readonly genesisBalances: ReadonlyMap<string, bigint>;
  private readonly prng: Prng;
  private readonly logsPerBlock: { min: number; max: number };
  private readonly activity: ActivityOptions;
  private readonly byHash = new Map<string, Block>();
  private readonly canonical: Block[] = [];
  private readonly balances: Balances;

  constructor(config: ChainConfig) {
    this.prng = new Prng(config.seed);
    this.chainId = config.chainId ?? 1;
    this.confirmations = config.confirmations ?? 6;
    this.blockIntervalMs = config.blockIntervalMs ?? 12_000;
    this.genesisTimeMs = config.genesisTimeMs ?? 1_700_000_000_000;
    this.logsPerBlock = config.logsPerBlock ?? { min: 0, max: 4 };
    this.activity = { approvalShare: config.approvalShare ?? 0.1, ...(config.amountBits === undefined ? {} : { amountBits: config.amountBits }) };
    const accountCount = config.accounts ?? 8;
    if (!Number.isSafeInteger(this.chainId) || this.chainId < 0) throw new RangeError(`chainId must be a non-negative safe integer (got ${this.chainId})`);
    if (!Number.isInteger(accountCount) || accountCount < 2) throw new RangeError(`need at least 2 accounts (got ${accountCount})`);
    if (!Number.isInteger(this.confirmations) || this.confirmations < 0)
      throw new RangeError(`confirmations must be an integer >= 0 (got ${this.confirmations})`);
    const { min, max } = this.logsPerBlock;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min || max > 9999)
      throw new RangeError(`logsPerBlock must be 0 <= min <= max <= 9999 (got ${min}..${max})`);
    this.accounts = makeAccounts(this.prng, accountCount);
    this.balances = genesisBalances(this.prng, this.accounts);
    this.genesisBalances = new Map(this.balances);
    this.remember({ number: 0, hash: hash32('genesis', this.chainId, config.seed), parentHash: ZERO_HASH, timeMs: this.genesisTimeMs, logs: [] });
  }

  get head(): Block {
    return this.canonical.at(-1)!;
  }

  /** The highest confirmed block number: head - confirmations, never below genesis. */
  get safeHeight(): number {
    return Math.max(0, this.head.number - this.confirmations);
  }

  get genesis(): Block {
    return this.canonical[0]!;
  }

  /** Any block ever made, on any branch. */
  block(hash: string): Block | undefined {
    return this.byHash.get(hash);
  }

  canonicalAt(number: number): Block | undefined {
    return this.canonical[number];
  }

  /** Every block ever made, in creation order (abandoned branches included). */
  allBlocks(): Block[] {
    return [...this.byHash.values()];
  }

  /** Balances after every canonical block up to and including `number` (genesis allocation included). */
  balancesAt(number: number): Map<string, bigint> {
    const balances = new Map(this.genesisBalances);
    for (const block of this.canonical.slice(1, number + 1)) for (const log of block.logs) applyLog(balances, log, 1n);
    return balances;
  }

  /** Mines the next block on the canonical chain. */
  mine(): ChainChange {
    return { kind: 'block', block: this.makeBlock() };
  }

  /** Abandons the last `depth` blocks and mines a new branch of `length` blocks from their parent. */
  reorg(request: ReorgRequest): ChainChange {
    const { depth, deep = false } = request;
    const length = request.length ?? depth;
    const head = this.head.number;
    if (!Number.isInteger(depth) || depth < 1 || depth > head)
      throw new RangeError(`reorg depth must be 1..${head} (the head's height; genesis stays), got ${depth}`);
    if (!Number.isInteger(length) || length < depth)
      throw new RangeError(`the new branch needs at least ${depth} blocks (got ${length}): the head never moves back`);
    const forkNumber = head - depth + 1;
    if (!deep && forkNumber <= this.safeHeight) {
      throw new RangeError(
        `a reorg of depth ${depth} reaches block ${forkNumber}, at or below the safe height ${this.safeHeight}; only a scripted deep reorg may`,
      );
    }
    const abandoned = this.canonical.splice(forkNumber);
    for (const block of [...abandoned].reverse()) for (const log of [...block.logs].reverse()) applyLog(this.balances, log, -1n);
    const added: Block[] = [];
    for (let i = 0; i < length; i++) added.push(this.makeBlock());
    return { kind: 'reorg', forkNumber, abandoned, added, deep: forkNumber <= head - this.confirmations };
  }

  private makeBlock(): Block {
    const parent = this.head;
    const number = parent.number + 1;
    const count = this.prng.int(this.logsPerBlock.min, this.logsPerBlock.max);
    const logs: ChainLog[] = [];
    for (let i = 0; i < count; i++) {
      const txHash = hash32('tx', this.chainId, number, i, this.prng.next());
      logs.push(nextLog(this.prng, this.balances, this.accounts, i, txHash, this.activity));
    }
    const salt = this.prng.next();
    const hash = hash32('block', this.chainId, number, parent.hash, salt, ...logs.map((l) => l.txHash));
    return this.remember({ number, hash, parentHash: parent.hash, timeMs: this.genesisTimeMs + number * this.blockIntervalMs, logs });
  }

  private remember(block: Block): Block {
    this.byHash.set(block.hash, block);
    this.canonical.push(block);
    return block;
  }
}
