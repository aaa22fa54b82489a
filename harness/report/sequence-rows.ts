// The sequence diagram's rows as SVG (sequence-diagram.ts lays them out): a collapsed band, an
// arrow for a wire line, a mark on a lane, a note across the run.

import type { BandGroup, Lane, Row } from './diagram-model.js';
import { msgLabel, msgText } from './diagram-model.js';
import { clip, count, escapeMarkup, seconds } from '../text/format.js';

export const LEFT = 92;
export const LANE_W = 200;
export const ROW_H = 20;
export const HEAD_H = 52;
export const BAND_LINE = 15;

/** Where the rows go: each lane's x, each row's top, the drawing's width. */
export interface Layout {
  lanes: Lane[];
  x: Map<string, number>;
  ys: number[];
  width: number;
  bodyEnd: number;
  height: number;
  colors: Record<string, string>;
  positionWord: string | undefined;
}

export function rowHeight(row: Row): number {
  if (row.kind === 'band') return Math.max(2, row.groups.length) * BAND_LINE + 12;
  return ROW_H;
}

/** Row i of the diagram as an SVG group. */
export function rowSvg(row: Row, i: number, layout: Layout): string {
  const top = layout.ys[i]!;
  if (row.kind === 'band') return bandSvg(row, top, layout);
  const mid = top + ROW_H / 2 - 4;
  const time = `<text class="t" x="${LEFT - 6}" y="${mid + 4}" text-anchor="end">${(row.t / 1000).toFixed(3)}</text>`;
  if (row.kind === 'msg') return msgSvg(row, top, mid, time, layout);
  if (row.kind === 'mark') {
    const cx = layout.x.get(row.lane)!;
    return `<g class="mark ${row.cls}" data-t="${row.t}"><title>${escapeMarkup(`${seconds(row.t)}  ${row.lane}: ${row.text}`)}</title>${time}${markGlyph(row.cls, cx, mid)}<text x="${cx + 10}" y="${mid + 4}">${escapeMarkup(clip(row.text, 42))}</text></g>`;
  }
  const { width } = layout;
  return (
    `<g class="note ${row.cls}" data-t="${row.t}"><title>${escapeMarkup(`${seconds(row.t)}  ${row.text}`)}</title>${time}` +
    `<line x1="${LEFT}" y1="${mid}" x2="${width - 10}" y2="${mid}" stroke="${row.cls.startsWith('fault') ? '#e08300' : row.cls === 'harness-error' ? '#c0162b' : '#bbb'}" stroke-dasharray="2 3"/>` +
    `<text x="${LEFT + 6}" y="${mid - 3}">${escapeMarkup(clip(row.text, Math.floor((width - LEFT - 20) / 6.7)))}</text></g>`
  );
}

/** A collapsed run of uneventful lines: a dashed box over the lanes it spans, a line per group. */
function bandSvg(row: Extract<Row, { kind: 'band' }>, top: number, layout: Layout): string {
  const xs = row.groups
    .flatMap((g) => [g.from, g.to])
    .filter(Boolean)
    .map((id) => layout.x.get(id)!);
  const x0 = xs.length ? Math.min(...xs) - LANE_W / 2 + 14 : LEFT + 4;
  const x1 = xs.length ? Math.max(...xs) + LANE_W / 2 - 14 : layout.width - 10;
  const h = rowHeight(row) - 6;
  const lines = row.groups.map((g) => bandLabel(g, layout.lanes, layout.positionWord));
  return (
    `<g class="collapsed" data-count="${row.count}"><title>${escapeMarkup(`${count(row.count)} uneventful lines collapsed, ${seconds(row.t)} – ${seconds(row.t1)}\n${lines.join('\n')}`)}</title>` +
    `<rect x="${x0}" y="${top - 3}" width="${Math.max(40, x1 - x0)}" height="${h}" rx="4"/>` +
    `<text class="t" x="${LEFT - 6}" y="${top + 9}" text-anchor="end">${(row.t / 1000).toFixed(3)}</text>` +
    `<text class="t" x="${LEFT - 6}" y="${top + 9 + BAND_LINE}" text-anchor="end">…${(row.t1 / 1000).toFixed(3)}</text>` +
    lines.map((text, k) => `<text x="${(x0 + x1) / 2}" y="${top + 10 + k * BAND_LINE}" text-anchor="middle">${escapeMarkup(text)}</text>`).join('') +
    '</g>'
  );
}

/** A wire line: an arrow in its kind's colour, haloed when the verdict names it. */
function msgSvg(row: Extract<Row, { kind: 'msg' }>, top: number, mid: number, time: string, layout: Layout): string {
  const { colors } = layout;
  const x1 = layout.x.get(row.from)!;
  const x2 = layout.x.get(row.to)!;
  const dir = x2 > x1 ? 1 : -1;
  const color = colors[row.cls] ?? colors.other!;
  const room = Math.floor((Math.abs(x2 - x1) - 16) / 6.7);
  const halo = row.culprit
    ? `<rect class="halo" x="${Math.min(x1, x2) - 4}" y="${top - 4}" width="${Math.abs(x2 - x1) + 8}" height="${ROW_H}" rx="4"/><text class="culprit-tag" x="${Math.max(x1, x2) + 10}" y="${mid + 4}">◀ named in the verdict</text>`
    : '';
  const text = msgText(row);
  const label = msgLabel(row);
  return (
    `<g class="msg msg-${row.cls}${row.culprit ? ' culprit' : ''}" data-t="${row.t}"><title>${escapeMarkup(`${seconds(row.t)}  ${row.from} → ${row.to}  ${text}`)}</title>${time}${halo}` +
    `<line x1="${x1 + dir * 3}" y1="${mid}" x2="${x2 - dir * 3}" y2="${mid}" stroke="${color}" stroke-width="1.4"${row.cls === 'error' ? ' stroke-dasharray="4 2"' : ''} marker-end="url(#arrow-${colors[row.cls] ? row.cls : 'other'})"/>` +
    `<text x="${(x1 + x2) / 2}" y="${mid - 3}" text-anchor="middle" style="fill:${color}">${escapeMarkup(clip(label, room))}</text></g>`
  );
}

/** "publisher → consumer #2: EVENT 100…9000, 8 901 lines"; with the lab's word for positions, "event blocks 23…58, …". */
export function bandLabel(g: BandGroup, lanes: Lane[], positionWord?: string): string {
  const title = (id: string): string => lanes.find((l) => l.id === id)?.title ?? id;
  const who = !g.from ? '' : g.from === g.to ? `${title(g.from)}: ` : `${title(g.from)} → ${title(g.to)}: `;
  if (g.min !== undefined && g.max !== undefined)
    return `${who}${g.cls} ${positionWord ? `${positionWord} ` : ''}${g.min}…${g.max}, ${count(g.count)} line${g.count === 1 ? '' : 's'}`;
  return `${who}${g.cls} ×${count(g.count)}`;
}

function markGlyph(cls: string, cx: number, cy: number): string {
  switch (cls) {
    case 'crash':
    case 'kill':
      return `<path d="M${cx - 6},${cy - 6} L${cx + 6},${cy + 6} M${cx + 6},${cy - 6} L${cx - 6},${cy + 6}" stroke="#c0162b" stroke-width="3"/>`;
    case 'exit':
      return `<circle cx="${cx}" cy="${cy}" r="5" fill="#1d7a33"/>`;
    case 'start':
      return `<rect x="${cx - 6}" y="${cy - 5}" width="12" height="10" fill="#555"/>`;
    case 'stop':
      return `<rect x="${cx - 5}" y="${cy - 6}" width="4" height="12" fill="#c26a00"/><rect x="${cx + 1}" y="${cy - 6}" width="4" height="12" fill="#c26a00"/>`;
    case 'cont':
      return `<path d="M${cx - 4},${cy - 6} L${cx + 6},${cy} L${cx - 4},${cy + 6} z" fill="#c26a00"/>`;
    case 'read':
      return `<path d="M${cx},${cy - 6} L${cx + 6},${cy} L${cx},${cy + 6} L${cx - 6},${cy} z" fill="#e6c200" stroke="#5a4a00"/>`;
    case 'signal':
      return `<path d="M${cx + 2},${cy - 8} L${cx - 4},${cy + 1} L${cx},${cy + 1} L${cx - 2},${cy + 8} L${cx + 5},${cy - 2} L${cx + 1},${cy - 2} z" fill="#e08300" stroke="#c0162b" stroke-width=".8"/>`;
    case 'reset':
      return `<path d="M${cx - 5},${cy - 5} L${cx + 5},${cy + 5} M${cx + 5},${cy - 5} L${cx - 5},${cy + 5}" stroke="#c0162b" stroke-width="2"/>`;
    case 'open':
      return `<circle cx="${cx}" cy="${cy}" r="4" fill="#fff" stroke="#555" stroke-width="1.5"/>`;
    case 'close':
      return `<line x1="${cx - 6}" y1="${cy}" x2="${cx + 6}" y2="${cy}" stroke="#555" stroke-width="2"/>`;
    default:
      return `<circle cx="${cx}" cy="${cy}" r="3" fill="#999"/>`;
  }
}
