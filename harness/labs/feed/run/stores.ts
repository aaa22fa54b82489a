// The run's two stores, read independently of the consumers: the consumer's in its room (read
// only as the run's guard allows: a regular file of its own, within bounds), the control's in the
// run folder (the harness's own). Every read is journaled as a `store-read`.

import { join } from 'node:path';
import type { Role } from '../../../record/journal.js';
import type { RunContext } from '../../../lab-api/lab.js';
import type { ReadWhen } from '../check/facts.js';
import type { FeedPlan } from '../scenario/plan.js';
import { type FeedReadOptions, type FeedStoreSnapshot, feedRowBound, readFeedStore } from '../check/store-reader.js';

/** Reads taken while the consumer runs wait at most this long for its lock (the harness's event loop waits with them). */
export const MID_RUN_READ = { timeoutMs: 1000 };

/** Journals an independent read (`store-read.when` names this lab's own moments too: at-subscribe, converging). */
export function journalRead(
  ctx: Pick<RunContext<FeedPlan>, 'journal'>,
  role: Role,
  incarnation: number | undefined,
  when: ReadWhen,
  db: string,
  store: FeedStoreSnapshot,
): void {
  ctx.journal.write({ type: 'store-read', role, ...(incarnation === undefined ? {} : { incarnation }), when, db, store });
}

export interface FeedStores {
  /** The consumer's room (its working directory, where its store lives). */
  room: string;
  dbs: Record<Role, string>;
  read(role: Role, options?: FeedReadOptions): FeedStoreSnapshot;
  /** Reads a store and journals the read. */
  journalRead(role: Role, incarnation: number | undefined, when: ReadWhen, options?: FeedReadOptions): void;
}

export function feedStores(ctx: RunContext<FeedPlan>): FeedStores {
  const room = ctx.room('consumer');
  const dbs: Record<Role, string> = { consumer: join(room, 'consumer.db'), control: join(ctx.runDir, 'control.db') };
  const consumerRead: FeedReadOptions = { guard: ctx.consumerStore, maxRows: feedRowBound(ctx.scenario.lab.chain) };
  const read = (role: Role, options: FeedReadOptions = {}): FeedStoreSnapshot =>
    readFeedStore(dbs[role], role === 'consumer' ? { ...options, ...consumerRead } : options);
  return {
    room,
    dbs,
    read,
    journalRead: (role, incarnation, when, options) => journalRead(ctx, role, incarnation, when, dbs[role], read(role, options)),
  };
}
