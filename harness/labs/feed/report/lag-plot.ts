// The server run's lag plot (drawn into report.html through the feed lab's vocabulary): each
// probe's and client's delivery lag over time, one line a stream, one point a block (the p99 of
// its events there, at its commit), the crowd's as one line, the scenario's bound dashed red.
// The numbers are the verdict's (server/wire/lag-verdict.ts); nothing is measured here. The
// panel's frame is the storm figure's.

import type { Figure } from '../../../findings/verdict.js';
import { escapeMarkup } from '../../../text/format.js';
import { axes, H, PAD, shade, W } from '../storm/figure.js';
import { LAG_FIGURE, type LagFigureData } from '../server/wire/lag-verdict.js';

const LEGEND_ROW = 14;

/** The lag figure as SVG, or undefined for a figure that is not the lag's. */
export function drawLagFigure(figure: Figure): string | undefined {
  if (figure.id !== LAG_FIGURE) return undefined;
  const d = figure.data as LagFigureData;
  const points = d.series.flatMap((s) => s.points);
  if (points.length === 0) return undefined;
  const t0 = Math.floor(Math.min(...points.map((p) => p[0])) / 1000) * 1000;
  const xMaxS = Math.max(1, (Math.max(...points.map((p) => p[0])) - t0) / 1000);
  const yMax = Math.max(1, ...points.map((p) => p[1]), d.boundMs ?? 0) * 1.05;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (t: number): string => (PAD.left + (plotW * (t - t0)) / 1000 / xMaxS).toFixed(1);
  const y = (ms: number): string => (PAD.top + plotH - (plotH * ms) / yMax).toFixed(1);
  const lines = d.series.map((s, i) => {
    const color = shade(i, d.series.length);
    const path = s.points.map(([t, ms], j) => `${j === 0 ? 'M' : 'L'}${x(t)},${y(ms)}`).join('');
    const dots = s.points
      .map(
        ([t, ms]) =>
          `<circle cx="${x(t)}" cy="${y(ms)}" r="2" fill="${color}"><title>${escapeMarkup(`${s.label}: ${ms} ms at ${(t / 1000).toFixed(2)} s`)}</title></circle>`,
      )
      .join('');
    const legend = `<text x="${W - PAD.right}" y="${PAD.top + 12 + LEGEND_ROW * i}" text-anchor="end" fill="${color}">${escapeMarkup(`${s.label}: p50 ${s.summary.p50} ms, p99 ${s.summary.p99} ms`)}</text>`;
    return `<path d="${path}" fill="none" stroke="${color}" stroke-width="1.5"/>${dots}${legend}`;
  });
  const bound =
    d.boundMs === undefined
      ? ''
      : `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(d.boundMs)}" y2="${y(d.boundMs)}" stroke="#c00" stroke-dasharray="4 3"><title>${escapeMarkup(`bound: p99 at most ${d.boundMs} ms`)}</title></line>`;
  const frame = axes(0, 'delivery lag, ms (each block’s p99)', yMax, `seconds since ${(t0 / 1000).toFixed(0)} s into the run`, xMaxS);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" role="img"><title>${escapeMarkup(figure.title)}</title>${frame}${bound}${lines.join('')}</svg>`;
}
