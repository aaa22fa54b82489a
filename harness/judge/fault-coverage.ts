// Whether each of a scenario's `faults` (the layer every lab shares: cuts, toxics, signals,
// packet loss) took effect on the consumer under test, from what the harness saw: the engine's
// apply and lift entries, the consumer's wire lines and its processes. A lab adds rows for its
// own faults (publisher misbehaviours, hooks, reorganisations) beside these.
//
// "Took effect" is what the consumer met, not what the harness did: a cut that interrupted a live
// connection, or kept a running consumer off the publisher until it was lifted; a toxic that
// lines passed through; a signal that reached a process; packet loss that dropped packets.

import type { FaultCoverage } from '../findings/coverage.js';
import type { FaultPointSpec } from '../scenario/fault-points.js';
import type { FaultPlan, Trigger } from '../scenario/types.js';
import type { JournalEntry } from '../record/journal.js';

type Fault = Extract<JournalEntry, { type: 'fault' }>;
type Wire = Extract<JournalEntry, { type: 'wire' }>;

/** A shared fault's kind: one row of the chaos coverage table. */
export function kindOf(plan: FaultPlan): string {
  const e = plan.effect;
  switch (e.kind) {
    case 'proxy-down':
      return 'cut';
    case 'loss':
      return 'loss';
    case 'signal':
      return { SIGKILL: 'kill', SIGTERM: 'sigterm', SIGSTOP: 'pause' }[e.signal];
    case 'toxic':
      return TOXIC_KINDS[e.toxic];
  }
}

const TOXIC_KINDS: Record<Extract<FaultPlan['effect'], { kind: 'toxic' }>['toxic'], string> = {
  latency: 'latency',
  bandwidth: 'bandwidth',
  slow_close: 'slow-close',
  timeout: 'half-open',
  slicer: 'slicing',
  limit_data: 'byte-limit',
  reset_peer: 'tcp-reset',
};

/** A journal time in seconds, as the coverage rows word it ("1.20 s"). */
export const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** The consumer's side of the run as the journal shows it: its connections and its processes' lifetimes. */
export class ConsumerTimeline {
  private readonly streams = new Set<string>();
  private readonly opens = new Map<string, Wire>();
  private readonly closes = new Map<string, number>();
  private readonly lines: Wire[] = [];
  private readonly lives: { incarnation: number; from: number; to: number }[] = [];
  readonly end: number;

  constructor(entries: readonly JournalEntry[]) {
    const started = new Map<number, number>();
    for (const e of entries) if (e.type === 'stream' && e.role === 'consumer') this.streams.add(e.stream);
    for (const e of entries) {
      if (e.type === 'wire' && (this.streams.has(e.stream) || e.owner?.role === 'consumer')) {
        const key = `${e.stream}#${e.conn}`;
        if (e.kind === 'open') this.opens.set(key, e);
        else if (e.kind === 'close') this.closes.set(key, e.t);
        else if (e.kind === 'send' || e.kind === 'recv') this.lines.push(e);
      }
      if (e.type === 'process-start' && e.role === 'consumer') started.set(e.incarnation, e.t);
      if (e.type === 'process-exit' && e.role === 'consumer') this.lives.push({ incarnation: e.incarnation, from: started.get(e.incarnation) ?? e.t, to: e.t });
    }
    this.end = entries.at(-1)?.t ?? 0;
    for (const [incarnation, from] of started) if (!this.lives.some((l) => l.incarnation === incarnation)) this.lives.push({ incarnation, from, to: this.end });
  }

  /** The consumer's connection open at `t`, if any: its name and when it closed. */
  openAt(t: number): { conn: number; closed?: number } | undefined {
    for (const [key, open] of this.opens) {
      const closed = this.closes.get(key);
      if (open.t <= t && (closed === undefined || closed >= t)) return { conn: open.conn, ...(closed === undefined ? {} : { closed }) };
    }
    return undefined;
  }

  /** The first connection the consumer opened after `t`. */
  openedAfter(t: number): Wire | undefined {
    return [...this.opens.values()].filter((o) => o.t >= t).sort((a, b) => a.t - b.t)[0];
  }

  /** A consumer process running at some moment of [from, to]. */
  aliveIn(from: number, to: number): number | undefined {
    return this.lives.find((l) => l.from <= to && l.to >= from)?.incarnation;
  }

  /** Lines between the publisher and the consumer in [from, to]: `send` to it, `recv` from it. */
  linesIn(from: number, to: number, kind: 'send' | 'recv'): number {
    return this.lines.filter((l) => l.kind === kind && l.t >= from && l.t <= to).length;
  }

  /** Consumer connections that closed in [from, to]. */
  closedIn(from: number, to: number): number {
    return [...this.closes.values()].filter((t) => t >= from && t <= to).length;
  }
}

/** The coverage rows of a scenario's shared faults; `points` words a lab's trigger ("before EVENT 7"). */
export function sharedFaultCoverage(
  faults: readonly FaultPlan[],
  entries: readonly JournalEntry[],
  points: Record<string, FaultPointSpec> = {},
): FaultCoverage[] {
  const timeline = new ConsumerTimeline(entries);
  const faultEntries = entries.filter((e): e is Fault => e.type === 'fault');
  return faults.map((plan) => {
    const kind = kindOf(plan);
    const row = (took: boolean, how: string): FaultCoverage => ({ fault: plan.name, kind, took, how });
    const apply = faultEntries.find((e) => e.name === plan.name && e.action === 'apply');
    if (!apply) return row(false, `the ${kind} fault never started: its trigger (${triggerWords(plan.start, points)}) never came`);
    const lift = faultEntries.find((e) => e.name === plan.name && e.action === 'lift' && e.t >= apply.t);
    const to = lift?.t ?? timeline.end;
    const effect = plan.effect;
    if (effect.kind === 'signal')
      return apply.incarnation === undefined || /not sent/.test(apply.detail)
        ? row(false, `${apply.detail} at ${secs(apply.t)}`)
        : row(true, `${apply.detail} at ${secs(apply.t)}`);
    if (effect.kind === 'loss') {
      const counters = entries.find((e): e is Extract<JournalEntry, { type: 'loss' }> => e.type === 'loss' && e.name === plan.name);
      const dropped = counters?.dropped.packets ?? 0;
      return row(dropped > 0, `packet loss of ${effect.percent} % from ${secs(apply.t)} to ${secs(to)} dropped ${dropped} packet${dropped === 1 ? '' : 's'}`);
    }
    if (effect.kind === 'proxy-down') return cutRow(row, timeline, apply.t, to);
    const direction = effect.stream === 'downstream' ? 'send' : 'recv';
    const lines = timeline.linesIn(apply.t, to, direction);
    const closed = timeline.closedIn(apply.t, to);
    const words = direction === 'send' ? 'to the consumer' : 'from the consumer';
    return row(
      lines > 0 || closed > 0,
      `the ${effect.toxic} toxic (${effect.stream}) from ${secs(apply.t)} to ${secs(to)}: ${lines} line${lines === 1 ? '' : 's'} passed ${words} through it, ${closed} consumer connection${closed === 1 ? '' : 's'} closed`,
    );
  });
}

/** A cut took effect when it interrupted a live connection, or kept a running consumer off the publisher until it was lifted. */
function cutRow(row: (took: boolean, how: string) => FaultCoverage, timeline: ConsumerTimeline, from: number, to: number): FaultCoverage {
  const live = timeline.openAt(from);
  if (live) {
    const ended = live.closed !== undefined && live.closed <= to ? `ended it at ${secs(live.closed)}` : 'left it open across the cut';
    return row(true, `the cut from ${secs(from)} to ${secs(to)} met live connection ${live.conn} and ${ended}`);
  }
  const process = timeline.aliveIn(from, to);
  const next = timeline.openedAfter(to);
  if (process !== undefined && next)
    return row(true, `the cut from ${secs(from)} to ${secs(to)} kept consumer process ${process} off the publisher: it connected again at ${secs(next.t)}`);
  return row(
    false,
    `the cut from ${secs(from)} to ${secs(to)} met no connection of the consumer${process === undefined ? ', and no consumer process ran then' : ', and it did not connect after it'}`,
  );
}

function triggerWords(t: Trigger, points: Record<string, FaultPointSpec>): string {
  switch (t.kind) {
    case 'point':
      return points[t.point]?.describe(t.value) ?? `${t.point} ${t.value}`;
    case 'incarnation':
      return `consumer process ${t.n}`;
    case 'at':
      return `${secs(t.ms)} into the run`;
    case 'after':
      return `${secs(t.ms)} after the start`;
    case 'incarnation-exit':
      return 'the exit of a consumer process';
  }
}
