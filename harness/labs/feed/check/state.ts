// A feed store against what it must hold. The expected state is the canonical chain at the
// script's end (simulated from the scenario, never taken from a consumer); each store is judged
// against its own snapshot: the activity list must be exactly the expected events above its
// `snapshot_cursor` (count, order, content, payloads compared as parsed JSON), its balances the
// chain's, its cursor the last of those (or the snapshot's). Snapshot cursors depend on timing,
// so the two stores are never compared with each other directly.

import { isDeepStrictEqual } from 'node:util';
import type { RealEvent } from '../../../../publisher/feed/server/misbehaviour.js';
import { type ActivityComparison, compareActivity } from './activity.js';
import type { SimulatedChain } from '../scenario/chain-script.js';
import type { FeedStoreSnapshot } from './store-reader.js';
import { blockOf, cursorList, plural, shortAccount, shortAmount, shortCursor } from '../report/words.js';

export interface Expected {
  chainId: number;
  topics: string[];
  /** Canonical events for the topics at the script's end, in chain order. */
  events: RealEvent[];
  balances: Map<string, bigint>;
  canonicalHash(block: number): string | undefined;
  /** Events for the topics the script produced on branches a reorganisation abandoned (what revokes take back). */
  abandoned: RealEvent[];
}

export const expectedOf = (sim: SimulatedChain): Expected => ({
  chainId: sim.chain.chainId,
  topics: sim.topics,
  events: sim.events,
  balances: sim.balances,
  canonicalHash: sim.canonicalHash,
  abandoned: sim.produced.filter((e) => sim.canonicalHash(blockOf(e.cursor) ?? -1) !== e.payload.blockHash),
});

/** A snapshot the publisher sent on a stream: what a store's `snapshot_cursor` must be one of. */
export interface SentSnapshot {
  cursor: string;
  blockHash: string;
  balances: Record<string, string>;
}

export interface StoredEvent {
  cursor: string;
  type: string;
  payloadText: string;
  /** The payload parsed, when it parses. */
  payload?: unknown;
}

/** A store in the checker's terms; `shape` lists what is wrong with its form. */
export interface StoreView {
  exists: boolean;
  error?: string;
  shape: string[];
  cursor: string | null;
  blockHash: string | null;
  snapshotCursor: string | null;
  snapshotBlockHash: string | null;
  events: StoredEvent[];
  /** As stored, keyed by account. */
  balances: Map<string, unknown>;
}

const CURSOR_RE = /^(0|[1-9][0-9]*):[0-9]{14}:[0-9]{4}$/;
const AMOUNT_RE = /^(0|-?[1-9][0-9]*)$/;
const textOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function viewOf(store: FeedStoreSnapshot): StoreView {
  const shape: string[] = [];
  const view: StoreView = {
    exists: store.exists,
    ...(store.error ? { error: store.error } : {}),
    shape,
    cursor: null,
    blockHash: null,
    snapshotCursor: null,
    snapshotBlockHash: null,
    events: [],
    balances: new Map(),
  };
  if (!store.exists || store.error) return view;
  if (store.state.length !== 1 || store.state[0]!.id !== 1) shape.push(`feed_state has ${store.state.length} rows, expected exactly one with id 1`);
  const row = store.state[0];
  if (row) {
    for (const key of ['cursor', 'block_hash', 'snapshot_cursor', 'snapshot_block_hash'] as const) {
      const v = row[key];
      if (v !== null && typeof v !== 'string') shape.push(`feed_state.${key} holds ${JSON.stringify(v)}, not text`);
    }
    for (const key of ['cursor', 'snapshot_cursor'] as const) {
      const v = row[key];
      if (typeof v === 'string' && !CURSOR_RE.test(v)) shape.push(`feed_state.${key} ${JSON.stringify(v)} is not a cursor`);
    }
    view.cursor = textOrNull(row.cursor);
    view.blockHash = textOrNull(row.block_hash);
    view.snapshotCursor = textOrNull(row.snapshot_cursor);
    view.snapshotBlockHash = textOrNull(row.snapshot_block_hash);
  }
  for (const [cursor, type, payload] of store.events) {
    if (typeof cursor !== 'string' || !CURSOR_RE.test(cursor)) {
      shape.push(`feed_events holds the cursor ${JSON.stringify(cursor)}, not a cursor`);
      continue;
    }
    const event: StoredEvent = { cursor, type: String(type), payloadText: typeof payload === 'string' ? payload : JSON.stringify(payload) };
    if (typeof payload !== 'string') shape.push(`feed_events ${cursor}: payload is not text`);
    else {
      try {
        event.payload = JSON.parse(payload);
      } catch {
        shape.push(`feed_events ${cursor}: payload is not JSON`);
      }
    }
    view.events.push(event);
  }
  for (const [account, amount] of store.balances) {
    if (typeof account !== 'string') {
      shape.push(`feed_balances holds the account ${JSON.stringify(account)}, not text`);
      continue;
    }
    view.balances.set(account, amount);
  }
  return view;
}

/** What a stored event does to one account's balance (contract section 4). */
export function effectOn(type: string, payload: unknown, account: string): bigint {
  if (type !== 'Transfer' || typeof payload !== 'object' || payload === null) return 0n;
  const { from, to, amount } = payload as { from?: unknown; to?: unknown; amount?: unknown };
  if (from === to || typeof amount !== 'string' || !/^(0|[1-9][0-9]*)$/.test(amount)) return 0n;
  let effect = 0n;
  if (to === account) effect += BigInt(amount);
  if (from === account) effect -= BigInt(amount);
  return effect;
}

const sameChainAfter = (a: string, b: string | null): boolean => b === null || a > b;

export interface StoreSummary {
  exists: boolean;
  error?: string;
  cursor: string | null;
  snapshotCursor: string | null;
  events: number;
  /** Expected events above its snapshot. */
  expectedEvents: number;
  missing: string[];
  extra: { cursor: string; why: string }[];
  wrongContent: string[];
  balanceDiffs: { account: string; got: string; want: string; hint?: string; cause?: BalanceCause }[];
  /** Its activity list against the expected one, entry by entry, around the first difference (absent when there is no readable store). */
  activity?: ActivityComparison;
  /** Every followed account: the balance it holds (as stored, or "0" when absent) and the chain's. */
  balances: { account: string; got: string; want: string; ok: boolean }[];
  /** The cursor it must hold (its last expected event, or its snapshot's). */
  wantCursor: string | null;
  /** One line: how it departs from what was expected, or that it matches. */
  line: string;
  differs: boolean;
}

export interface Judgement {
  /** Problems in the feed's words, each with a code and the cursors it is about. */
  problems: { code: string; text: string; cursors?: string[] }[];
  summary: StoreSummary;
}

/**
 * A store judged against the chain's end. `name` starts each problem's text ("consumer",
 * "control consumer"); `sent` are the snapshots the publisher sent on that store's stream.
 */
export function judgeStore(name: string, view: StoreView, expected: Expected, sent: readonly SentSnapshot[]): Judgement {
  const problems: Judgement['problems'] = [];
  const summary: StoreSummary = {
    exists: view.exists,
    ...(view.error ? { error: view.error } : {}),
    cursor: view.cursor,
    snapshotCursor: view.snapshotCursor,
    events: view.events.length,
    expectedEvents: 0,
    missing: [],
    extra: [],
    wrongContent: [],
    balanceDiffs: [],
    balances: [],
    wantCursor: null,
    line: '',
    differs: true,
  };
  if (!view.exists) {
    problems.push({ code: 'no-store', text: `${name}: no SQLite file was created` });
    summary.line = 'no SQLite file was ever created';
    return { problems, summary };
  }
  if (view.error) {
    problems.push({ code: 'unreadable-store', text: `${name}: the file cannot be read as a feed store (${view.error})` });
    summary.line = `the file cannot be read as a feed store (${view.error})`;
    return { problems, summary };
  }
  for (const s of view.shape) problems.push({ code: 'store-shape', text: `${name}: ${s}` });

  const S = view.snapshotCursor;
  problems.push(...snapshotProblems(name, view, expected, sent));
  const want = expected.events.filter((e) => sameChainAfter(e.cursor, S));
  problems.push(...activityProblems(name, view, want, expected, summary));
  problems.push(...balanceProblems(name, view, expected, summary));
  problems.push(...cursorProblems(name, view, want, summary));

  summary.differs = problems.length > 0;
  summary.line = summary.differs
    ? describeDiffs(summary, view)
    : `matches the chain (${plural(summary.events, 'event')} after its snapshot at ${shortCursor(S)}, cursor ${shortCursor(view.cursor)})`;
  return { problems, summary };
}

/** Its cursor and block hash are the chain's last (of the events above its snapshot): the server has no frame left to send that store. */
export const atChainEnd = ({ summary, problems }: Judgement): boolean =>
  summary.cursor !== null && summary.cursor === summary.wantCursor && !problems.some((p) => p.code === 'wrong-block-hash');

type Problems = Judgement['problems'];

/** The snapshot it stands on: installed, one the server sent, and of a block still canonical. */
function snapshotProblems(name: string, view: StoreView, expected: Expected, sent: readonly SentSnapshot[]): Problems {
  const problems: Problems = [];
  const S = view.snapshotCursor;
  if (S === null)
    problems.push({ code: 'no-snapshot', text: `${name}: no snapshot was ever installed (snapshot_cursor is NULL), so its balances have no base` });
  else {
    const known = sent.find((s) => s.cursor === S && s.blockHash === view.snapshotBlockHash);
    if (!known)
      problems.push({
        code: 'snapshot-not-sent',
        text: `${name}: its snapshot_cursor ${S} (block hash ${view.snapshotBlockHash ?? 'NULL'}) is no snapshot the server sent it`,
        cursors: [S],
      });
    const block = blockOf(S);
    const canonical = block === undefined ? undefined : expected.canonicalHash(block);
    if (canonical !== undefined && view.snapshotBlockHash !== canonical)
      problems.push({
        code: 'snapshot-abandoned',
        text: `${name}: its snapshot at ${S} is of block ${block} ${view.snapshotBlockHash}, which a reorganisation abandoned (the chain's block ${block} is ${canonical}): after a revoke into the snapshot it must take a new one`,
        cursors: [S],
      });
  }

  return problems;
}

/** The activity list: exactly the expected events (`want`) above the snapshot, in cursor order. */
function activityProblems(name: string, view: StoreView, want: readonly RealEvent[], expected: Expected, summary: StoreSummary): Problems {
  const problems: Problems = [];
  const S = view.snapshotCursor;
  summary.expectedEvents = want.length;
  const wanted = new Map(want.map((e) => [e.cursor, e]));
  const held = new Map(view.events.map((e) => [e.cursor, e]));
  summary.missing = want.filter((e) => !held.has(e.cursor)).map((e) => e.cursor);
  summary.activity = compareActivity(want, view.events);
  for (const e of view.events) {
    const w = wanted.get(e.cursor);
    if (!w) {
      const block = blockOf(e.cursor)!;
      const payloadHash = (e.payload as { blockHash?: unknown } | undefined)?.blockHash;
      const why =
        S !== null && e.cursor <= S
          ? `at or below its snapshot ${S}`
          : typeof payloadHash === 'string' && expected.canonicalHash(block) !== undefined && payloadHash !== expected.canonicalHash(block)
            ? `of block ${block} ${payloadHash}, which a reorganisation abandoned: it was revoked but not removed`
            : 'not an event of the followed accounts on the chain';
      summary.extra.push({ cursor: e.cursor, why });
    } else if (e.type !== w.type || e.payload === undefined || !isDeepStrictEqual(e.payload, w.payload)) summary.wrongContent.push(e.cursor);
  }
  if (summary.missing.length)
    problems.push({
      code: 'missing-events',
      text: `${name}: ${plural(summary.missing.length, 'event')} of the chain missing from its activity list: ${cursorList(summary.missing)}`,
      cursors: summary.missing,
    });
  const groups = new Map<string, string[]>();
  for (const x of summary.extra) groups.set(x.why, [...(groups.get(x.why) ?? []), x.cursor]);
  for (const [why, cursors] of groups) {
    const code = why.includes('revoked') ? 'revoked-kept' : why.includes('snapshot') ? 'below-snapshot' : 'foreign-events';
    problems.push({
      code,
      text: `${name}: ${code === 'revoked-kept' ? 'revoked events kept: ' : ''}its activity list holds ${cursorList(cursors)} ${cursors.length === 1 ? 'which is' : 'which are'} ${why}${code === 'revoked-kept' ? ` — ${REVOKE_UNDOES}` : ''}`,
      cursors,
    });
  }
  for (const cursor of summary.wrongContent.slice(0, 5)) {
    const e = held.get(cursor)!;
    const w = wanted.get(cursor)!;
    problems.push({
      code: 'wrong-content',
      text: `${name}: event ${cursor} is stored as ${e.type} ${clip(e.payloadText)}, the chain says ${w.type} ${clip(JSON.stringify(w.payload))}`,
      cursors: [cursor],
    });
  }

  return problems;
}

const REVOKE_UNDOES = 'a revoke deletes the events at or after fromCursor and undoes their effect on balances (CONTRACT.md §4)';

/** A wrong balance whose difference names the mistake: its finding code. */
export type BalanceCause = 'applied-twice' | 'revoke-kept-balance' | 'imprecise-balance';

/** The mistake each cause stands for, in the contract's words. */
const BALANCE_CAUSES: Record<BalanceCause, string> = {
  'applied-twice':
    'an event at or below the stored cursor is a duplicate (the server resends events after a reconnect): change nothing, whatever its content (CONTRACT.md §4)',
  'revoke-kept-balance': REVOKE_UNDOES,
  'imprecise-balance':
    'amounts are integers up to 2^256 − 1: add them exactly (BigInt, Python int), never in a double or a 64-bit integer (CONTRACT.md §2, Values)',
};

/** The mistake, first in a cause's text: a balance's digits would push it out of a headline. */
const BALANCE_LEADS: Record<BalanceCause, string> = {
  'applied-twice': 'an event applied twice',
  'revoke-kept-balance': "a revoke that did not undo its events' balance changes",
  'imprecise-balance': 'amounts added inexactly',
};

/** Equal leading digits of two balances this long, at the same length, and a double's rounding is the likely difference. */
const IMPRECISE_DIGITS = 12;

/** How many leading digits two decimal texts of the same length share (0 for different lengths). */
function sameLeadingDigits(a: string, b: string): number {
  if (a.length !== b.length) return 0;
  let n = 0;
  while (n < a.length && a[n] === b[n]) n++;
  return n;
}

/** Balances: every followed account, an absent row counting as "0". */
function balanceProblems(name: string, view: StoreView, expected: Expected, summary: StoreSummary): Problems {
  const problems: Problems = [];
  const S = view.snapshotCursor;
  for (const account of expected.topics) {
    const raw = view.balances.get(account) ?? '0';
    const want = (expected.balances.get(account) ?? 0n).toString();
    summary.balances.push({ account, got: typeof raw === 'string' ? raw : JSON.stringify(raw), want, ok: raw === want });
    if (typeof raw !== 'string' || !AMOUNT_RE.test(raw)) {
      summary.balanceDiffs.push({ account, got: JSON.stringify(raw), want, hint: 'not canonical decimal text' });
      continue;
    }
    if (raw === want) continue;
    const delta = BigInt(raw) - BigInt(want);
    const twice = view.events.find((e) => effectOn(e.type, e.payload, account) === delta && delta !== 0n);
    const lost = expected.events.find((e) => effectOn(e.type, e.payload, account) === -delta && delta !== 0n);
    // Events of this account the store lacks: when their effects make the difference, that is the
    // explanation, not a guess of a double apply or of rounding (a few small lost transfers leave
    // a large balance's first digits as they were).
    const stored = new Set(view.events.map((e) => e.cursor));
    // Above the snapshot only: the events below it are in its balances, not in the activity list.
    const absent = expected.events.filter((e) => sameChainAfter(e.cursor, S) && !stored.has(e.cursor) && effectOn(e.type, e.payload, account) !== 0n);
    const absentEffect = absent.reduce((n, e) => n + effectOn(e.type, e.payload, account), 0n);
    const missing = absent.length > 0 && absentEffect === -delta ? cursorList(absent.map((e) => e.cursor)) : undefined;
    const kept = delta === 0n ? undefined : revokedKept(expected.abandoned, S, account, delta);
    const same = sameLeadingDigits(raw, want);
    summary.balanceDiffs.push({
      account,
      got: raw,
      want,
      ...(missing
        ? { hint: `off by exactly the effect of ${missing}, missing from its activity list: never applied` }
        : twice
          ? { hint: `off by exactly the effect of ${twice.cursor}: applied twice?`, cause: 'applied-twice' }
          : kept
            ? {
                hint: `off by exactly the effect of ${kept}, which a reorganisation abandoned: revoked without undoing its balance change?`,
                cause: 'revoke-kept-balance',
              }
            : lost
              ? { hint: `off by exactly the effect of ${lost.cursor}: never applied?` }
              : same >= IMPRECISE_DIGITS && absent.length === 0
                ? { hint: `the same first ${same} digits, then not: the sum lost precision?`, cause: 'imprecise-balance' }
                : {}),
    });
  }
  for (const d of summary.balanceDiffs)
    problems.push({
      code: d.cause ?? 'wrong-balance',
      text: `${name}: ${d.cause ? `${BALANCE_LEADS[d.cause]}: ` : ''}the balance of ${d.account} is ${d.got}, the chain says ${d.want}${d.hint ? ` (${d.hint})` : ''}${d.cause ? ` — ${BALANCE_CAUSES[d.cause]}` : ''}`,
    });

  return problems;
}

/** The cursor: its last expected event, or its snapshot's when none is above it. */
function cursorProblems(name: string, view: StoreView, want: readonly RealEvent[], summary: StoreSummary): Problems {
  const problems: Problems = [];
  const S = view.snapshotCursor;
  const last = want.at(-1);
  summary.wantCursor = last ? last.cursor : S;
  const wantHash = last ? last.payload.blockHash : view.snapshotBlockHash;
  if (view.cursor !== summary.wantCursor)
    problems.push({
      code: 'wrong-cursor',
      text: `${name}: its cursor is ${view.cursor ?? 'NULL'}, expected ${summary.wantCursor ?? 'NULL'} (${last ? 'its last event' : 'its snapshot'})`,
      ...(view.cursor ? { cursors: [view.cursor] } : {}),
    });
  else if (view.blockHash !== wantHash)
    problems.push({
      code: 'wrong-block-hash',
      text: `${name}: its block_hash is ${view.blockHash ?? 'NULL'}, but the block of its cursor ${view.cursor} is ${wantHash}`,
      ...(view.cursor ? { cursors: [view.cursor] } : {}),
    });

  return problems;
}

/**
 * The abandoned events (above the snapshot) whose effects on `account` add up to `delta`: one
 * of them, or all of them — what a revoke that forgot the balances leaves behind. Undefined
 * when neither fits.
 */
export function revokedKept(abandoned: readonly RealEvent[], snapshot: string | null, account: string, delta: bigint): string | undefined {
  const touching = abandoned.filter((e) => sameChainAfter(e.cursor, snapshot) && effectOn(e.type, e.payload, account) !== 0n);
  const one = touching.find((e) => effectOn(e.type, e.payload, account) === delta);
  if (one) return `the revoked event ${one.cursor}`;
  const sum = touching.reduce((n, e) => n + effectOn(e.type, e.payload, account), 0n);
  return touching.length > 1 && sum === delta ? `the revoked events ${cursorList(touching.map((e) => e.cursor))}` : undefined;
}

function describeDiffs(s: StoreSummary, view: StoreView): string {
  const parts: string[] = [];
  if (view.shape.length) parts.push(view.shape[0]!);
  if (s.snapshotCursor === null) parts.push('no snapshot');
  if (s.missing.length)
    parts.push(`${plural(s.missing.length, 'event')} missing (${s.missing.slice(0, 2).map(shortCursor).join(', ')}${s.missing.length > 2 ? ', …' : ''})`);
  if (s.extra.length)
    parts.push(
      `${plural(s.extra.length, 'event')} too many (${s.extra
        .slice(0, 2)
        .map((x) => shortCursor(x.cursor))
        .join(', ')}${s.extra.length > 2 ? ', …' : ''})`,
    );
  if (s.wrongContent.length) parts.push(`${plural(s.wrongContent.length, 'event')} with other content`);
  if (s.balanceDiffs.length) parts.push(`${plural(s.balanceDiffs.length, 'balance')} wrong (${s.balanceDiffs.map((d) => shortAccount(d.account)).join(', ')})`);
  if (s.cursor !== s.wantCursor) parts.push(`cursor ${shortCursor(s.cursor)}, expected ${shortCursor(s.wantCursor)}`);
  return parts.length ? parts.join('; ') : 'differs (see the findings)';
}

const clip = (text: string, max = 160): string => (text.length <= max ? text : `${text.slice(0, max)}…`);

/**
 * What any committed state must satisfy, whatever the chain: for reads taken mid-run (at a
 * subscribe, while stopped, after a crash). One row, events only above the snapshot, the cursor
 * on the greatest of them (or the snapshot), its block hash, and balances equal to the
 * snapshot's plus the stored events' effects.
 */
export function consistencyProblems(view: StoreView, topics: readonly string[], sent: readonly SentSnapshot[]): { text: string; cursors?: string[] }[] {
  if (!view.exists || view.error) return [];
  const out: { text: string; cursors?: string[] }[] = view.shape.map((text) => ({ text }));
  const S = view.snapshotCursor;
  if (S === null && view.events.length) out.push({ text: `${plural(view.events.length, 'event')} but no snapshot`, cursors: view.events.map((e) => e.cursor) });
  const below = S === null ? [] : view.events.filter((e) => e.cursor <= S).map((e) => e.cursor);
  if (below.length) out.push({ text: `${cursorList(below)} at or below the snapshot ${S}`, cursors: below });
  const last = view.events.at(-1);
  const top = last && (S === null || last.cursor > S) ? last.cursor : S;
  if (view.cursor !== top)
    out.push({
      text: `cursor ${view.cursor ?? 'NULL'} while ${last ? `its greatest event is ${last.cursor}` : 'it holds no event'}${S ? ` and its snapshot is at ${S}` : ''}`,
      ...(top ? { cursors: [top] } : {}),
    });
  else if (top !== null) {
    const hash = last && top === last.cursor ? (last.payload as { blockHash?: unknown } | undefined)?.blockHash : view.snapshotBlockHash;
    if (view.blockHash !== hash)
      out.push({ text: `block_hash ${view.blockHash ?? 'NULL'} while the block of its cursor ${top} is ${String(hash)}`, cursors: [top] });
  }
  const base = S === null ? undefined : sent.find((s) => s.cursor === S && s.blockHash === view.snapshotBlockHash);
  if (base) {
    for (const account of topics) {
      let want = BigInt(base.balances[account] ?? '0');
      for (const e of view.events) if (S === null || e.cursor > S) want += effectOn(e.type, e.payload, account);
      const raw = view.balances.get(account) ?? '0';
      if (typeof raw !== 'string' || !AMOUNT_RE.test(raw) || BigInt(raw) !== want)
        out.push({
          text: `the balance of ${account} is ${typeof raw === 'string' ? shortAmount(raw) : JSON.stringify(raw)} while its snapshot and stored events make ${shortAmount(want.toString())}`,
        });
    }
  }
  return out;
}

/** A store in a few words: "cursor 57:3, snapshot 12:0, 23 events, 3 balances". */
export function describeView(view: StoreView): string {
  if (!view.exists) return 'no file';
  if (view.error) return `unreadable (${view.error})`;
  return `cursor ${shortCursor(view.cursor)}, snapshot ${shortCursor(view.snapshotCursor)}, ${plural(view.events.length, 'event')}, ${plural(view.balances.size, 'balance')}`;
}
