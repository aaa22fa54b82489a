// Delivery lag's part of a server run's verdict (lag.ts measures): a table of every stream's p50,
// p99 and max, the figure report.html draws (report/lag-plot.ts), the words a passing headline
// states for the probes and the crowd, and a finding when the probe's or the crowd's p99 is past
// the scenario's bound. A harness client's lag (a slow reader's, by design) is reported, never
// bounded.

import type { Figure, Finding, Verdict } from '../../../../findings/verdict.js';
import type { JournalEntry } from '../../../../record/journal.js';
import { CROWD_SERIES, type LagSeries, lagSeriesOf, lagStreamWords } from './lag.js';

export const LAG_FIGURE = 'lag';

/** The figure's data: each stream's series with its name in words, and the bound if any. */
export interface LagFigureData {
  series: (LagSeries & { label: string })[];
  boundMs?: number;
}

export interface LagVerdict {
  findings: Finding[];
  table?: Verdict['tables'][number];
  figure?: Figure;
  /** "delivery lag p50/p99: …", for a passing headline. */
  words?: string;
}

const ms = (x: number): string => `${x < 10 ? x.toFixed(1) : Math.round(x)} ms`;
const bounded = (s: LagSeries): boolean => !s.stream.startsWith('client:');

export function lagVerdict(journal: readonly JournalEntry[], maxP99Ms?: number): LagVerdict {
  const crowd = journal.filter((e) => e.type === 'crowd-client').length;
  const series = lagSeriesOf(journal).map((s) => ({ ...s, label: lagStreamWords(s.stream, crowd) }));
  if (series.length === 0) return { findings: [] };
  const findings: Finding[] =
    maxP99Ms === undefined
      ? []
      : series
          .filter((s) => bounded(s) && s.summary.p99 > maxP99Ms)
          .map((s) => ({
            code: 'lag-too-high',
            text: `${s.label}: p99 delivery lag ${ms(s.summary.p99)} (p50 ${ms(s.summary.p50)}, max ${ms(s.summary.max)}, ${s.summary.samples} events) is past the scenario's bound of ${ms(maxP99Ms)}: a committed block must reach every client that reads without delay, within the poll interval and the time to write it (server contract §3)`,
            ...(s.stream === CROWD_SERIES ? {} : { subject: { t: s.points.reduce((a, b) => (b[1] > a[1] ? b : a))[0] } }),
          }));
  const headlined = series.filter(bounded);
  return {
    findings,
    ...(headlined.length > 0
      ? { words: `delivery lag p50/p99: ${headlined.map((s) => `${s.label} ${ms(s.summary.p50)}/${ms(s.summary.p99)}`).join(', ')}` }
      : {}),
    table: {
      id: 'lag',
      title: "Delivery lag: from the harness's commit of a block to each of its events reaching a probe or client (live events only)",
      columns: ['events', 'p50', 'p99', 'max', 'bound (p99)'],
      rows: series.map((s) => ({
        label: s.label,
        cells: [s.summary.samples, ms(s.summary.p50), ms(s.summary.p99), ms(s.summary.max), maxP99Ms !== undefined && bounded(s) ? ms(maxP99Ms) : '—'],
      })),
    },
    figure: {
      id: LAG_FIGURE,
      title: 'Delivery lag over time',
      caption:
        "One point a block: the p99 lag of its events on that stream, at the time the harness committed it. A probe's frames are timed as they pass its relay, a client's as it reads them.",
      data: { series, ...(maxP99Ms === undefined ? {} : { boundMs: maxP99Ms }) } satisfies LagFigureData,
    },
  };
}
