// The feed chaos placement's part on the server's misbehaviour (./place.ts places the rest):
// each rule rides an event the simulated chain produces for the followed accounts, on a
// connection that carries it. Where nothing closes a connection, connection 1 carries every event
// live, and a rule names it. Beside anything that closes one, how many times the consumer
// reconnects cannot be known (packet loss, a half-open link, a stale cut, kills each reconnect a
// varying number of times): a rule takes the first connection from 1 on that is about to send its
// event, or, drawn for a later connection, the first from 2 on, on an event produced once
// connection 1 has surely ended. Either way on an event the consumer is surely sent then (still
// canonical, not under a snapshot it takes again), so the rule fires whatever the reconnects.

import type { SimulatedChain } from '../scenario/chain-script.js';
import { closes, firstClosingBlock } from './events.js';
import { CHAIN, MALFORMED, type Placed, type RuleConnection, SLOW, type Step } from './steps.js';

const blockOf = (cursor: string): number => Number(cursor.split(':')[1]);

type Rule = Extract<Step, { layer: 'resend' | 'malformed' | 'number-amount' | 'unknown-op' | 'stall' }>;
/** A rule that ends its connection: a correct consumer closes it (a bad frame), or times out (a stall). */
const ending = (x: Step): boolean => x.layer === 'malformed' || x.layer === 'number-amount' || x.layer === 'stall';
/** Where a rule may go: its connection, and the events (by index) that fit it there. */
type Option = { connection: RuleConnection; fits: (j: number) => boolean };

/**
 * The block from which connection 1 has surely ended, whatever else happens: a cut (a stale
 * cursor's, one while away), a SIGKILL, a half-open link (what the server sends on it meanwhile
 * never arrives), a slow reader's queue overflow (`slowEnd`). Loss, toxics and hooks may close a
 * connection, or not.
 */
export function surelyClosedFrom(placed: readonly Placed[], slowEnd: number | undefined): number | undefined {
  const blocks = placed.flatMap((p) => {
    if (p.layer === 'cut' || p.layer === 'stale-cursor' || p.layer === 'half-open') return [p.from];
    if (p.layer === 'kill') return [p.at];
    if (p.layer === 'reorg') return p.away ? [p.away.from] : [];
    return p.layer === 'slow-reader' && slowEnd !== undefined ? [slowEnd] : [];
  });
  return blocks.length ? Math.min(...blocks) : undefined;
}

/**
 * Blocks whose events the consumer may never be sent as events: under the snapshot it takes again
 * after a stale cursor's reset (the cut, and the confirmations above it) or a revoke into its
 * snapshot (the deep reorganisation's new branch, and as much above it).
 */
export function underSnapshot(placed: readonly Placed[]): (block: number) => boolean {
  const spans = placed.flatMap((p) =>
    p.layer === 'stale-cursor' ? [[p.from - 1, p.to + 2]] : p.layer === 'deep-reorg' ? [[p.after - p.depth + 1, p.after - p.depth + p.length + 2]] : [],
  );
  return (block) => spans.some(([lo, hi]) => block >= lo! && block <= hi!);
}

/**
 * Server misbehaviour on events the script produces for the followed accounts (1-based, as
 * `event:` counts them): the ones that end their connection first, then resends and unknown ops.
 */
export function misbehaviour(
  steps: readonly Step[],
  chain: SimulatedChain,
  placed: readonly Placed[],
  stallSilence: (block: number, ms: number | undefined) => { from: number; to: number },
): Placed[] {
  const produced = chain.produced;
  if (produced.length === 0) return [];
  const { first, reached } = positionsOf(produced);
  const closing = firstClosingBlock(placed);
  // Hooks are placed after misbehaviour: a drawn exit or raise may end process 1 at any event.
  const anyClose = placed.some(closes) || steps.some((x) => x.layer === 'hook' && x.action !== 'stop');
  const slow = slowReaderRides(placed, reached);
  const sure = surelyClosedFrom(placed, slow?.end);
  const under = underSnapshot(placed);
  const canonical = (j: number) => chain.canonicalHash(blockOf(produced[j]!.cursor)) === produced[j]!.payload.blockHash;
  const sent = (j: number) => canonical(j) && !under(blockOf(produced[j]!.cursor));
  const earlier = resendable(produced, canonical, placed);
  /** The first event a bad frame or a stall ends connection 1 at: a resend there comes before it. */
  let endsFirst = Number.POSITIVE_INFINITY;
  /** Whether that rule surely ends it: a stall for a while may end before the consumer's idle timeout does (seed 20261205 run 12). */
  let endsSurely = true;
  /** The events rules that end their connection ride: a rule from a connection on fires two blocks after one at the earliest, once that connection is closed. */
  const endings: number[] = [];
  const clear = (j: number) => endings.every((e) => j < e || reached[j]! >= blockOf(produced[e]!.cursor) + 2);
  const onFirst = (j: number) => j < endsFirst && (closing === undefined || reached[j]! < closing - 1);
  const anchor = (i: number, transfer: boolean, fits: (j: number) => boolean): number | undefined => {
    for (let k = 0; k < produced.length; k++) {
      const j = (i + k) % produced.length;
      if (first.get(produced[j]!.cursor) === j && (!transfer || produced[j]!.type === 'Transfer') && fits(j)) return j;
    }
    return undefined;
  };
  const heavyLink = placed.some((p) => p.layer === 'slicer' || p.layer === 'bandwidth' || p.layer === 'loss');
  const out = new Map<Step, Placed>();
  const taken = new Set<string>();
  for (const x of [...steps.filter(ending), ...steps.filter((y) => y.layer === 'resend'), ...steps.filter((y) => y.layer === 'unknown-op')] as Rule[]) {
    if (x.layer === 'unknown-op' && (anyClose || [...out.values()].some((p) => p.layer !== 'resend'))) continue; // left out beside anything that closes (./place.ts): its event stays free
    const drawn = optionsFor(x, {
      anyClose,
      sure,
      slow,
      endsFirst,
      past: endsSurely ? { from: 2 } : { from: 1 },
      reached,
      onFirst,
      sent,
      clear,
      hasOnFirst: (a) => anchor(a, false, x.layer === 'resend' ? (j) => earlier(j) && onFirst(j) : onFirst) !== undefined,
    });
    const options = shaped(x, drawn, { earlier, placed, produced, stallSilence });
    let form = x.layer === 'malformed' ? MALFORMED[x.form % MALFORMED.length]! : undefined;
    if (form === 'oversized' && heavyLink) form = 'trailing-comma';
    const transfer = x.layer === 'number-amount' || form === 'noncanonical-amount';
    let pick: { i: number; connection: RuleConnection } | undefined;
    for (const o of options) {
      const i = anchor(x.at % produced.length, transfer, o.fits);
      if (i !== undefined) {
        pick = { i, connection: o.connection };
        break;
      }
    }
    if (!pick && form === 'noncanonical-amount') {
      form = 'trailing-comma';
      const o = options.at(-1)!;
      const i = anchor(x.at % produced.length, false, o.fits);
      if (i !== undefined) pick = { i, connection: o.connection };
    }
    if (!pick) continue;
    const { i, connection } = pick;
    const key = `${i}/${JSON.stringify(connection)}`;
    if (taken.has(key)) continue; // the server takes the first rule for an event on a connection
    taken.add(key);
    if (ending(x)) {
      endings.push(i);
      if ((connection === 1 || (typeof connection === 'object' && connection.from === 1)) && i < endsFirst) {
        endsFirst = i;
        endsSurely = x.layer !== 'stall' || x.forever;
      }
    }
    out.set(x, placedRule(x, { event: i + 1, cursor: produced[i]!.cursor }, connection, form));
  }
  return steps.flatMap((x) => out.get(x) ?? []);
}

/**
 * The events a resend may ride: the server sends the events before its own again from its outbox,
 * and one at least must be there when it fires. So one still on the final chain comes before it;
 * beside a retention window (the stale cursor's), in its own block, which the outbox forgets no
 * sooner than the event itself, however late a reconnect replays it (seed 20261203 run 10: the
 * one before it was forgotten by then, and nothing was resent).
 */
function resendable(produced: SimulatedChain['produced'], canonical: (j: number) => boolean, placed: readonly Placed[]): (j: number) => boolean {
  const retention = placed.some((p) => p.layer === 'stale-cursor');
  // The first canonical event, of the whole list or (beside a retention window) of each block: asked once per event, not per call.
  const firstCanonical = new Map<number | 'any', number>();
  for (const [k, e] of produced.entries()) {
    const where = retention ? blockOf(e.cursor) : 'any';
    if (!firstCanonical.has(where) && canonical(k)) firstCanonical.set(where, k);
  }
  return (j) => (firstCanonical.get(retention ? blockOf(produced[j]!.cursor) : 'any') ?? j) < j;
}

/**
 * The first event with each cursor: the server finds a rule's event by its cursor, and acts on the
 * first event sent with it (after a reorganisation a cursor comes again, on another block's event,
 * maybe not a Transfer), so an anchor is always the first event with its cursor. And the block the
 * script had reached when it produced each event (a reorganisation's new branch comes after its block).
 */
function positionsOf(produced: SimulatedChain['produced']): { first: Map<string, number>; reached: number[] } {
  const first = new Map<string, number>();
  const reached: number[] = [];
  for (const [j, e] of produced.entries()) {
    if (!first.has(e.cursor)) first.set(e.cursor, j);
    reached.push(Math.max(reached[j - 1] ?? 0, blockOf(e.cursor)));
  }
  return { first, reached };
}

/** A rule's options with its own needs: a resend an earlier event, a stall clear of connected reorganisations where it can be. */
function shaped(
  x: Rule,
  drawn: Option[],
  c: {
    earlier: (j: number) => boolean;
    placed: readonly Placed[];
    produced: SimulatedChain['produced'];
    stallSilence: (block: number, ms: number | undefined) => { from: number; to: number };
  },
): Option[] {
  if (x.layer === 'resend') return drawn.map((o) => ({ ...o, fits: (j: number) => c.earlier(j) && o.fits(j) }));
  if (x.layer !== 'stall') return drawn;
  const at = (j: number) => blockOf(c.produced[j]!.cursor);
  return keepsReorgs(drawn, c.placed, (j) => c.stallSilence(at(j), x.forever ? undefined : x.ms));
}

/**
 * A stall's options, best first: those where its silence (`silent`, from its event's block)
 * keeps no connected reorganisation's abandoned blocks from the consumer (seed 20261202 run 15:
 * the server was silent over them), then the rest.
 */
function keepsReorgs(options: Option[], placed: readonly Placed[], silent: (j: number) => { from: number; to: number }): Option[] {
  const connected = placed.flatMap((p) => (p.layer === 'reorg' && !p.away ? [{ fork: p.after - p.depth + 1, after: p.after }] : []));
  if (connected.length === 0) return options;
  const clear = (j: number) => connected.every((r) => silent(j).from > r.after || silent(j).to < r.fork);
  return [...options.map((o) => ({ ...o, fits: (j: number) => clear(j) && o.fits(j) })), ...options];
}

/** The rule as placed: at event `at` (1-based, and its cursor), on `connection`. */
function placedRule(x: Rule, at: { event: number; cursor: string }, connection: RuleConnection, form: (typeof MALFORMED)[number] | undefined): Placed {
  if (x.layer === 'resend') return { layer: 'resend', ...at, count: x.count, connection };
  if (x.layer === 'malformed') return { layer: 'malformed', ...at, form: form!, connection };
  if (x.layer === 'number-amount') return { layer: 'number-amount', ...at, connection };
  if (x.layer === 'unknown-op') return { layer: 'unknown-op', ...at };
  return { layer: 'stall', ...at, ...(x.forever ? {} : { ms: x.ms }), connection };
}

interface Context {
  anyClose: boolean;
  /** The block from which connection 1 has surely ended (surelyClosedFrom). */
  sure: number | undefined;
  slow: ReturnType<typeof slowReaderRides>;
  endsFirst: number;
  /** Past it: the connections from 2 on where it surely ends connection 1, else from 1 on (whichever sends the event first). */
  past: RuleConnection;
  reached: readonly number[];
  /** On connection 1, before the first step that closes it and the rule that ends it. */
  onFirst: (j: number) => boolean;
  /** The consumer is surely sent it: still canonical, above every snapshot taken again. */
  sent: (j: number) => boolean;
  /** Clear of the rules that end their connection (./misbehave.ts misbehaviour). */
  clear: (j: number) => boolean;
  /** Whether an event from position `a` on fits connection 1. */
  hasOnFirst: (a: number) => boolean;
}

/** Where a rule may go, best first; the last is the fallback: the first connection that sends an event the consumer surely gets. */
function optionsFor(x: Rule, c: Context): Option[] {
  const fallback: Option = { connection: c.anyClose ? { from: 1 } : 1, fits: c.sent };
  if (x.layer === 'unknown-op') return [{ connection: 1, fits: c.onFirst }];
  // A slow reader's connection delivers until its queue overflows: a stall goes to a later one, after that (else nowhere).
  if (x.layer === 'stall' && c.slow) {
    const late = c.slow.late;
    return [
      { connection: { from: 2 }, fits: (j) => late(j) && c.sent(j) && c.clear(j) },
      { connection: { from: 2 }, fits: (j) => late(j) && c.sent(j) },
    ];
  }
  // Past the bad frame or stall that ends connection 1 (a second one, or a resend with no event before it).
  const pastEnd: Option = { connection: c.past, fits: (j) => j > c.endsFirst && c.sent(j) && c.clear(j) };
  if (Number.isFinite(c.endsFirst) && (ending(x) || !c.hasOnFirst(x.at)))
    return [pastEnd, { connection: c.past, fits: (j) => j > c.endsFirst && c.sent(j) }, fallback];
  if (!c.anyClose) return [{ connection: 1, fits: c.onFirst }, fallback];
  const onFirst: Option = { connection: { from: 1 }, fits: (j) => c.onFirst(j) && c.sent(j) };
  // Drawn for a later connection: the first from 2 on, on an event produced once connection 1 has surely ended.
  const sure = c.sure;
  if (x.connection > 1 && sure !== undefined)
    return [{ connection: { from: 2 }, fits: (j) => c.reached[j]! >= sure && c.sent(j) && c.clear(j) }, onFirst, fallback];
  return [onFirst, fallback];
}

/**
 * Where a slow reader's schedule may stall the server: the events produced once its stretch (a
 * second without reading, and as long again for the queue to fill) is over, so on a connection
 * after its `reset slow-consumer`.
 */
function slowReaderRides(placed: readonly Placed[], reached: readonly number[]): { end: number; late: (j: number) => boolean } | undefined {
  const slow = placed.find((p) => p.layer === 'slow-reader');
  if (!slow) return undefined;
  const end = slow.from + Math.ceil((1.5 * slow.ms) / (CHAIN.blockIntervalMs * SLOW.timeScale));
  return { end, late: (j) => reached[j]! >= end };
}
