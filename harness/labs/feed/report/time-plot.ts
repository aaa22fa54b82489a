// A quantity over a run's time as inline SVG: one line per series, the run's seconds along the
// bottom, horizontal lines for limits (a bound), each point's value in its tooltip. A figure of
// the feed lab (the server's memory) draws through it; it knows nothing of what it plots.

import { escapeMarkup } from '../../../text/format.js';

export interface Series {
  name: string;
  color: string;
  /** [journal time in ms, value], in time order. */
  points: readonly (readonly [number, number])[];
}

export interface Limit {
  value: number;
  label: string;
  color?: string;
}

export interface PlotOptions {
  /** The y axis in words ("RSS, MiB"). */
  yLabel: string;
  /** A value as the axis and tooltips write it. */
  format: (value: number) => string;
  limits?: readonly Limit[];
  width?: number;
  height?: number;
}

const PAD = { left: 64, right: 150, top: 16, bottom: 36 };

/** A round step for about `ticks` intervals over `span`. */
function niceStep(span: number, ticks: number): number {
  const raw = span / Math.max(1, ticks);
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
}

export function timePlot(series: readonly Series[], options: PlotOptions): string {
  const W = options.width ?? 760;
  const H = options.height ?? 260;
  const limits = options.limits ?? [];
  const all = series.flatMap((s) => s.points);
  const t0 = Math.min(...all.map(([t]) => t));
  const t1 = Math.max(t0 + 1, ...all.map(([t]) => t));
  const values = [...all.map(([, v]) => v), ...limits.map((l) => l.value)];
  const lo = Math.min(0, ...values);
  const hi = Math.max(lo + 1, ...values) * 1.05;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (t: number): number => PAD.left + (plotW * (t - t0)) / (t1 - t0);
  const y = (v: number): number => PAD.top + plotH * (1 - (v - lo) / (hi - lo));
  const f = (n: number): string => n.toFixed(1);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="time-plot" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" role="img">`,
    `<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + plotH}" stroke="#888"/>`,
    `<line x1="${PAD.left}" x2="${PAD.left + plotW}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH}" stroke="#888"/>`,
    `<text x="14" y="${PAD.top + plotH / 2}" transform="rotate(-90 14 ${PAD.top + plotH / 2})" text-anchor="middle">${escapeMarkup(options.yLabel)}</text>`,
    `<text x="${PAD.left + plotW / 2}" y="${H - 4}" text-anchor="middle">seconds since the run started</text>`,
  ];
  const yStep = niceStep(hi - lo, 5);
  for (let v = Math.ceil(lo / yStep) * yStep; v <= hi; v += yStep)
    out.push(
      `<line x1="${PAD.left - 4}" x2="${PAD.left + plotW}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="#eee"/><text x="${PAD.left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${escapeMarkup(options.format(v))}</text>`,
    );
  const tStep = niceStep((t1 - t0) / 1000, 8) * 1000;
  for (let t = Math.ceil(t0 / tStep) * tStep; t <= t1; t += tStep)
    out.push(`<text x="${f(x(t))}" y="${PAD.top + plotH + 14}" text-anchor="middle">${escapeMarkup(String(Number((t / 1000).toFixed(3))))}</text>`);
  for (const l of limits) {
    const color = l.color ?? '#c0162b';
    out.push(
      `<g class="limit"><line x1="${PAD.left}" x2="${PAD.left + plotW}" y1="${f(y(l.value))}" y2="${f(y(l.value))}" stroke="${color}" stroke-dasharray="6 4"/>` +
        `<text x="${PAD.left + plotW + 6}" y="${f(y(l.value) + 4)}" fill="${color}">${escapeMarkup(l.label)}</text></g>`,
    );
  }
  series.forEach((s, i) => {
    if (s.points.length === 0) return;
    const d = s.points.map(([t, v], k) => `${k === 0 ? 'M' : 'L'}${f(x(t))},${f(y(v))}`).join('');
    out.push(`<path class="series" data-series="${escapeMarkup(s.name)}" d="${d}" fill="none" stroke="${s.color}" stroke-width="1.5"/>`);
    out.push(`<text x="${PAD.left + plotW + 6}" y="${PAD.top + plotH - i * 14}" fill="${s.color}">${escapeMarkup(s.name)}</text>`);
    // Each point's value on hover: a small invisible target per sample.
    for (const [t, v] of s.points)
      out.push(
        `<circle cx="${f(x(t))}" cy="${f(y(v))}" r="3" fill="${s.color}" fill-opacity="0"><title>${escapeMarkup(`${(t / 1000).toFixed(3)} s: ${options.format(v)}`)}</title></circle>`,
      );
  });
  out.push('</svg>');
  return out.join('');
}
