// The sequence diagram of a run, as SVG, from the journal alone (see diagram-model.ts for what
// becomes a row): time runs downwards, a lifeline per process, arrows for the lines on the wire in
// the lab's colours, shaded bands for every active fault. The findings' positions and times pick
// what is highlighted; nothing is parsed back out of sentences.

import type { JournalEntry } from '../record/journal.js';
import type { Vocabulary } from '../lab-api/lab.js';
import type { Finding } from '../findings/verdict.js';
import { Collapser } from './collapse.js';
import {
  type BandGroup,
  type DiagramOptions,
  ESSENTIAL,
  IRREGULAR,
  LANDMARK,
  type Lane,
  model,
  msgLabel,
  msgText,
  type Row,
  type SequenceDiagram,
} from './diagram-model.js';
import { clip, count, escapeMarkup, seconds } from '../text/format.js';

export type { DiagramOptions, SequenceDiagram };

// ---------------------------------------------------------------------------------------------
// Layout and drawing

const LEFT = 92;
const LANE_W = 200;
const ROW_H = 20;
const HEAD_H = 52;
const BAND_LINE = 15;

/** At most this many positions the findings name stay visible, uncollapsed. */
const FOCUS_MAX = 200;

/** Every lab's lines also have these two kinds: a line of no known kind, and a line that broke the grammar. */
export const OTHER_COLOR = '#555555';
export const ERROR_COLOR = '#c0162b';

/** The colour of each kind of line: the lab's, then `other` and `error`. */
export const lineColors = (vocabulary: Vocabulary): Record<string, string> => ({
  ...Object.fromEntries(vocabulary.lineClasses.map((c) => [c.name, c.color])),
  other: OTHER_COLOR,
  error: ERROR_COLOR,
});

function rowHeight(row: Row): number {
  if (row.kind === 'band') return Math.max(2, row.groups.length) * BAND_LINE + 12;
  return ROW_H;
}

/** Renders the diagram: a pure function of the journal, the lab's vocabulary and the findings. */
export function renderSequenceDiagram(
  journal: readonly JournalEntry[],
  vocabulary: Vocabulary,
  findings: readonly Finding[],
  options: DiagramOptions = {},
): SequenceDiagram {
  const context = options.context ?? 3;
  const minHidden = options.minHidden ?? 6;
  const maxRows = options.maxRows ?? 2500;
  const COLORS = lineColors(vocabulary);
  // A bounded focus: a finding about 50 000 seqs must not keep 200 000 rows from collapsing.
  const focus = new Set(options.focusSeqs ?? findings.flatMap((f) => f.subject?.seqs ?? []).slice(0, FOCUS_MAX));
  const times = new Set(findings.flatMap((f) => (f.subject?.t === undefined ? [] : [f.subject.t])));
  // Exact identities (cursors) where the lab's positions are coarser; bounded like the positions.
  const keys = new Set(findings.flatMap((f) => f.subject?.cursors ?? []).slice(0, FOCUS_MAX));
  const build = (level: number): { lanes: Lane[]; rows: Row[] } => {
    const collapser = new Collapser(level, context, minHidden);
    const lanes = model(journal, vocabulary, focus, times, collapser.push, keys);
    collapser.flush();
    return { lanes, rows: collapser.rows };
  };
  // Too many rows even so (a reconnect storm, say): collapse more telling traffic too.
  let { lanes, rows } = build(IRREGULAR);
  for (let level = LANDMARK; rows.length > maxRows && level <= ESSENTIAL; level++) ({ lanes, rows } = build(level));

  const x = new Map(lanes.map((l, i) => [l.id, LEFT + LANE_W / 2 + i * LANE_W]));
  const width = LEFT + lanes.length * LANE_W + 170;
  const ys: number[] = [];
  let y = HEAD_H + 14;
  for (const row of rows) {
    ys.push(y);
    y += rowHeight(row);
  }
  const bodyEnd = y + 6;
  const height = bodyEnd + HEAD_H;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="sequence diagram">`,
    '<defs>',
    ...Object.entries(COLORS).map(
      ([cls, color]) =>
        `<marker id="arrow-${cls}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="${color}"/></marker>`,
    ),
    '</defs>',
    `<style>
.sequence text{font:11px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#222}
.sequence .t{fill:#888;font-size:10px}
.sequence .head{font:bold 12px system-ui,sans-serif}
.sequence .sub{fill:#666;font-size:10px}
.sequence .life{stroke:#999;stroke-width:1.5}
.sequence .life.idle{stroke:#ddd;stroke-dasharray:3 4}
.sequence .fault-band rect{fill:#ff9f1a;fill-opacity:.16;stroke:#e08300;stroke-opacity:.55}
.sequence .fault-band text{fill:#a35a00;font-weight:bold}
.sequence .collapsed rect{fill:#eef1f5;stroke:#b9c2cf;stroke-dasharray:4 3}
.sequence .collapsed text{fill:#445}
.sequence .note text{fill:#444}
.sequence .note.harness-error text{fill:#c0162b;font-weight:bold}
.sequence .mark.crash text,.sequence .mark.kill text,.sequence .mark.reset text,.sequence .mark.signal text{fill:#c0162b;font-weight:bold}
.sequence .mark.read text{fill:#5a4a00}
.sequence .msg.error text{fill:#c0162b;font-weight:bold}
.sequence .halo{fill:#c0162b;fill-opacity:.13;stroke:#c0162b;stroke-width:1.5}
.sequence .culprit text{font-weight:bold}
.sequence .culprit-tag{fill:#c0162b;font-weight:bold}
</style>`,
  );

  // Fault bands (background), from each apply row to its lift row (or the end of the run).
  const open = new Map<string, { row: number; label: string }[]>();
  const faultBands: { from: number; to: number; label: string; lifted: boolean }[] = [];
  rows.forEach((row, i) => {
    if (row.kind !== 'note' || !row.fault) return;
    const stack = open.get(row.fault.name) ?? [];
    open.set(row.fault.name, stack);
    if (row.fault.action === 'apply') stack.push({ row: i, label: row.fault.label });
    else {
      const start = stack.shift();
      faultBands.push({ from: start ? start.row : 0, to: i, label: start?.label ?? row.fault.label, lifted: true });
    }
  });
  for (const stack of open.values()) for (const s of stack) faultBands.push({ from: s.row, to: rows.length - 1, label: s.label, lifted: false });
  faultBands.sort((a, b) => a.from - b.from);
  faultBands.forEach((b, k) => {
    const top = ys[b.from]! - 4;
    const bottom = b.lifted ? ys[b.to]! + ROW_H - 4 : bodyEnd;
    const inset = (k % 3) * 4;
    // Network faults sit between the publisher and the consumer under test: the band starts at
    // the publisher's lane, leaving the control consumer (which has no proxy) unshaded.
    const left = x.get('publisher')! - LANE_W / 2 + 6 + inset;
    out.push(
      `<g class="fault-band" data-fault="${escapeMarkup(b.label)}"><title>${escapeMarkup(`fault ${b.label}${b.lifted ? '' : ' (never lifted)'}`)}</title>` +
        `<rect x="${left}" y="${top}" width="${width - left - 6}" height="${Math.max(ROW_H, bottom - top)}" rx="3"/>` +
        `<text x="${width - 10}" y="${top + 12}" text-anchor="end">⚡ ${escapeMarkup(clip(b.label, 60))}${b.lifted ? '' : ' (still active)'}</text></g>`,
    );
  });

  // Lifelines: the publisher all along; a process from its start to its exit.
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  const ended = new Set<string>();
  rows.forEach((row, i) => {
    const touched =
      row.kind === 'msg' ? [row.from, row.to] : row.kind === 'mark' ? [row.lane] : row.kind === 'band' ? row.groups.flatMap((g) => [g.from, g.to]) : [];
    for (const id of touched) {
      if (!id) continue;
      if (!first.has(id)) first.set(id, i);
      last.set(id, i);
    }
    if (row.kind === 'mark' && (row.cls === 'exit' || row.cls === 'crash' || row.cls === 'kill')) ended.add(row.lane);
  });
  for (const l of lanes) {
    const cx = x.get(l.id)!;
    out.push(`<line class="life idle" x1="${cx}" y1="${HEAD_H}" x2="${cx}" y2="${bodyEnd}"/>`);
    if (l.kind === 'publisher') {
      out.push(`<line class="life" x1="${cx}" y1="${HEAD_H}" x2="${cx}" y2="${bodyEnd}"/>`);
    } else if (first.has(l.id)) {
      const y1 = ys[first.get(l.id)!]! + ROW_H / 2 - 4;
      const y2 = ended.has(l.id) ? ys[last.get(l.id)!]! + ROW_H / 2 - 4 : bodyEnd;
      out.push(`<line class="life" x1="${cx}" y1="${y1}" x2="${cx}" y2="${y2}"/>`);
    }
  }

  // Lane titles, top and bottom.
  const heads = (top: number): string =>
    lanes
      .map((l) => {
        const cx = x.get(l.id)!;
        return (
          `<g class="lane-head" data-lane="${escapeMarkup(l.id)}"><rect x="${cx - LANE_W / 2 + 8}" y="${top}" width="${LANE_W - 16}" height="38" rx="5" fill="${l.kind === 'publisher' ? '#e8eefb' : l.kind === 'control' ? '#eef6ee' : l.kind === 'consumer' ? '#fbf3e6' : '#f0f0f0'}" stroke="#aaa"/>` +
          `<text class="head" x="${cx}" y="${top + 16}" text-anchor="middle">${escapeMarkup(l.title)}</text>` +
          `<text class="sub" x="${cx}" y="${top + 30}" text-anchor="middle">${escapeMarkup(clip(l.subtitle, 34))}</text></g>`
        );
      })
      .join('');
  out.push(heads(6), heads(bodyEnd + 8));

  let arrows = 0;
  let bands = 0;
  let collapsed = 0;
  rows.forEach((row, i) => {
    const top = ys[i]!;
    const mid = top + ROW_H / 2 - 4;
    if (row.kind === 'band') {
      bands++;
      collapsed += row.count;
      const xs = row.groups
        .flatMap((g) => [g.from, g.to])
        .filter(Boolean)
        .map((id) => x.get(id)!);
      const x0 = xs.length ? Math.min(...xs) - LANE_W / 2 + 14 : LEFT + 4;
      const x1 = xs.length ? Math.max(...xs) + LANE_W / 2 - 14 : width - 10;
      const h = rowHeight(row) - 6;
      const lines = row.groups.map((g) => bandLabel(g, lanes, vocabulary.positionWord));
      out.push(
        `<g class="collapsed" data-count="${row.count}"><title>${escapeMarkup(`${count(row.count)} uneventful lines collapsed, ${seconds(row.t)} – ${seconds(row.t1)}\n${lines.join('\n')}`)}</title>` +
          `<rect x="${x0}" y="${top - 3}" width="${Math.max(40, x1 - x0)}" height="${h}" rx="4"/>` +
          `<text class="t" x="${LEFT - 6}" y="${top + 9}" text-anchor="end">${(row.t / 1000).toFixed(3)}</text>` +
          `<text class="t" x="${LEFT - 6}" y="${top + 9 + BAND_LINE}" text-anchor="end">…${(row.t1 / 1000).toFixed(3)}</text>` +
          lines.map((text, k) => `<text x="${(x0 + x1) / 2}" y="${top + 10 + k * BAND_LINE}" text-anchor="middle">${escapeMarkup(text)}</text>`).join('') +
          '</g>',
      );
      return;
    }
    const time = `<text class="t" x="${LEFT - 6}" y="${mid + 4}" text-anchor="end">${(row.t / 1000).toFixed(3)}</text>`;
    if (row.kind === 'msg') {
      arrows++;
      const x1 = x.get(row.from)!;
      const x2 = x.get(row.to)!;
      const dir = x2 > x1 ? 1 : -1;
      const color = COLORS[row.cls] ?? COLORS.other!;
      const room = Math.floor((Math.abs(x2 - x1) - 16) / 6.7);
      const halo = row.culprit
        ? `<rect class="halo" x="${Math.min(x1, x2) - 4}" y="${top - 4}" width="${Math.abs(x2 - x1) + 8}" height="${ROW_H}" rx="4"/><text class="culprit-tag" x="${Math.max(x1, x2) + 10}" y="${mid + 4}">◀ named in the verdict</text>`
        : '';
      const text = msgText(row);
      const label = msgLabel(row);
      out.push(
        `<g class="msg msg-${row.cls}${row.culprit ? ' culprit' : ''}" data-t="${row.t}"><title>${escapeMarkup(`${seconds(row.t)}  ${row.from} → ${row.to}  ${text}`)}</title>${time}${halo}` +
          `<line x1="${x1 + dir * 3}" y1="${mid}" x2="${x2 - dir * 3}" y2="${mid}" stroke="${color}" stroke-width="1.4"${row.cls === 'error' ? ' stroke-dasharray="4 2"' : ''} marker-end="url(#arrow-${COLORS[row.cls] ? row.cls : 'other'})"/>` +
          `<text x="${(x1 + x2) / 2}" y="${mid - 3}" text-anchor="middle" style="fill:${color}">${escapeMarkup(clip(label, room))}</text></g>`,
      );
    } else if (row.kind === 'mark') {
      const cx = x.get(row.lane)!;
      out.push(
        `<g class="mark ${row.cls}" data-t="${row.t}"><title>${escapeMarkup(`${seconds(row.t)}  ${row.lane}: ${row.text}`)}</title>${time}${markGlyph(row.cls, cx, mid)}<text x="${cx + 10}" y="${mid + 4}">${escapeMarkup(clip(row.text, 42))}</text></g>`,
      );
    } else {
      out.push(
        `<g class="note ${row.cls}" data-t="${row.t}"><title>${escapeMarkup(`${seconds(row.t)}  ${row.text}`)}</title>${time}` +
          `<line x1="${LEFT}" y1="${mid}" x2="${width - 10}" y2="${mid}" stroke="${row.cls.startsWith('fault') ? '#e08300' : row.cls === 'harness-error' ? '#c0162b' : '#bbb'}" stroke-dasharray="2 3"/>` +
          `<text x="${LEFT + 6}" y="${mid - 3}">${escapeMarkup(clip(row.text, Math.floor((width - LEFT - 20) / 6.7)))}</text></g>`,
      );
    }
  });
  out.push('</svg>');
  return { svg: out.join('\n'), lanes, arrows, bands, collapsed, faults: faultBands.length, rows: rows.length };
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
