// Token amounts: canonical decimal strings of integers 0..2^256-1. A JSON number is never an
// amount: a double loses digits above 2^53, and "it converted" is not "it is the promised form".

import { describeJson } from './cursor.js';

export const MAX_UINT256 = (1n << 256n) - 1n;
const MAX_DIGITS = MAX_UINT256.toString().length; // 78
const CANONICAL_RE = /^(0|[1-9][0-9]*)$/;

export class AmountError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'AmountError';
  }
}

/** Parses a canonical amount string into a BigInt; throws AmountError saying what is wrong. */
export function parseAmount(value: unknown): bigint {
  if (typeof value !== 'string') throw new AmountError(`an amount must be a decimal string, not ${describeJson(value)}`);
  // The length check first keeps a hostile 1 MiB digit string away from BigInt().
  if (value.length > MAX_DIGITS || !CANONICAL_RE.test(value)) throw new AmountError(`${describeJson(value)} is not a canonical decimal amount`);
  const amount = BigInt(value);
  if (amount > MAX_UINT256) throw new AmountError(`amount ${value} is above 2^256-1`);
  return amount;
}

export function formatAmount(amount: bigint): string {
  if (amount < 0n || amount > MAX_UINT256) throw new AmountError(`amount ${amount} is outside 0..2^256-1`);
  return amount.toString();
}
