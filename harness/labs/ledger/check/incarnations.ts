// Per consumer incarnation, what the harness saw of it: its RESUMEs and ACKs, how its connections
// ended, how it exited, and the store read right after. The checker, the duties, the diff and the
// tables all start from these facts.

import type { JournalEntry } from '../../../record/journal.js';
import type { Scenario } from '../../../scenario/types.js';
import type { LedgerPlan } from '../scenario/load.js';
import type { StoreSnapshot } from './store-reader.js';

type Plan = Scenario<LedgerPlan>;

export interface IncarnationFacts {
  incarnation: number;
  fault?: string;
  pid?: number;
  startedAt?: number;
  resumes: number[];
  acks: { seq: number; t: number }[];
  /** How each of its connections ended, as the publisher saw it. */
  closes: { conn: number; by: string; reason: string }[];
  exit?: { t: number; code: number | null; signal: string | null; killedBy?: string; durationMs: number };
  /** The harness's read of the file right after this process ended. */
  fileAfter?: StoreSnapshot;
}

/**
 * Per consumer incarnation: what its connections said to the publisher, and how it ended.
 * Incarnations come from the journal (a restart policy starts as many as it takes); the
 * scenario's list says which were expected at least.
 */
export function incarnationFacts(journal: readonly JournalEntry[], plan: Plan, stream: string): IncarnationFacts[] {
  const facts: IncarnationFacts[] = plan.lab.consumer.incarnations.map((inc, i) => ({
    incarnation: i + 1,
    ...(inc.fault === undefined ? {} : { fault: inc.fault }),
    resumes: [],
    acks: [],
    closes: [],
  }));
  const fact = (n: number): IncarnationFacts => {
    facts[n - 1] ??= { incarnation: n, resumes: [], acks: [], closes: [] };
    return facts[n - 1]!;
  };
  const connOwner = new Map<number, IncarnationFacts>();
  for (const e of journal) {
    if (e.type === 'process-start' && e.role === 'consumer') Object.assign(fact(e.incarnation), { pid: e.pid, startedAt: e.t });
    if (e.type === 'process-exit' && e.role === 'consumer')
      fact(e.incarnation).exit = { t: e.t, code: e.code, signal: e.signal, ...(e.killedBy ? { killedBy: e.killedBy } : {}), durationMs: e.durationMs };
    if (e.type === 'store-read' && e.role === 'consumer' && e.when === 'after-exit' && e.incarnation !== undefined)
      fact(e.incarnation).fileAfter = e.store as StoreSnapshot;
    if (e.type !== 'wire' || e.stream !== stream) continue;
    if (e.kind === 'open') {
      if (e.owner?.role === 'consumer') connOwner.set(e.conn, fact(e.owner.incarnation));
      continue;
    }
    const owner = connOwner.get(e.conn);
    if (owner && e.kind === 'close') owner.closes.push({ conn: e.conn, by: e.by, reason: e.reason });
    if (!owner || e.kind !== 'recv' || e.error) continue;
    const resume = /^RESUME (-?\d+)\n$/.exec(e.line);
    if (resume) owner.resumes.push(Number(resume[1]));
    const ack = /^ACK (\d+)\n$/.exec(e.line);
    if (ack) owner.acks.push({ seq: Number(ack[1]), t: e.t });
  }
  return facts.filter(Boolean);
}
