// What the probes' wire record says about the faults of a server run (coverage as data,
// findings/coverage.ts): which connections held a live subscription at a moment, whether a probe
// resumed from its cursor afterwards, when a probe was cut off, and whether each reorganisation
// of the chain reached a probe as a revoke — live, or at the resume of a probe cut off across it
// (`reorg-away`). Decided from what the harness saw, never from what the schedule meant.

import { parseCursor } from '../../../../../protocol/feed/cursor.js';
import type { ServerFrame } from '../../../../../protocol/feed/frames.js';
import type { FaultCoverage } from '../../../../findings/coverage.js';
import type { JournalEntry } from '../../../../record/journal.js';
import { plural, seconds, shortCursor } from '../../report/words.js';
import type { SimulatedChain } from '../../scenario/chain-script.js';
import type { ProbeConn } from './wire-checks.js';

/** A frame that answers a subscribe (heartbeats do not). */
const answers = (f: ServerFrame | undefined): f is ServerFrame => f !== undefined && f.op !== 'ping' && f.op !== 'pong';

type Framed = { t: number; frame: ServerFrame };
const framesOf = (c: ProbeConn): Framed[] => c.items.flatMap((i) => ('frame' in i && i.frame ? [{ t: i.t, frame: i.frame }] : []));

/** Connections subscribed before `t`, served before it and still open at it: a probe mid-stream then. */
export function liveAt(conns: readonly ProbeConn[], t: number, where: { probe?: number; instance?: number } = {}): ProbeConn[] {
  return conns.filter(
    (c) =>
      (where.probe === undefined || c.probe === where.probe) &&
      (where.instance === undefined || c.instance === where.instance) &&
      c.subscribe !== undefined &&
      c.subscribe.t <= t &&
      (c.closedAt ?? Infinity) >= t &&
      framesOf(c).some((f) => f.t <= t),
  );
}

/** Probe `probe`'s first resume after `t` (a subscribe with its cursor) that the server answered, on `instance` if given. */
export function resumedAfter(conns: readonly ProbeConn[], probe: number, t: number, instance?: number): { conn: ProbeConn; at: number } | undefined {
  for (const c of conns) {
    if (c.probe !== probe || !c.subscribe || c.subscribe.t <= t || c.subscribe.cursor === null) continue;
    if (instance !== undefined && c.instance !== instance) continue;
    const answer = framesOf(c).find((f) => answers(f.frame));
    if (answer) return { conn: c, at: answer.t };
  }
  return undefined;
}

/** What a live connection had been sent before `t`, in words. */
export const heldWords = (c: ProbeConn, t: number): string =>
  `connection ${c.conn}${c.instance ? ` to instance ${c.instance}` : ''}, ${plural(framesOf(c).filter((f) => f.t <= t).length, 'frame')} sent on it before`;

export interface AwayWindow {
  probe: number;
  from: number;
  /** When its proxy came up again (none: it stayed down to the end). */
  to?: number;
}

/** Each probe's cut-offs, from the scene's `away-probe-<n>` faults (down, then up again). */
export function awayWindows(journal: readonly JournalEntry[]): AwayWindow[] {
  const out: AwayWindow[] = [];
  for (const e of journal) {
    const m = e.type === 'fault' ? /^away-probe-(\d+)$/.exec(e.name) : null;
    if (!m || e.type !== 'fault') continue;
    const probe = Number(m[1]);
    if (e.action === 'apply') out.push({ probe, from: e.t });
    else {
      const open = out.find((w) => w.probe === probe && w.to === undefined);
      if (open) open.to = e.t;
    }
  }
  return out;
}

/** When each reorganisation of the chain was committed to the outbox: the commits that went back below the head, in order. */
export function reorgCommits(journal: readonly JournalEntry[], reorgs: SimulatedChain['reorgs']): { reorg: SimulatedChain['reorgs'][number]; t?: number }[] {
  const times: number[] = [];
  let head = -1;
  for (const e of journal) {
    if (e.type !== 'outbox-commit' || e.blocks.length === 0) continue;
    if (Math.min(...e.blocks) <= head) times.push(e.t);
    head = Math.max(head, ...e.blocks);
  }
  return reorgs.map((reorg, i) => ({ reorg, ...(times[i] === undefined ? {} : { t: times[i] }) }));
}

const fromBlock = (f: ServerFrame): number | undefined => (f.op === 'revoke' ? parseCursor(f.fromCursor).blockNumber : undefined);

function reorgName(r: SimulatedChain['reorgs'][number]): string {
  return `the reorganisation after block ${r.afterBlock} (fork point block ${r.forkNumber})`;
}

/** A reorganisation with a probe cut off across it: it must come back with an abandoned cursor and be answered with a revoke from this fork point. */
function awayRow(conns: readonly ProbeConn[], r: SimulatedChain['reorgs'][number], t: number, away: AwayWindow[]): FaultCoverage {
  const base = { fault: `reorganisation after block ${r.afterBlock}`, kind: 'reorg-away' };
  const probes = away.map((w) => w.probe).join(' and ');
  for (const w of away) {
    // Its first answered resume that was due a revoke from this fork point (attempts while its proxy was down got no answer).
    const dueHere = (x: ProbeConn) => x.dues.some((d) => d.kind === 'revoke' && d.cursor !== undefined && parseCursor(d.cursor).blockNumber === r.forkNumber);
    const c = conns.find((x) => x.probe === w.probe && x.subscribe && x.subscribe.t > t && dueHere(x) && framesOf(x).some((f) => answers(f.frame)));
    const first = c && framesOf(c).find((f) => answers(f.frame));
    if (c && first?.frame.op === 'revoke')
      return {
        ...base,
        took: true,
        how: `probe ${w.probe} was cut off across ${reorgName(r)} at ${seconds(t)} and resumed from ${shortCursor(c.subscribe!.cursor)}, an abandoned cursor: its first answer was revoke from ${shortCursor(first.frame.fromCursor)} at ${seconds(first.t)}`,
      };
  }
  const back = away.flatMap((w) =>
    conns.filter((x) => x.probe === w.probe && x.subscribe && x.subscribe.t > t && framesOf(x).some((f) => answers(f.frame))).slice(0, 1),
  );
  const resumed = back.length
    ? back
        .map(
          (c) =>
            `probe ${c.probe} resumed from ${shortCursor(c.subscribe!.cursor)}, which was due ${c.dues.map((d) => d.kind).join(' or ') || 'nothing noted'}`,
        )
        .join('; ')
    : `probe ${probes} never subscribed again`;
  return {
    ...base,
    took: false,
    how: `${reorgName(r)} reached no probe that was cut off across it (probe ${probes}) as a revoke at its resume: ${resumed}`,
  };
}

/** A reorganisation while the probes follow: a revoke from its fork point (or, from a wrong point, any revoke before the next one) to a probe. */
function liveRow(conns: readonly ProbeConn[], r: SimulatedChain['reorgs'][number], t: number, next: number): FaultCoverage {
  const base = { fault: `reorganisation after block ${r.afterBlock}`, kind: 'reorg' };
  const revokes = conns.flatMap((c) => framesOf(c).flatMap((f) => (f.frame.op === 'revoke' && f.t >= t ? [{ c, f }] : [])));
  const hit = revokes.find(({ f }) => fromBlock(f.frame) === r.forkNumber) ?? revokes.find(({ f }) => f.t < next);
  if (hit)
    return {
      ...base,
      took: true,
      how: `${reorgName(r)} at ${seconds(t)} reached probe ${hit.c.probe} (connection ${hit.c.conn}) as revoke from ${shortCursor(hit.f.frame.op === 'revoke' ? hit.f.frame.fromCursor : '?')} at ${seconds(hit.f.t)}`,
    };
  const live = liveAt(conns, t);
  return {
    ...base,
    took: false,
    how: `${reorgName(r)} at ${seconds(t)} reached no probe: ${live.length ? `probe ${[...new Set(live.map((c) => c.probe))].join(' and ')} followed then, and none was sent a revoke (none held anything from block ${r.forkNumber} on?)` : 'no probe held a live subscription then'}`,
  };
}

/** One row per reorganisation of the chain: whether its revoke reached the probe meant to see it. */
export function reorgCoverage(journal: readonly JournalEntry[], conns: readonly ProbeConn[], reorgs: SimulatedChain['reorgs']): FaultCoverage[] {
  const commits = reorgCommits(journal, reorgs);
  const windows = awayWindows(journal);
  return commits.map(({ reorg: r, t }, i) => {
    if (t === undefined)
      return {
        fault: `reorganisation after block ${r.afterBlock}`,
        kind: 'reorg',
        took: false,
        how: `${reorgName(r)} was never committed to the outbox: the script ended before it`,
      };
    const away = windows.filter((w) => w.from <= t && (w.to ?? Infinity) > t);
    return away.length ? awayRow(conns, r, t, away) : liveRow(conns, r, t, commits[i + 1]?.t ?? Infinity);
  });
}
