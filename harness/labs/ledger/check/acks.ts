// ACK lists: compared as multisets (a duplicate's second ACK counts), and shown short.

import { seqList } from './state.js';

/**
 * The ACKs a connection sent against the ones expected, as multisets: an extra ACK for a seq
 * that also had a legitimate one is unexpected, and a duplicate's missing second ACK is missing.
 */
export function compareAcks<A extends { seq: number }>(got: A[], want: number[]): { unexpected: A[]; missing: number[] } {
  const owed = new Map<number, number>();
  for (const seq of want) owed.set(seq, (owed.get(seq) ?? 0) + 1);
  const unexpected = got.filter((a) => {
    const n = owed.get(a.seq) ?? 0;
    if (n > 0) owed.set(a.seq, n - 1);
    return n === 0;
  });
  return { unexpected, missing: [...owed].flatMap(([seq, n]) => Array<number>(n).fill(seq)) };
}

/** "0, 1, 2" or "0…99 (100 seqs)"; "none" for no ACK. */
export const acksList = (acks: { seq: number }[]): string =>
  acks.length === 0 ? 'none' : acks.length <= 8 ? acks.map((a) => a.seq).join(', ') : seqList(acks.map((a) => a.seq)).replace(/^seqs /, '');
