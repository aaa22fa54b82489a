// What the server contract says a probe's connection is due, decided while the run goes, from
// the harness's own read-only view of the outbox (the outbox changes; afterwards it cannot be
// asked what it held then). At a `subscribe`: a snapshot, a revoke from the fork point, `reset
// stale-cursor`, or a replay starting with the first row above the cursor (section 3). At a
// `reset stale-cursor` later on: whether retention had deleted a row above what was sent.
// The answers are journaled as notes on the connection (`due: …`), which the checker reads.

import { parseCursor } from '../../../../../protocol/feed/cursor.js';
import type { OutboxReader } from '../../../../../publisher/feed/outbox/reader.js';
import { cursorAt, type Position, positionBeforeBlock, positionOf } from '../../../../../publisher/feed/outbox/position.js';

export type DueAnswer =
  | { kind: 'snapshot' }
  | { kind: 'stale'; why: string }
  | { kind: 'revoke'; from: string; why: string }
  | { kind: 'replay'; first?: string }
  | { kind: 'invalid'; why: string };

const NOTE = /^due: (snapshot|stale|revoke|replay|invalid|nothing)(?: (\d+:\d+:\d+))? — /;

/** The note written for an answer: `due: <kind> [cursor] — why`. */
export function dueNote(due: DueAnswer | { kind: 'nothing'; why: string }): string {
  switch (due.kind) {
    case 'snapshot':
      return 'due: snapshot — a null cursor';
    case 'replay':
      return due.first ? `due: replay ${due.first} — the first row above the cursor` : 'due: replay — no row above the cursor yet';
    case 'revoke':
      return `due: revoke ${due.from} — ${due.why}`;
    default:
      return `due: ${due.kind} — ${due.why}`;
  }
}

export type DueKind = DueAnswer['kind'] | 'nothing';

/** A `due:` note read back; undefined for any other note. */
export function parseDueNote(text: string): { kind: DueKind; cursor?: string; text: string } | undefined {
  const m = NOTE.exec(text);
  if (!m) return undefined;
  return { kind: m[1] as DueKind, ...(m[2] ? { cursor: m[2] } : {}), text };
}

export interface SubscribeSeen {
  cursor: string | null;
  blockHash: string | null;
  topics: string[];
}

/** The contract's answer to `sub`, from the outbox as it is now (one read transaction). */
export function dueAtSubscribe(reader: OutboxReader, sub: SubscribeSeen): DueAnswer {
  if (sub.cursor === null && sub.blockHash === null) return { kind: 'snapshot' };
  if (sub.cursor === null || sub.blockHash === null) return { kind: 'invalid', why: 'only one of cursor and blockHash is null' };
  let at: Position;
  let chainId: number;
  try {
    const parsed = parseCursor(sub.cursor);
    at = positionOf(parsed);
    chainId = parsed.chainId;
  } catch {
    return { kind: 'invalid', why: `${sub.cursor} is not a cursor` };
  }
  const { cursor, blockHash, topics } = sub;
  return reader.read((): DueAnswer => {
    if (chainId !== reader.chainId) return { kind: 'stale', why: `the cursor ${cursor} is of chain ${chainId}, the outbox's is ${reader.chainId}` };
    const where = reader.locate(blockHash);
    if (where.kind === 'unknown') return { kind: 'stale', why: `the outbox has never seen block hash ${blockHash}` };
    if (where.number !== at.block) return { kind: 'stale', why: `block hash ${blockHash} is block ${where.number}, not the cursor's block ${at.block}` };
    const from = where.kind === 'abandoned' ? positionBeforeBlock(where.forkNumber) : at;
    const pruned = reader.prunedAfter(from, topics);
    if (pruned)
      return { kind: 'stale', why: `retention deleted ${cursorAt(reader.chainId, pruned.position)} of ${pruned.account}, above the cursor ${cursor}` };
    if (where.kind === 'abandoned')
      return {
        kind: 'revoke',
        from: cursorAt(reader.chainId, { block: where.forkNumber, logIndex: 0 }),
        why: `block ${at.block} ${blockHash} was abandoned; its branch left the chain at block ${where.forkNumber}`,
      };
    const first = reader.eventsAfter(at, topics, 1)[0];
    return first ? { kind: 'replay', first: cursorAt(reader.chainId, { block: first.block_number, logIndex: first.log_index }) } : { kind: 'replay' };
  });
}

/** Whether a `reset stale-cursor` is due to a connection that holds everything up to `held`. */
export function staleDue(reader: OutboxReader, held: Position, topics: readonly string[]): DueAnswer | { kind: 'nothing'; why: string } {
  return reader.read(() => {
    const pruned = reader.prunedAfter(held, topics);
    return pruned
      ? { kind: 'stale', why: `retention deleted ${cursorAt(reader.chainId, pruned.position)} of ${pruned.account} before it was sent` }
      : {
          kind: 'nothing',
          why: `retention deleted no row of its accounts above ${cursorAt(reader.chainId, { ...held, logIndex: Math.max(0, held.logIndex) })}`,
        };
  });
}
