// Delivery lag in a server run (issue 31): how long after the harness's indexer committed a
// block (its `outbox-commit` entry) each of its events reached a probe or a client — the
// arrival of the event frame at the probe's relay or the client, minus the commit, on the one
// clock of the journal. Only live events count: an event of a block committed before the
// stream's first subscribe is history replayed, not lag. After a reorganisation a block number
// is committed again; an event is timed from the last commit of its block before it arrived.
// Pure: the checker reports what this returns, as data, and the reports draw it.

import type { JournalEntry } from '../../../../record/journal.js';
import { quantile } from '../../storm/ks.js';
import { clientStream } from '../clients/streams.js';

export interface LagSummary {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

/** A stream's lag: its summary, and over time one point a block, [commit time, the p99 lag of the block's events] in ms. */
export interface LagSeries {
  stream: string;
  summary: LagSummary;
  points: [number, number][];
}

export interface Arrival {
  t: number;
  cursor: string;
}

export interface LagSample {
  block: number;
  committedAt: number;
  lagMs: number;
}

/** The journal's name for the crowd's series (every crowd client's samples together). */
export const CROWD_SERIES = 'crowd';

const PROBE_OR_CLIENT = /^probe(-\d+)?$|^client:/;
const round = (ms: number): number => Math.round(ms * 10) / 10;

/** When each block was committed, ascending per block number. */
export function commitTimes(journal: readonly JournalEntry[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const e of journal) if (e.type === 'outbox-commit') for (const block of e.blocks) out.set(block, [...(out.get(block) ?? []), e.t]);
  return out;
}

/** The block number of a cursor (`chainId:block:logIndex`), or undefined. */
export function blockOfCursor(cursor: string): number | undefined {
  const block = cursor.split(':')[1];
  return block === undefined || !/^\d+$/.test(block) ? undefined : Number(block);
}

/** One sample per arrival of a block committed at or after `since` and before the arrival. */
export function lagSamples(commits: ReadonlyMap<number, readonly number[]>, arrivals: readonly Arrival[], since: number): LagSample[] {
  const out: LagSample[] = [];
  for (const a of arrivals) {
    const block = blockOfCursor(a.cursor);
    const times = block === undefined ? undefined : commits.get(block);
    const committedAt = times?.filter((t) => t <= a.t).at(-1);
    if (block === undefined || committedAt === undefined || committedAt < since) continue;
    out.push({ block, committedAt, lagMs: a.t - committedAt });
  }
  return out;
}

/** p50, p99 (linear interpolation) and max of the lags, in ms to 0.1; undefined without a sample. */
export function summarizeLag(lags: readonly number[]): LagSummary | undefined {
  if (lags.length === 0) return undefined;
  const sorted = [...lags].sort((a, b) => a - b);
  return { samples: lags.length, p50: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)), max: round(sorted.at(-1)!) };
}

/** A stream's series: its summary and one point a block (its commit time, the p99 lag of its events there). */
export function seriesOf(stream: string, samples: readonly LagSample[]): LagSeries | undefined {
  const summary = summarizeLag(samples.map((s) => s.lagMs));
  if (!summary) return undefined;
  const byCommit = new Map<number, number[]>();
  for (const s of samples) byCommit.set(s.committedAt, [...(byCommit.get(s.committedAt) ?? []), s.lagMs]);
  const points = [...byCommit].sort((a, b) => a[0] - b[0]).map(([t, lags]): [number, number] => [round(t), round(quantile(lags, 0.99))]);
  return { stream, summary, points };
}

/** The cursor of an event frame (whatever the order of its members), or undefined. */
function eventCursor(line: string): string | undefined {
  try {
    const frame = JSON.parse(line) as { op?: unknown; cursor?: unknown } | null;
    return frame?.op === 'event' && typeof frame.cursor === 'string' ? frame.cursor : undefined;
  } catch {
    return undefined;
  }
}

/** Each probe's and client's event frames as they arrived, and when the stream first subscribed. */
function wireArrivals(journal: readonly JournalEntry[]): Map<string, { since: number; arrivals: Arrival[] }> {
  const streams = new Map<string, { since: number; arrivals: Arrival[] }>();
  for (const e of journal) {
    if (e.type !== 'wire' || !PROBE_OR_CLIENT.test(e.stream)) continue;
    let s = streams.get(e.stream);
    if (e.kind === 'recv' && !s) streams.set(e.stream, (s = { since: e.t, arrivals: [] }));
    if (e.kind !== 'send' || !s || !e.line.includes('"event"')) continue;
    const cursor = eventCursor(e.line);
    if (cursor !== undefined) s.arrivals.push({ t: e.t, cursor });
  }
  return streams;
}

/** The lag of every probe and client stream that read live events, then the crowd's (all its clients together). */
export function lagSeriesOf(journal: readonly JournalEntry[]): LagSeries[] {
  const commits = commitTimes(journal);
  if (commits.size === 0) return [];
  const out: LagSeries[] = [];
  for (const [stream, { since, arrivals }] of wireArrivals(journal)) {
    const series = seriesOf(stream, lagSamples(commits, arrivals, since));
    if (series) out.push(series);
  }
  const crowd = journal.flatMap((e) =>
    e.type === 'crowd-client' && e.subscribedAt !== undefined
      ? lagSamples(
          commits,
          e.events.map((cursor, i) => ({ cursor, t: e.arrivals[i]! })),
          e.subscribedAt,
        )
      : [],
  );
  const series = seriesOf(CROWD_SERIES, crowd);
  return series ? [...out, series] : out;
}

/** A stream's name in reports: `probe` is probe 1; a client's stream is `client:<name>`. */
export function lagStreamWords(stream: string, crowdClients = 0): string {
  if (stream === CROWD_SERIES) return `the crowd (${crowdClients} clients)`;
  if (stream === 'probe') return 'probe 1';
  if (stream.startsWith('probe-')) return `probe ${stream.slice('probe-'.length)}`;
  return stream.startsWith('client:') ? `client ${stream.slice(clientStream('').length)}` : stream;
}
