// The restart storm's picture (drawn into report.html through the feed lab's vocabulary): on the
// left the attempts the server saw per 100 ms, every process stacked in its own shade, restarts
// marked; on the right the same restart played by 50 000 clients that draw their delays from
// the measured ones, against a twin without jitter, in accepts per second.

import { escapeMarkup } from '../../../text/format.js';
import type { Figure } from '../../../findings/verdict.js';
import { STORM_FIGURE, type StormFigureData } from './figure-data.js';

// The panel's frame is shared with the server run's lag plot (report/lag-plot.ts).
export const W = 560;
export const H = 240;
export const PAD = { left: 48, right: 12, top: 24, bottom: 34 };

export const shade = (i: number, n: number): string => `hsl(${Math.round((i * 360) / Math.max(1, n))} 60% 50%)`;
const fmt = (x: number): string => (x >= 10_000 ? `${Math.round(x / 1000)}k` : String(Math.round(x)));

/** A panel's title, axes and ticks at `x0`: y from 0 to `yMax`, x in seconds from 0 to `xMaxS`. */
export function axes(x0: number, title: string, yMax: number, xLabel: string, xMaxS: number): string {
  const plotH = H - PAD.top - PAD.bottom;
  const plotW = W - PAD.left - PAD.right;
  const ticks = [0, 0.5, 1].map((f) => {
    const y = PAD.top + plotH * (1 - f);
    return `<line x1="${x0 + PAD.left - 4}" x2="${x0 + PAD.left}" y1="${y}" y2="${y}" stroke="#888"/><text x="${x0 + PAD.left - 6}" y="${y + 4}" text-anchor="end">${escapeMarkup(fmt(yMax * f))}</text>`;
  });
  const step = xMaxS > 20 ? 5 : xMaxS > 8 ? 2 : 1;
  const xTicks: string[] = [];
  for (let s = 0; s <= xMaxS; s += step) {
    const x = x0 + PAD.left + (plotW * s) / Math.max(xMaxS, 1e-9);
    xTicks.push(`<text x="${x}" y="${H - PAD.bottom + 14}" text-anchor="middle">${s}</text>`);
  }
  return [
    `<text x="${x0 + PAD.left}" y="14" font-weight="bold">${escapeMarkup(title)}</text>`,
    `<line x1="${x0 + PAD.left}" x2="${x0 + PAD.left}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#888"/>`,
    `<line x1="${x0 + PAD.left}" x2="${x0 + W - PAD.right}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom}" stroke="#888"/>`,
    ...ticks,
    ...xTicks,
    `<text x="${x0 + PAD.left + plotW / 2}" y="${H - 4}" text-anchor="middle">${escapeMarkup(xLabel)}</text>`,
  ].join('');
}

function stormPanel(d: StormFigureData): string {
  const plotH = H - PAD.top - PAD.bottom;
  const plotW = W - PAD.left - PAD.right;
  const totals = new Array<number>(d.bins).fill(0);
  for (const [bin, , count] of d.cells) totals[bin]! += count;
  const yMax = Math.max(1, ...totals);
  const bw = plotW / d.bins;
  const stacked = new Array<number>(d.bins).fill(0);
  const rects = [...d.cells]
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([bin, lane, count]) => {
      const h = (plotH * count) / yMax;
      const y = PAD.top + plotH - ((stacked[bin]! + count) * plotH) / yMax;
      stacked[bin]! += count;
      return `<rect x="${(PAD.left + bin * bw).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, bw - 0.5).toFixed(1)}" height="${h.toFixed(1)}" fill="${shade(lane, d.processes)}"><title>${escapeMarkup(`${((bin * d.binMs) / 1000).toFixed(1)} s: process ${lane + 1}, ${count} attempt${count === 1 ? '' : 's'}`)}</title></rect>`;
    });
  const marks = d.restarts.map(
    (bin) =>
      `<line x1="${(PAD.left + bin * bw).toFixed(1)}" x2="${(PAD.left + bin * bw).toFixed(1)}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#c00" stroke-dasharray="3 3"><title>restart (reset shutdown)</title></line>`,
  );
  return (
    axes(0, `attempts per ${d.binMs} ms, ${d.processes} processes stacked`, yMax, 'seconds since the first restart', (d.bins * d.binMs) / 1000) +
    rects.join('') +
    marks.join('')
  );
}

function crowdPanel(d: StormFigureData, x0: number): string {
  const plotH = H - PAD.top - PAD.bottom;
  const plotW = W - PAD.left - PAD.right;
  const perSecond = 1000 / d.binMs;
  const yMax = Math.max(1, d.crowd.peakUnjittered, d.crowd.peakJittered);
  const path = (xs: number[]) =>
    xs
      .map(
        (v, i) =>
          `${i === 0 ? 'M' : 'L'}${(x0 + PAD.left + (plotW * (i + 0.5)) / xs.length).toFixed(1)},${(PAD.top + plotH - (plotH * v * perSecond) / yMax).toFixed(1)}`,
      )
      .join('');
  const legend = [
    [`no jitter: peak ${fmt(d.crowd.peakUnjittered)}/s`, '#c00'],
    [`measured jitter: peak ${fmt(d.crowd.peakJittered)}/s`, '#06c'],
  ]
    .map(([text, color], i) => `<text x="${x0 + W - PAD.right}" y="${PAD.top + 12 + 14 * i}" text-anchor="end" fill="${color}">${escapeMarkup(text!)}</text>`)
    .join('');
  return (
    axes(x0, `${d.crowd.clients.toLocaleString('en')} clients, accepts per second`, yMax, 'seconds since the restart', d.crowd.spanMs / 1000) +
    `<path d="${path(d.crowd.unjittered)}" fill="none" stroke="#c00" stroke-width="1.5"/>` +
    `<path d="${path(d.crowd.jittered)}" fill="none" stroke="#06c" stroke-width="1.5"/>` +
    legend
  );
}

/** The storm figure as SVG, or undefined for a figure that is not the storm's. */
export function drawStormFigure(figure: Figure): string | undefined {
  if (figure.id !== STORM_FIGURE) return undefined;
  const d = figure.data as StormFigureData;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${H}" viewBox="0 0 ${2 * W} ${H}" font-family="sans-serif" font-size="11" role="img"><title>${escapeMarkup(figure.title)}</title>${stormPanel(d)}${crowdPanel(d, W)}</svg>`;
}
