// The server's memory over the run as a figure of the verdict (data), and its drawing: the RSS
// samples of its process tree (memory.ts) as a line, with the scenario's bound drawn where it
// lies, above the first sample (the bound is on growth since the server listened).

import type { Figure } from '../../../findings/verdict.js';
import { timePlot } from './time-plot.js';

export const MEMORY_FIGURE = 'server-memory-plot';
/** A longer run keeps the highest sample of each of this many spans: the peak is never lost. */
export const MEMORY_FIGURE_POINTS = 1000;
const MIB = 1024 * 1024;

export interface MemoryFigureData {
  /** [journal time in ms, RSS bytes], in time order. */
  samples: [number, number][];
  /** Samples taken (more than `samples` holds when the run was long). */
  taken: number;
  firstBytes: number;
  /** The scenario's bound on growth, when it has one. */
  boundBytes?: number;
}

/** At most `max` samples: the highest of each span, in time order. */
export function thinned(samples: readonly { t: number; rss: number }[], max = MEMORY_FIGURE_POINTS): [number, number][] {
  if (samples.length <= max) return samples.map((s) => [s.t, s.rss]);
  const out: [number, number][] = [];
  for (let k = 0; k < max; k++) {
    const span = samples.slice(Math.floor((k * samples.length) / max), Math.floor(((k + 1) * samples.length) / max));
    const top = span.reduce((a, b) => (b.rss > a.rss ? b : a));
    out.push([top.t, top.rss]);
  }
  return out;
}

export function memoryFigure(samples: readonly { t: number; rss: number }[], boundBytes: number | undefined): Figure {
  const data: MemoryFigureData = {
    samples: thinned(samples),
    taken: samples.length,
    firstBytes: samples[0]?.rss ?? 0,
    ...(boundBytes === undefined ? {} : { boundBytes }),
  };
  return {
    id: MEMORY_FIGURE,
    title: "The server's memory over the run (RSS of its process tree)",
    caption: `${samples.length} samples, one every 100 ms from the moment it listened${boundBytes === undefined ? '' : `; the dashed line is the bound: the first sample plus ${(boundBytes / MIB).toFixed(1)} MiB`}.`,
    data,
  };
}

/** The memory figure as SVG, or undefined for another figure. */
export function drawMemoryFigure(figure: Figure): string | undefined {
  if (figure.id !== MEMORY_FIGURE) return undefined;
  const d = figure.data as MemoryFigureData;
  const limits = d.boundBytes === undefined ? [] : [{ value: (d.firstBytes + d.boundBytes) / MIB, label: `bound: +${(d.boundBytes / MIB).toFixed(1)} MiB` }];
  // Drawn in MiB, so that the axis steps are round ones.
  return timePlot([{ name: 'server RSS', color: '#1f5fbf', points: d.samples.map(([t, bytes]) => [t, bytes / MIB] as const) }], {
    yLabel: 'RSS, MiB',
    format: (v) => `${v.toFixed(1)} MiB`,
    limits: [{ value: d.firstBytes / MIB, label: 'when it listened', color: '#888' }, ...limits],
  });
}
