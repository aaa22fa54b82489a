// What happens in the simulated chain's blocks: ERC-20 style Transfer logs that never spend
// more than the sender holds, and Approval logs that change no balance. The total supply is
// exactly 2^256-1, held mostly by one account, so amounts cover the whole uint256 range while
// no balance can ever leave it.

import { MAX_UINT256 } from '../../../protocol/feed/amount.js';
import type { Prng } from './prng.js';

export type LogType = 'Transfer' | 'Approval';

export interface ChainLog {
  logIndex: number;
  txHash: string;
  type: LogType;
  /** Transfer: sender; Approval: owner. */
  from: string;
  /** Transfer: recipient; Approval: spender. */
  to: string;
  amount: bigint;
}

export type Balances = Map<string, bigint>;

export function makeAccounts(prng: Prng, count: number): string[] {
  const accounts = new Set<string>();
  while (accounts.size < count) accounts.add(`0x${prng.hex(20)}`);
  return [...accounts];
}

/** Genesis allocation: every account but the first gets up to 10^24; the first holds the rest of 2^256-1. */
export function genesisBalances(prng: Prng, accounts: readonly string[]): Balances {
  const balances: Balances = new Map();
  let rest = MAX_UINT256;
  for (const account of accounts.slice(1)) {
    const amount = prng.bigintBelow(10n ** 24n);
    balances.set(account, amount);
    rest -= amount;
  }
  balances.set(accounts[0]!, rest);
  return balances;
}

/** Adds (sign 1) or takes back (sign -1) a log's effect on balances; Approvals and self-transfers change nothing. */
export function applyLog(balances: Balances, log: ChainLog, sign: 1n | -1n): void {
  if (log.type !== 'Transfer' || log.from === log.to) return;
  const move = log.amount * sign;
  balances.set(log.from, (balances.get(log.from) ?? 0n) - move);
  balances.set(log.to, (balances.get(log.to) ?? 0n) + move);
}

/** Mostly modest amounts, sometimes nothing or everything, at any magnitude up to `max` (and `limit`). */
function amountUpTo(prng: Prng, whole: bigint, limit = MAX_UINT256): bigint {
  // The limit changes the amounts drawn, never how many draws are made.
  const max = whole < limit ? whole : limit;
  const roll = prng.int(0, 99);
  if (roll < 3 || max === 0n) return 0n;
  if (roll < 8) return max;
  const bits = prng.int(1, max.toString(2).length);
  const amount = prng.bigintBelow(1n << BigInt(bits));
  return amount > max ? max : amount;
}

export interface ActivityOptions {
  /** Share of logs that are Approvals instead of Transfers. */
  approvalShare: number;
  /** Amounts have at most this many bits (default 256: the whole uint256 range). */
  amountBits?: number;
}

/** One log at `logIndex`, applied to `balances` at once so later logs of the block see it. */
export function nextLog(prng: Prng, balances: Balances, accounts: readonly string[], logIndex: number, txHash: string, options: ActivityOptions): ChainLog {
  const limit = options.amountBits === undefined ? MAX_UINT256 : (1n << BigInt(options.amountBits)) - 1n;
  if (prng.chance(options.approvalShare)) {
    const amount = prng.chance(0.25) ? limit : amountUpTo(prng, MAX_UINT256, limit);
    return { logIndex, txHash, type: 'Approval', from: prng.pick(accounts), to: prng.pick(accounts), amount };
  }
  const funded = accounts.filter((a) => (balances.get(a) ?? 0n) > 0n);
  const from = prng.pick(funded.length ? funded : accounts);
  const log: ChainLog = { logIndex, txHash, type: 'Transfer', from, to: prng.pick(accounts), amount: amountUpTo(prng, balances.get(from) ?? 0n, limit) };
  applyLog(balances, log, 1n);
  return log;
}
