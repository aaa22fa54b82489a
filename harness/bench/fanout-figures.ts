// make bench §5's figures from its runs (bench/fanout.mjs measures, this only summarises): the
// feed server's throughput to N subscribers against a plain socket server sending the same
// bytes, and its p99 delivery lag and peak memory against the same live stream to one
// subscriber. A run that did not read its whole stream counts in no figure and is named in the
// note; so is every reset and early close, which a healthy run has none of.
import { type Figure, type Summary, summarize } from './figures.js';

/** What bench/fanout-client.mjs prints. */
export interface FanOutClientResult {
  connections: number;
  events: number;
  seconds: number;
  eventsPerSec: number;
  /** Live runs: the delivery lags in ms (block committed → frame read by the client). */
  lag?: { n: number; p50?: number; p99?: number; max?: number };
  /** Live runs: how long mining the live blocks took, in s. */
  blocksSpanS?: number;
  resets: Record<string, number>;
  closedEarly: number;
  /** Set when the client stopped before the stream was read whole, and why. */
  incomplete?: string;
}

export type FanOutRun = { client: FanOutClientResult; publisher: { maxRssMiB: number; rssMiB: number }; note?: string } | { refused: string };

export interface FanOutSamples {
  connections: number;
  /** Events in the replayed stream. */
  events: number;
  replay: readonly FanOutRun[];
  /** The floor of `replay`: a plain socket server writing the same bytes. */
  raw: readonly FanOutRun[];
  /** Live runs and their floor (the same live stream to one subscriber); absent: throughput only. */
  live?: LiveSamples;
  /**
   * The same live stream served by the reference server as the contract runs it: its own
   * process (`server` names it) polling an outbox the bench's indexer writes. Run i of `floor`
   * (one subscriber) is paired with run i of `runs` for the memory per connection.
   */
  contract?: LiveSamples & { server: string; pollMs: number };
}

export interface LiveSamples {
  runs: readonly FanOutRun[];
  floor: readonly FanOutRun[];
  blocks: number;
  eventsPerBlock: number;
  intervalMs: number;
}

type Measured = Extract<FanOutRun, { client: unknown }>;
const measured = (runs: readonly FanOutRun[]): Measured[] => runs.filter((r): r is Measured => 'client' in r);
const complete = (runs: readonly FanOutRun[]): Measured[] => measured(runs).filter((r) => r.client.incomplete === undefined);
/** The runs that ran but stopped before their stream was read whole (the client says why). */
export const incompleteOf = (runs: readonly FanOutRun[]): Measured[] => measured(runs).filter((r) => r.client.incomplete !== undefined);

/** Summary of `pick` over the complete runs; undefined when there is none. */
function over(runs: readonly FanOutRun[], pick: (run: Measured) => number | undefined): Summary | undefined {
  const samples = complete(runs)
    .map(pick)
    .filter((x): x is number => x !== undefined);
  return samples.length === 0 ? undefined : summarize(samples);
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What went wrong in `runs`, in a few words each (empty when nothing did). */
export function troubles(runs: readonly FanOutRun[]): string[] {
  const said: string[] = [];
  const refusals = new Set(runs.flatMap((r) => ('refused' in r ? [r.refused] : [])));
  for (const why of refusals) said.push(`not run: ${why}`);
  const all = measured(runs);
  const incomplete = incompleteOf(runs);
  if (incomplete.length > 0)
    said.push(`${incomplete.length} of ${all.length} runs incomplete (${[...new Set(incomplete.map((r) => r.client.incomplete))].join('; ')})`);
  const resets: Record<string, number> = {};
  for (const r of all) for (const [reason, count] of Object.entries(r.client.resets)) resets[reason] = (resets[reason] ?? 0) + count;
  for (const [reason, count] of Object.entries(resets)) said.push(`${plural(count, 'reset')} ${reason}`);
  const closed = all.reduce((sum, r) => sum + r.client.closedEarly, 0);
  if (closed > 0) said.push(`${plural(closed, 'connection')} closed by the server early`);
  for (const note of new Set(all.flatMap((r) => (r.note ? [r.note] : [])))) said.push(note);
  return said;
}

/**
 * What one more connection costs a server, in KiB: (peak RSS with `connections` − RSS with one)
 * / (connections − 1), both in MiB. Undefined below two connections.
 */
export function memoryPerConnectionKiB(peakMiB: number, oneMiB: number, connections: number): number | undefined {
  if (!(connections >= 2)) return undefined;
  return ((peakMiB - oneMiB) * 1024) / (connections - 1);
}

/** memoryPerConnectionKiB of each complete run paired with its round's complete floor run. */
export function perConnectionSamples(runs: readonly FanOutRun[], floor: readonly FanOutRun[], connections: number): number[] {
  const samples: number[] = [];
  for (const [i, run] of runs.entries()) {
    const one = floor[i];
    if (!one || complete([run]).length === 0 || complete([one]).length === 0) continue;
    const kib = memoryPerConnectionKiB((run as Measured).publisher.maxRssMiB, (one as Measured).publisher.maxRssMiB, connections);
    if (kib !== undefined) samples.push(kib);
  }
  return samples;
}

const count = (n: number): string => n.toLocaleString('en-US').replaceAll(',', ' ');

/** The throughput, p99 lag and memory figures of one connection count. */
export function fanOutFigures(samples: FanOutSamples, section = '5 fan-out'): Figure[] {
  const { connections, events } = samples;
  const who = `feed server, ${count(connections)} subscribers`;
  const note = (...parts: (string | undefined)[]): string | undefined => {
    const all = parts.filter((p): p is string => Boolean(p));
    return all.length ? all.join('; ') : undefined;
  };
  const withValue = (figure: Figure, value: Summary | undefined, floor: { name: string; value: Summary | undefined }): Figure => ({
    ...figure,
    ...(value ? { value } : {}),
    ...(floor.value ? { floor: { name: floor.name, value: floor.value } } : {}),
  });
  const throughput = withValue(
    {
      section,
      name: `${who}, ${count(events)}-event replay: throughput`,
      unit: 'events/s',
      note: note(...troubles(samples.replay), ...troubles(samples.raw).map((t) => `floor: ${t}`)),
    },
    over(samples.replay, (r) => r.client.eventsPerSec),
    { name: 'plain socket server, same bytes and client', value: over(samples.raw, (r) => r.client.eventsPerSec) },
  );
  if (!samples.live) return [throughput];
  const { runs, floor, blocks, eventsPerBlock, intervalMs } = samples.live;
  const lagSpread = over(runs, (r) => r.client.lag?.p50);
  const span = over(runs, (r) => r.client.blocksSpanS);
  const scheduled = ((blocks - 1) * intervalMs) / 1000;
  const live = `live, ${blocks} blocks of ${plural(eventsPerBlock, 'event')} every ${intervalMs} ms`;
  const oneSubscriber = '1 subscriber, same stream';
  return [
    throughput,
    withValue(
      {
        section,
        name: `${who}, ${live}: p99 delivery lag`,
        unit: 'ms',
        note: note(
          lagSpread && `p50 ${lagSpread.median.toFixed(1)} ms`,
          span && `blocks mined over ${span.median.toFixed(2)} s (${scheduled.toFixed(2)} s scheduled)`,
          ...troubles(runs),
          ...troubles(floor).map((t) => `floor: ${t}`),
        ),
      },
      over(runs, (r) => r.client.lag?.p99),
      { name: oneSubscriber, value: over(floor, (r) => r.client.lag?.p99) },
    ),
    withValue(
      { section, name: `${who}, ${live}: publisher peak RSS`, unit: 'MiB' },
      over(runs, (r) => r.publisher.maxRssMiB),
      { name: oneSubscriber, value: over(floor, (r) => r.publisher.maxRssMiB) },
    ),
  ];
}

/** The reference server as the contract runs it, live: p50 and p99 delivery lag, memory per connection. */
export function contractFigures(samples: FanOutSamples, section = '5 fan-out'): Figure[] {
  if (!samples.contract) return [];
  const { runs, floor, blocks, eventsPerBlock, intervalMs, server, pollMs } = samples.contract;
  const n = samples.connections;
  const who = `${server} (its own process, polling every ${pollMs} ms), ${count(n)} subscribers, live, ${blocks} blocks of ${plural(eventsPerBlock, 'event')} every ${intervalMs} ms`;
  const oneSubscriber = '1 subscriber, same stream';
  const notes = [...troubles(runs), ...troubles(floor).map((t) => `floor: ${t}`)];
  const note = notes.length ? notes.join('; ') : undefined;
  const lagFigure = (p: 'p50' | 'p99'): Figure => {
    const value = over(runs, (r) => r.client.lag?.[p]);
    const one = over(floor, (r) => r.client.lag?.[p]);
    return {
      section,
      name: `${who}: ${p} delivery lag`,
      unit: 'ms',
      ...(value ? { value } : {}),
      ...(one ? { floor: { name: oneSubscriber, value: one } } : {}),
      ...(note ? { note } : {}),
    };
  };
  const perConnection = perConnectionSamples(runs, floor, n);
  const peak = over(runs, (r) => r.publisher.maxRssMiB);
  const one = over(floor, (r) => r.publisher.maxRssMiB);
  return [
    lagFigure('p50'),
    lagFigure('p99'),
    {
      section,
      name: `${who}: memory per connection, (peak RSS − RSS with 1) / ${count(n - 1)}`,
      unit: 'KiB',
      ...(perConnection.length ? { value: summarize(perConnection) } : {}),
      ...(peak && one ? { note: `peak RSS ${peak.median.toFixed(1)} MiB, with 1 subscriber ${one.median.toFixed(1)} MiB` } : {}),
    },
  ];
}
