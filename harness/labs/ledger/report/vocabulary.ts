// How the reports speak the ledger protocol: the kinds of wire line and their colours, which
// traffic is routine (in-order EVENTs and ACKs collapse in long diagrams), which lines break the
// grammar (protocol/ledger/wire.ts judges), a store in a few words.

import { grammarBreak } from '../../../../protocol/ledger/wire.js';
import type { Vocabulary } from '../../../lab-api/lab.js';
import type { StoreSnapshot } from '../check/store-reader.js';

const WORDS = ['EVENT', 'ACK', 'RESUME', 'RESYNC'] as const;

/** The integer right after the first word (at `from`), or undefined. No allocation: this runs for every line. */
function seqAt(line: string, from: number): number | undefined {
  let i = from;
  const negative = line.charCodeAt(i) === 45;
  if (negative) i++;
  let n = 0;
  const digitsFrom = i;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  if (i === digitsFrom || i - digitsFrom > 15) return undefined;
  const next = line.charCodeAt(i);
  if (i < line.length && next !== 32 && next !== 10) return undefined;
  return negative ? -n : n;
}

export const ledgerVocabulary: Vocabulary = {
  lineClasses: [
    { name: 'EVENT', color: '#1f5fbf', legend: 'EVENT' },
    { name: 'ACK', color: '#1d7a33', legend: 'ACK' },
    { name: 'RESUME', color: '#7a2fa8', legend: 'RESUME' },
    { name: 'RESYNC', color: '#c26a00', legend: 'RESYNC' },
  ],

  classify(line) {
    for (const word of WORDS) {
      if (line.startsWith(word) && line.charCodeAt(word.length) === 32) {
        const position = seqAt(line, word.length + 1);
        return position === undefined ? { cls: word } : { cls: word, position };
      }
    }
    return { cls: 'other' };
  },

  broken: (line, direction) => grammarBreak(line, direction === 'send' ? 'publisher' : 'consumer'),

  newRanker() {
    const highestSent = new Map<string, number>();
    const lastAck = new Map<string, number>();
    return ({ stream, conn, direction, cls, position }) => {
      if (cls === 'RESUME' || cls === 'RESYNC' || cls === 'other') return 'landmark';
      if (position === undefined) return 'irregular';
      if (cls === 'EVENT' && direction === 'send') {
        // A redelivery, or out of order: worth seeing.
        const highest = highestSent.get(stream);
        if (highest !== undefined && position <= highest) return 'irregular';
        highestSent.set(stream, position);
        return 'routine';
      }
      if (cls === 'ACK' && direction === 'recv') {
        const key = `${stream}#${conn}`;
        const previous = lastAck.get(key);
        lastAck.set(key, position);
        return previous !== undefined && position !== previous + 1 ? 'irregular' : 'routine';
      }
      return 'irregular'; // an EVENT the consumer sent, an ACK the publisher sent: odd
    };
  },

  describeStore(raw) {
    const store = (raw ?? {}) as Partial<StoreSnapshot>;
    if (!store.exists) return 'no file';
    if (store.refused) return `not read: ${store.refused.kind}`;
    if (store.error) return `unreadable (${store.error})`;
    const c = Array.isArray(store.checkpoint) ? store.checkpoint[0] : undefined;
    if (!c) return 'no checkpoint row';
    return `last ${c.last}, total ${c.total}, ${Array.isArray(store.ledger) ? store.ledger.length : '?'} rows`;
  },

  progress: { cls: 'ACK', word: 'committed' },
};
