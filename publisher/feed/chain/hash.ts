// Deterministic 32-byte hashes for the simulated chain: SHA-256 of the parts, `0x` + 64
// lowercase hex, the form real block and transaction hashes have.

import { createHash } from 'node:crypto';

export function hash32(...parts: readonly (string | number | bigint)[]): string {
  return `0x${createHash('sha256').update(parts.join('|')).digest('hex')}`;
}
