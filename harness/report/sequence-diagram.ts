// The sequence diagram of a run, as SVG, from the journal alone (see diagram-model.ts for what
// becomes a row): time runs downwards, a lifeline per process, arrows for the lines on the wire in
// the lab's colours, shaded bands for every active fault. The findings' positions and times pick
// what is highlighted; nothing is parsed back out of sentences.

import type { JournalEntry } from '../record/journal.js';
import type { Vocabulary } from '../lab-api/lab.js';
import type { Finding } from '../findings/verdict.js';
import { Collapser } from './collapse.js';
import { MONO_FONTS, TEXT_FONTS } from './fonts.js';
import { type DiagramOptions, ESSENTIAL, IRREGULAR, LANDMARK, type Lane, type Row, type SequenceDiagram } from './diagram-model.js';
import { model } from './diagram-parse.js';
import { HEAD_H, LANE_W, LEFT, type Layout, ROW_H, rowHeight, rowSvg } from './sequence-rows.js';
import { clip, escapeMarkup } from '../text/format.js';

export { bandLabel } from './sequence-rows.js';

export type { DiagramOptions, SequenceDiagram };

// ---------------------------------------------------------------------------------------------
// Layout and drawing

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

/** Renders the diagram: a pure function of the journal, the lab's vocabulary and the findings. */
export function renderSequenceDiagram(
  journal: readonly JournalEntry[],
  vocabulary: Vocabulary,
  findings: readonly Finding[],
  options: DiagramOptions = {},
): SequenceDiagram {
  const { lanes, rows } = collapsedRows(journal, vocabulary, findings, options);
  const layout = layoutOf(lanes, rows, lineColors(vocabulary), vocabulary.positionWord);
  const bands = faultBands(rows);
  const heads = (top: number): string => lanes.map((l) => laneHead(l, layout.x.get(l.id)!, top)).join('');
  const out = [
    ...svgHead(layout),
    ...bands.map((b, k) => faultBandSvg(b, k, layout)),
    ...lifelines(rows, layout),
    heads(6),
    heads(layout.bodyEnd + 8),
    ...rows.map((row, i) => rowSvg(row, i, layout)),
    '</svg>',
  ];
  const bandRows = rows.filter((r) => r.kind === 'band');
  return {
    svg: out.join('\n'),
    lanes,
    arrows: rows.filter((r) => r.kind === 'msg').length,
    bands: bandRows.length,
    collapsed: bandRows.reduce((sum, r) => sum + r.count, 0),
    faults: bands.length,
    rows: rows.length,
  };
}

/** The journal's rows, uneventful runs collapsed; too many rows even so (a reconnect storm, say): more telling traffic collapses too. */
function collapsedRows(
  journal: readonly JournalEntry[],
  vocabulary: Vocabulary,
  findings: readonly Finding[],
  options: DiagramOptions,
): { lanes: Lane[]; rows: Row[] } {
  const context = options.context ?? 3;
  const minHidden = options.minHidden ?? 6;
  const maxRows = options.maxRows ?? 2500;
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
  let built = build(IRREGULAR);
  for (let level = LANDMARK; built.rows.length > maxRows && level <= ESSENTIAL; level++) built = build(level);
  return built;
}

function layoutOf(lanes: Lane[], rows: Row[], colors: Record<string, string>, positionWord: string | undefined): Layout {
  const x = new Map(lanes.map((l, i) => [l.id, LEFT + LANE_W / 2 + i * LANE_W]));
  const width = LEFT + lanes.length * LANE_W + 170;
  const ys: number[] = [];
  let y = HEAD_H + 14;
  for (const row of rows) {
    ys.push(y);
    y += rowHeight(row);
  }
  const bodyEnd = y + 6;
  return { lanes, x, ys, width, bodyEnd, height: bodyEnd + HEAD_H, colors, positionWord };
}

/** The svg element, an arrow head per line colour, and the style. */
function svgHead({ width, height, colors }: Layout): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="sequence diagram">`,
    '<defs>',
    ...Object.entries(colors).map(
      ([cls, color]) =>
        `<marker id="arrow-${cls}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="${color}"/></marker>`,
    ),
    '</defs>',
    STYLE,
  ];
}

const STYLE = `<style>
.sequence text{font:11px ${MONO_FONTS};fill:#222}
.sequence .t{fill:#888;font-size:10px}
.sequence .head{font:bold 12px ${TEXT_FONTS}}
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
</style>`;

interface FaultBand {
  from: number;
  to: number;
  label: string;
  lifted: boolean;
}

/** Fault bands (background), from each apply row to its lift row (or the end of the run). */
function faultBands(rows: Row[]): FaultBand[] {
  const open = new Map<string, { row: number; label: string }[]>();
  const bands: FaultBand[] = [];
  rows.forEach((row, i) => {
    if (row.kind !== 'note' || !row.fault) return;
    const stack = open.get(row.fault.name) ?? [];
    open.set(row.fault.name, stack);
    if (row.fault.action === 'apply') stack.push({ row: i, label: row.fault.label });
    else {
      const start = stack.shift();
      bands.push({ from: start ? start.row : 0, to: i, label: start?.label ?? row.fault.label, lifted: true });
    }
  });
  for (const stack of open.values()) for (const s of stack) bands.push({ from: s.row, to: rows.length - 1, label: s.label, lifted: false });
  return bands.sort((a, b) => a.from - b.from);
}

function faultBandSvg(b: FaultBand, k: number, { ys, x, width, bodyEnd, lanes }: Layout): string {
  const top = ys[b.from]! - 4;
  const bottom = b.lifted ? ys[b.to]! + ROW_H - 4 : bodyEnd;
  const inset = (k % 3) * 4;
  // Network faults sit between the publisher and the consumer under test: the band starts at
  // the publisher's lane, leaving the control consumer (which has no proxy) unshaded; in a run
  // with parties, at the first server lane.
  const anchor = x.get('publisher') ?? x.get(lanes.find((l) => l.kind === 'server')?.id ?? '') ?? LEFT + LANE_W / 2;
  const left = anchor - LANE_W / 2 + 6 + inset;
  return (
    `<g class="fault-band" data-fault="${escapeMarkup(b.label)}"><title>${escapeMarkup(`fault ${b.label}${b.lifted ? '' : ' (never lifted)'}`)}</title>` +
    `<rect x="${left}" y="${top}" width="${width - left - 6}" height="${Math.max(ROW_H, bottom - top)}" rx="3"/>` +
    `<text x="${width - 10}" y="${top + 12}" text-anchor="end">⚡ ${escapeMarkup(clip(b.label, 60))}${b.lifted ? '' : ' (still active)'}</text></g>`
  );
}

/** Lifelines: the publisher all along; a process from its start to its exit. */
function lifelines(rows: Row[], { lanes, x, ys, bodyEnd }: Layout): string[] {
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
  const out: string[] = [];
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
  return out;
}

/** A lane's title box (drawn at the top and at the bottom). */
function laneHead(l: Lane, cx: number, top: number): string {
  const fill =
    l.kind === 'publisher' || l.kind === 'server'
      ? '#e8eefb'
      : l.kind === 'control' || l.kind === 'client'
        ? '#eef6ee'
        : l.kind === 'consumer'
          ? '#fbf3e6'
          : '#f0f0f0';
  return (
    `<g class="lane-head" data-lane="${escapeMarkup(l.id)}"><rect x="${cx - LANE_W / 2 + 8}" y="${top}" width="${LANE_W - 16}" height="38" rx="5" fill="${fill}" stroke="#aaa"/>` +
    `<text class="head" x="${cx}" y="${top + 16}" text-anchor="middle">${escapeMarkup(l.title)}</text>` +
    `<text class="sub" x="${cx}" y="${top + 30}" text-anchor="middle">${escapeMarkup(clip(l.subtitle, 34))}</text></g>`
  );
}
