// The sequence diagram of a run, as SVG, from the journal alone: a lane for the publisher, one
// per consumer incarnation and one for the control consumer; one row per thing that happened,
// in journal (time) order; arrows for the lines on the wire (EVENT, ACK, RESUME, RESYNC, ...),
// marks for process starts, crashes, kills, stops and file reads, shaded bands for every
// active fault. Long runs of uneventful traffic (in-order EVENTs and ACKs) collapse into one
// labelled band, so a 100 000-event run draws a few hundred rows, not 400 000.

import type { JournalEntry } from '../journal.js';

// ---------------------------------------------------------------------------------------------
// Text helpers shared by every renderer (HTML, SVG, JUnit XML).

/** Characters XML 1.0 does not allow at all (HTML shows them as garbage): shown as \xNN. */
const INVALID_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const hex = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** Escapes text for HTML, SVG and XML (content and quoted attributes alike). */
export function escapeMarkup(text: string): string {
  return text.replace(INVALID_XML, hex).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A wire line as a reader wants it: without its newline, other control bytes visible. */
export function showLine(line: string): string {
  return line.replace(/\n$/, '').replace(/[\u0000-\u001F\u007F]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : hex(c)));
}

/** Milliseconds as seconds, "1.204 s". */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

/** 8901 -> "8 901" (the thousands separator a reader of any locale can parse). */
export const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`);

// ---------------------------------------------------------------------------------------------
// Model

export type LaneKind = 'publisher' | 'consumer' | 'control' | 'other';

export interface Lane {
  id: string;
  kind: LaneKind;
  title: string;
  subtitle: string;
}

/** A line on the wire, drawn as an arrow. */
interface Msg {
  kind: 'msg';
  t: number;
  from: string;
  to: string;
  /** EVENT, ACK, RESUME, RESYNC, other, error */
  cls: string;
  /** The line as journalled; shown with `msgText` (only for rows that are drawn). */
  line: string;
  error: string | undefined;
  seq: number | undefined;
  level: number;
  /** Named by the verdict (its seq and time appear in a reason): highlighted. */
  culprit: boolean;
}

const msgText = (m: Msg): string => `${showLine(m.line)}${m.error ? `  ⚠ ${m.error}` : ''}`;

/** The first word of a wire line if it is one of the protocol's (as the interned constant). */
function wordOf(line: string): 'EVENT' | 'ACK' | 'RESUME' | 'RESYNC' | undefined {
  if (line.startsWith('EVENT ')) return 'EVENT';
  if (line.startsWith('ACK ')) return 'ACK';
  if (line.startsWith('RESUME ')) return 'RESUME';
  if (line.startsWith('RESYNC ')) return 'RESYNC';
  return undefined;
}

/** The integer right after the first word (`from` = its offset), or undefined. No allocation: this runs for every line. */
function seqAt(line: string, from: number): number | undefined {
  let i = from;
  const negative = line.charCodeAt(i) === 45;
  if (negative) i++;
  let n = 0;
  const digitsFrom = i;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  if (i === digitsFrom || i - digitsFrom > 15) return undefined;
  const next = line.charCodeAt(i);
  if (i < line.length && next !== 32 && next !== 10) return undefined;
  return negative ? -n : n;
}

/** Something that happened at one lane: start, exit, crash, kill, stop, read, open, close. */
interface Mark {
  kind: 'mark';
  t: number;
  lane: string;
  cls: string;
  text: string;
  level: number;
  /** What a collapsed band calls it (default: cls), e.g. the type of an unknown entry. */
  groupAs?: string;
}

/** Something that concerns the whole run: a fault applied or lifted, a harness error, an unknown entry. */
interface Note {
  kind: 'note';
  t: number;
  cls: string;
  text: string;
  level: number;
  groupAs?: string;
  /** For `fault` notes: the fault's name and whether it starts or ends a band. */
  fault?: { name: string; action: 'apply' | 'lift'; label: string };
}

type Item = Msg | Mark | Note;

interface BandGroup {
  from: string;
  to: string;
  cls: string;
  count: number;
  min?: number;
  max?: number;
}

/** A collapsed run of uneventful items. */
interface Band {
  kind: 'band';
  t: number;
  t1: number;
  count: number;
  groups: BandGroup[];
}

type Row = Item | Band;

export interface DiagramOptions {
  /** Rows kept visible on each side of a collapsed band (default 3). */
  context?: number;
  /** A run is collapsed only if at least this many rows would be hidden (default 6). */
  minHidden?: number;
  /** Beyond this many rows, less telling traffic (redeliveries, RESUMEs, ...) collapses too (default 2500). */
  maxRows?: number;
  /** Seqs whose EVENT and ACK lines always stay visible (default: the seqs the verdict's reasons name). */
  focusSeqs?: Iterable<number>;
}

export interface SequenceDiagram {
  svg: string;
  lanes: Lane[];
  /** Arrows drawn (wire lines not collapsed). */
  arrows: number;
  /** Collapsed bands drawn, and how many journal entries they stand for. */
  bands: number;
  collapsed: number;
  /** Fault intervals drawn as shaded bands. */
  faults: number;
  rows: number;
}

/** Importance: 0 plain traffic, 1 irregular traffic, 2 protocol landmarks, 3 what explains a verdict. */
const PLAIN = 0;
const IRREGULAR = 1;
const LANDMARK = 2;
const ESSENTIAL = 3;

/** Unknown entry types seen more often than this are treated as traffic, not as landmarks. */
const UNKNOWN_FLOOD = 50;

type Loose = { type: string; t: number } & Record<string, unknown>;

/** Entry types drawn specially (or deliberately not drawn); anything else is shown as a note. */
export const KNOWN_TYPES: ReadonlySet<string> = new Set([
  'run-start',
  'scenario',
  'toxiproxy',
  'stream',
  'proxy',
  'process-start',
  'process-stopped',
  'process-continued',
  'process-exit',
  'wire',
  'store-read',
  'verdict',
  'harness-error',
  'run-end',
  'fault',
]);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Short, single-line rendering of an entry's fields, for entries this renderer does not know. */
export function describeUnknown(entry: Record<string, unknown>, max = 120): string {
  const { t: _t, type, ...rest } = entry;
  let body: string;
  try {
    body = JSON.stringify(rest) ?? '';
  } catch {
    body = '';
  }
  return clip(`${String(type)} ${body === '{}' ? '' : body}`.trim(), max);
}

/** The seqs the verdict's reasons talk about ("seq 7", "ACK 7", "seqs 3, 4, 9"). */
export function seqsNamedByVerdict(journal: JournalEntry[]): Set<number> {
  return namedByVerdict(journal).seqs;
}

/** The seqs and the times ("at 1.204 s") the verdict's reasons talk about. */
function namedByVerdict(journal: JournalEntry[]): { seqs: Set<number>; times: Set<string> } {
  const seqs = new Set<number>();
  const times = new Set<string>();
  for (const e of journal) {
    if (e.type !== 'verdict' || !Array.isArray(e.reasons)) continue;
    for (const reason of e.reasons) {
      if (typeof reason !== 'string') continue;
      for (const m of reason.matchAll(/\b(?:seqs?|ACK|EVENT|RESUME)\s+((?:-?\d+)(?:,\s*\d+)*)/g)) {
        for (const n of m[1]!.split(/,\s*/)) seqs.add(Number(n));
      }
      for (const m of reason.matchAll(/\bat (\d+\.\d{3}) s\b/g)) times.add(m[1]!);
    }
  }
  return { seqs, times };
}

/**
 * Parses the journal into lanes and items, in journal order. Items are handed to `emit` one at
 * a time (not kept), so a 400 000-entry journal never holds 400 000 items at once.
 */
function model(journal: JournalEntry[], focus: Set<number>, focusTimes: Set<string>, emit: (item: Item) => void): Lane[] {
  const lanes = new Map<string, Lane>();
  const lane = (id: string, kind: LaneKind, title: string): Lane => {
    let l = lanes.get(id);
    if (!l) lanes.set(id, (l = { id, kind, title, subtitle: '' }));
    return l;
  };
  lane('publisher', 'publisher', 'publisher');
  const consumerLane = (n: number): Lane => lane(`consumer#${n}`, 'consumer', `consumer #${n}`);
  const roleOfStream = new Map<string, string>();
  const connState = new Map<string, Map<number, { lane: string; lastAck: number | undefined }>>();
  const highestSent = new Map<string, number>();
  const unknownCounts = new Map<string, number>();
  let runningConsumer: number | undefined;
  let lastConsumer: number | undefined;
  const started = new Set<string>();

  for (const raw of journal) {
    const type = (raw as { type: string }).type;
    if (!KNOWN_TYPES.has(type)) unknownCounts.set(type, (unknownCounts.get(type) ?? 0) + 1);
  }
  const plan = journal.find((e) => e.type === 'scenario')?.plan as { consumer?: { incarnations?: { fault?: string }[] } } | undefined;
  const planned = Array.isArray(plan?.consumer?.incarnations) ? plan!.consumer!.incarnations! : [];
  lane('control', 'control', 'control');
  planned.forEach((inc, i) => {
    const l = consumerLane(i + 1);
    l.subtitle = inc?.fault ? `fault ${inc.fault}` : 'no fault';
  });

  const laneOfRole = (role: unknown, incarnation: unknown): string => {
    if (role === 'control') return 'control';
    const n = num(incarnation) ?? lastConsumer ?? 1;
    return consumerLane(n).id;
  };

  /** The hot path: ~all entries of a long run are wire lines. */
  const wire = (e: Loose, t: number): void => {
    const stream = str(e.stream) ?? '?';
    const conn = num(e.conn) ?? 0;
    let conns = connState.get(stream);
    if (!conns) connState.set(stream, (conns = new Map()));
    let state = conns.get(conn);
    if (!state) {
      const role = roleOfStream.get(stream) ?? (stream === 'control' ? 'control' : stream === 'consumer' ? 'consumer' : undefined);
      const tagged = Number(/^incarnation (\d+)$/.exec(str(e.tag) ?? '')?.[1]);
      let laneId: string;
      if (role === 'control') laneId = 'control';
      else if (role === 'consumer' && Number.isInteger(tagged) && tagged > 0) laneId = consumerLane(tagged).id;
      else if (role === 'consumer' && runningConsumer !== undefined) laneId = consumerLane(runningConsumer).id;
      else laneId = lane(`other:${stream}#${conn}`, 'other', `${stream} conn ${conn}`).id;
      conns.set(conn, (state = { lane: laneId, lastAck: undefined }));
    }
    const id = state.lane;
    if (e.kind === 'open') {
      emit({ kind: 'mark', t, lane: id, cls: 'open', text: `connected (conn ${conn})`, level: LANDMARK });
    } else if (e.kind === 'close') {
      const by = str(e.by) ?? '?';
      const reason = str(e.reason);
      emit({
        kind: 'mark',
        t,
        lane: id,
        cls: by === 'reset' ? 'reset' : 'close',
        text: `closed by ${by}${reason ? `: ${reason}` : ''}`,
        level: by === 'reset' ? ESSENTIAL : LANDMARK,
      });
    } else if (e.kind === 'send' || e.kind === 'recv') {
      const line = str(e.line) ?? '';
      const error = str(e.error);
      const word = wordOf(line);
      const seq = word === undefined ? undefined : seqAt(line, word.length + 1);
      const cls = error ? 'error' : (word ?? 'other');
      let level = error ? ESSENTIAL : cls === 'other' ? LANDMARK : cls === 'RESUME' || cls === 'RESYNC' ? LANDMARK : PLAIN;
      if (seq !== undefined && focus.has(seq) && (cls === 'EVENT' || cls === 'ACK')) level = ESSENTIAL;
      if (level === PLAIN && cls === 'EVENT' && e.kind === 'send') {
        const highest = highestSent.get(stream);
        if (highest !== undefined && seq! <= highest)
          level = IRREGULAR; // a redelivery, or out of order
        else highestSent.set(stream, seq!);
      } else if (level === PLAIN && cls === 'ACK' && e.kind === 'recv') {
        if (state.lastAck !== undefined && seq !== state.lastAck + 1) level = IRREGULAR; // out of order or repeated
        state.lastAck = seq;
      } else if (level === PLAIN) {
        level = IRREGULAR; // an EVENT the consumer sent, an ACK the publisher sent: odd
      }
      const send = e.kind === 'send';
      const culprit = seq !== undefined && focusTimes.size > 0 && focus.has(seq) && focusTimes.has((t / 1000).toFixed(3));
      emit({ kind: 'msg', t, from: send ? 'publisher' : id, to: send ? id : 'publisher', cls, line, error, seq, level, culprit });
    } else {
      emit({ kind: 'mark', t, lane: id, cls: 'other', text: describeUnknown(e, 60), level: LANDMARK });
    }
  };

  for (const raw of journal) {
    const e = raw as unknown as Loose;
    const t = num(e.t) ?? 0;
    if (e.type === 'wire') {
      wire(e, t);
      continue;
    }
    switch (e.type) {
      case 'run-start':
      case 'scenario':
      case 'toxiproxy':
      case 'proxy':
      case 'verdict':
      case 'run-end':
        break;
      case 'stream':
        if (str(e.stream) && str(e.role)) roleOfStream.set(e.stream as string, e.role as string);
        break;
      case 'process-start': {
        const id = laneOfRole(e.role, e.incarnation);
        started.add(id);
        if (e.role !== 'control' && num(e.incarnation) !== undefined) runningConsumer = lastConsumer = e.incarnation as number;
        emit({ kind: 'mark', t, lane: id, cls: 'start', text: `start, pid ${num(e.pid) ?? '?'}`, level: ESSENTIAL });
        break;
      }
      case 'process-exit': {
        const id = laneOfRole(e.role, e.incarnation);
        if (e.role !== 'control' && e.incarnation === runningConsumer) runningConsumer = undefined;
        const killedBy = str(e.killedBy);
        const signal = str(e.signal);
        const code = num(e.code);
        const [cls, text] = killedBy
          ? [
              'kill',
              `${killedBy === 'deadline' ? 'killed at the deadline' : killedBy === 'harness' ? 'killed by the harness' : `killed (${killedBy})`}${signal ? ` (${signal})` : ''}`,
            ]
          : signal
            ? ['kill', `killed by ${signal}`]
            : code === 0
              ? ['exit', 'exit 0']
              : ['crash', `crash: exit ${code ?? '?'}`];
        emit({ kind: 'mark', t, lane: id, cls, text, level: ESSENTIAL });
        break;
      }
      case 'process-stopped':
        emit({ kind: 'mark', t, lane: laneOfRole(e.role, e.incarnation), cls: 'stop', text: 'stopped itself (SIGSTOP)', level: ESSENTIAL });
        break;
      case 'process-continued':
        emit({ kind: 'mark', t, lane: laneOfRole(e.role, e.incarnation), cls: 'cont', text: 'continued (SIGCONT)', level: ESSENTIAL });
        break;
      case 'store-read': {
        const store = (e.store ?? {}) as { exists?: boolean; error?: string; checkpoint?: { last: number; total: number }[]; ledger?: unknown[] };
        const row = Array.isArray(store.checkpoint) ? store.checkpoint[0] : undefined;
        const what = !store.exists
          ? 'no file'
          : store.error
            ? `unreadable: ${store.error}`
            : row
              ? `last ${row.last}, total ${row.total}, ${Array.isArray(store.ledger) ? store.ledger.length : '?'} rows`
              : 'no checkpoint row';
        const when = e.when === 'final' ? 'final read' : e.when === 'while-stopped' ? 'read while stopped' : 'file';
        emit({
          kind: 'mark',
          t,
          lane: laneOfRole(e.role, e.incarnation),
          cls: 'read',
          text: `${when}: ${what}`,
          level: e.when === 'final' ? LANDMARK : ESSENTIAL,
        });
        break;
      }
      case 'harness-error':
        emit({ kind: 'note', t, cls: 'harness-error', text: `harness error: ${str(e.message) ?? ''}`, level: ESSENTIAL });
        break;
      case 'fault': {
        const action = e.action === 'lift' ? 'lift' : 'apply';
        const name = str(e.name) ?? str(e.kind) ?? 'fault';
        const detail = e.detail === undefined ? '' : typeof e.detail === 'string' ? e.detail : describeUnknown({ type: '', ...(e.detail as object) }, 60);
        const label = `${name}${str(e.kind) && e.kind !== name ? ` (${e.kind as string})` : ''}${detail ? ` ${detail}` : ''}`;
        if (e.kind === 'signal') {
          // A signal is an instant, not an interval: a mark on the process it hit.
          emit({ kind: 'mark', t, lane: laneOfRole(e.role ?? 'consumer', e.incarnation), cls: 'signal', text: label, level: ESSENTIAL });
          break;
        }
        // The band's own label carries the detail; the note names the fault and, for a lift, why.
        const text = action === 'apply' ? `fault applied: ${name}` : `fault lifted: ${name}${detail ? ` — ${detail}` : ''}`;
        emit({ kind: 'note', t, cls: `fault-${action}`, text, level: ESSENTIAL, fault: { name, action, label } });
        break;
      }
      default: {
        const flood = (unknownCounts.get(e.type) ?? 0) > UNKNOWN_FLOOD;
        const role = e.role === 'control' || e.role === 'consumer' ? laneOfRole(e.role, e.incarnation) : undefined;
        if (role) emit({ kind: 'mark', t, lane: role, cls: 'unknown', text: describeUnknown(e, 60), level: flood ? PLAIN : LANDMARK, groupAs: e.type });
        else emit({ kind: 'note', t, cls: 'unknown', text: describeUnknown(e), level: flood ? PLAIN : LANDMARK, groupAs: e.type });
      }
    }
  }

  // Lane order: control | publisher | consumer #1 … #n | anything else. Control arrows go left,
  // consumer arrows go right, so no arrow crosses another lane's lifeline.
  const order = (l: Lane): [number, number] =>
    l.kind === 'control' ? [0, 0] : l.kind === 'publisher' ? [1, 0] : l.kind === 'consumer' ? [2, Number(l.id.split('#')[1])] : [3, 0];
  const sorted = [...lanes.values()].sort((a, b) => {
    const [x, y] = order(a);
    const [u, v] = order(b);
    return x - u || y - v;
  });
  for (const l of sorted) {
    if (l.kind !== 'consumer') continue;
    if (!l.subtitle) l.subtitle = 'no fault';
    if (!started.has(l.id)) l.subtitle += ' · never started';
  }
  return sorted;
}

/**
 * Streams items into rows: a run of items below `level` keeps its first and last `context`
 * items and becomes one band in between, if at least `minHidden` items would be hidden.
 * Memory stays bounded however long the run: hidden items are only counted.
 */
class Collapser {
  readonly rows: Row[] = [];
  private head: Item[] = [];
  private tail: Item[] = [];
  /** Hidden items while there are too few for a band; once there are enough, `band` only counts them. */
  private middle: Item[] = [];
  private band: { t: number; t1: number; count: number; groups: BandGroup[] } | undefined;

  constructor(
    private readonly level: number,
    private readonly context: number,
    private readonly minHidden: number,
  ) {}

  push = (item: Item): void => {
    if (item.level >= this.level) {
      this.flush();
      this.rows.push(item);
      return;
    }
    if (this.head.length < this.context) {
      this.head.push(item);
      return;
    }
    this.tail.push(item);
    if (this.tail.length > this.context) this.hide(this.tail.shift()!);
  };

  private hide(item: Item): void {
    if (!this.band) {
      this.middle.push(item);
      if (this.middle.length < Math.max(1, this.minHidden)) return;
      this.band = { t: this.middle[0]!.t, t1: 0, count: 0, groups: [] };
      for (const m of this.middle) this.count(m);
      this.middle = [];
      return;
    }
    this.count(item);
  }

  private count(it: Item): void {
    const b = this.band!;
    b.count++;
    b.t1 = it.t;
    const from = it.kind === 'msg' ? it.from : it.kind === 'mark' ? it.lane : '';
    const to = it.kind === 'msg' ? it.to : from;
    const cls = (it.kind === 'msg' ? undefined : it.groupAs) ?? it.cls;
    // A handful of groups per band: a linear scan beats hashing the keys of every item.
    let g: BandGroup | undefined;
    for (const candidate of b.groups) {
      if (candidate.from === from && candidate.to === to && candidate.cls === cls) {
        g = candidate;
        break;
      }
    }
    if (!g) b.groups.push((g = { from, to, cls, count: 0 }));
    g.count++;
    if (it.kind === 'msg' && it.seq !== undefined) {
      if (g.min === undefined || it.seq < g.min) g.min = it.seq;
      if (g.max === undefined || it.seq > g.max) g.max = it.seq;
    }
  }

  flush(): void {
    this.rows.push(...this.head);
    if (this.band) {
      this.rows.push({ kind: 'band', t: this.band.t, t1: this.band.t1, count: this.band.count, groups: this.band.groups });
    } else this.rows.push(...this.middle);
    this.rows.push(...this.tail);
    this.head = [];
    this.tail = [];
    this.middle = [];
    this.band = undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Layout and drawing

const LEFT = 92;
const LANE_W = 200;
const ROW_H = 20;
const HEAD_H = 52;
const BAND_LINE = 15;

const COLORS: Record<string, string> = {
  EVENT: '#1f5fbf',
  ACK: '#1d7a33',
  RESUME: '#7a2fa8',
  RESYNC: '#c26a00',
  other: '#555555',
  error: '#c0162b',
};

function rowHeight(row: Row): number {
  if (row.kind === 'band') return Math.max(2, row.groups.length) * BAND_LINE + 12;
  return ROW_H;
}

/** Renders the diagram. Pure function of the journal (and options). */
export function renderSequenceDiagram(journal: JournalEntry[], options: DiagramOptions = {}): SequenceDiagram {
  const context = options.context ?? 3;
  const minHidden = options.minHidden ?? 6;
  const maxRows = options.maxRows ?? 2500;
  const named = namedByVerdict(journal);
  const focus = new Set(options.focusSeqs ?? named.seqs);
  const build = (level: number): { lanes: Lane[]; rows: Row[] } => {
    const collapser = new Collapser(level, context, minHidden);
    const lanes = model(journal, focus, named.times, collapser.push);
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
      const lines = row.groups.map((g) => bandLabel(g, lanes));
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
      out.push(
        `<g class="msg msg-${row.cls}${row.culprit ? ' culprit' : ''}" data-t="${row.t}"><title>${escapeMarkup(`${seconds(row.t)}  ${row.from} → ${row.to}  ${text}`)}</title>${time}${halo}` +
          `<line x1="${x1 + dir * 3}" y1="${mid}" x2="${x2 - dir * 3}" y2="${mid}" stroke="${color}" stroke-width="1.4"${row.cls === 'error' ? ' stroke-dasharray="4 2"' : ''} marker-end="url(#arrow-${COLORS[row.cls] ? row.cls : 'other'})"/>` +
          `<text x="${(x1 + x2) / 2}" y="${mid - 3}" text-anchor="middle" style="fill:${color}">${escapeMarkup(clip(text, room))}</text></g>`,
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

function bandLabel(g: BandGroup, lanes: Lane[]): string {
  const title = (id: string): string => lanes.find((l) => l.id === id)?.title ?? id;
  const who = !g.from ? '' : g.from === g.to ? `${title(g.from)}: ` : `${title(g.from)} → ${title(g.to)}: `;
  if (g.min !== undefined && g.max !== undefined) return `${who}${g.cls} ${g.min}…${g.max}, ${count(g.count)} line${g.count === 1 ? '' : 's'}`;
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
