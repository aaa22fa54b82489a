// A consumer's store the harness refused to read (harness/sandbox/store-file.ts) decides the
// verdict alone: the checker cannot say anything true about a store it did not read, so every
// other finding drawn from the (empty) snapshot would be noise ("lost every event"). Labs word
// the finding; this module finds the refusal and makes it the one headline.

import type { JournalEntry } from '../record/journal.js';
import type { StoreRefusal } from '../sandbox/store-file.js';
import { type Finding, statusOf, type Verdict } from '../findings/verdict.js';

/** The code of the finding a refused store becomes, in every lab. */
export const STORE_REFUSED = 'store-refused';

const refusalIn = (store: unknown): StoreRefusal | undefined => (store as { refused?: StoreRefusal } | undefined)?.refused;

/** The first refused read of the consumer's store: those the run took (journal), then the final one. */
export function consumerRefusal(journal: readonly JournalEntry[], finalStore: unknown): StoreRefusal | undefined {
  for (const e of journal) if (e.type === 'store-read' && e.role === 'consumer' && refusalIn(e.store)) return refusalIn(e.store);
  return refusalIn(finalStore);
}

/** `verdict` with the refusal as its only finding and headline (the harness's own errors still come first). */
export function withRefusedStore(verdict: Verdict, finding: Finding): Verdict {
  const status = statusOf([finding], verdict.harnessErrors);
  return {
    ...verdict,
    status,
    headline: (verdict.harnessErrors[0] ?? finding).text,
    findings: [finding],
    diff: [finding.text],
  };
}
