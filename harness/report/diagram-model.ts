// The sequence diagram's model: lanes (the publisher, the control, one per consumer process) and
// rows (wire lines as arrows, marks for process starts, crashes, kills, stops and file reads,
// notes for faults and harness errors), in journal order. Long runs of routine traffic — what the
// lab's vocabulary calls routine — collapse into one labelled band, so a 100 000-event run draws a
// few hundred rows, not 400 000.

import type { JournalEntry } from '../record/journal.js';
import type { Vocabulary } from '../lab-api/lab.js';
import { describeUnknown, showLine } from '../text/format.js';

export type LaneKind = 'publisher' | 'consumer' | 'control' | 'other';

export interface Lane {
  id: string;
  kind: LaneKind;
  title: string;
  subtitle: string;
}

/** A line on the wire, drawn as an arrow. */
export interface Msg {
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
  /** Named by a finding (its position and time): highlighted. */
  culprit: boolean;
  /** The lab's few words for it (Vocabulary.newLabeller), drawn on the arrow instead of the clipped line. */
  label?: string;
}

/** The line exactly as journalled (control bytes made visible), and why it broke the grammar. */
export const msgText = (m: Msg): string => `${showLine(m.line)}${m.error ? `  ⚠ ${m.error}` : ''}`;

/** What the arrow says: the lab's label when it has one (never for a line that broke the grammar), else the line. */
export const msgLabel = (m: Msg): string => (m.label !== undefined && !m.error ? m.label : msgText(m));

/** The core's words for the moments a store is read at; a lab adds its own (Vocabulary.readMoments). */
export const READ_MOMENTS: Readonly<Record<string, string>> = {
  'after-exit': 'read after exit',
  'while-stopped': 'read while stopped',
  final: 'final read',
};

/** "0.5 s", "12.3 s", "2 min 5 s": a gap between two moments, in as few characters as a mark has room for. */
export function gapWords(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(ms < 1000 ? 3 : 1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Something that happened at one lane: start, exit, crash, kill, stop, read, open, close. */
export interface Mark {
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
export interface Note {
  kind: 'note';
  t: number;
  cls: string;
  text: string;
  level: number;
  groupAs?: string;
  /** For `fault` notes: the fault's name and whether it starts or ends a band. */
  fault?: { name: string; action: 'apply' | 'lift'; label: string };
}

export type Item = Msg | Mark | Note;

export interface BandGroup {
  from: string;
  to: string;
  cls: string;
  count: number;
  min?: number;
  max?: number;
}

/** A collapsed run of uneventful items. */
export interface Band {
  kind: 'band';
  t: number;
  t1: number;
  count: number;
  groups: BandGroup[];
}

export type Row = Item | Band;

export interface DiagramOptions {
  /** Rows kept visible on each side of a collapsed band (default 3). */
  context?: number;
  /** A run is collapsed only if at least this many rows would be hidden (default 6). */
  minHidden?: number;
  /** Beyond this many rows, less telling traffic (redeliveries, RESUMEs, ...) collapses too (default 2500). */
  maxRows?: number;
  /** Positions whose lines always stay visible (default: the positions the findings name). */
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
export const PLAIN = 0;
export const IRREGULAR = 1;
export const LANDMARK = 2;
export const ESSENTIAL = 3;

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
  'seal',
  'room',
  'leftovers',
]);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * Parses the journal into lanes and items, in journal order. Items are handed to `emit` one at
 * a time (not kept), so a 400 000-entry journal never holds 400 000 items at once.
 */
/**
 * Parses the journal into lanes and items, in journal order. Items are handed to `emit` one at
 * a time (not kept), so a 400 000-entry journal never holds 400 000 items at once. The lab's
 * vocabulary says what each wire line is and how telling; `focus` and `focusTimes` are the
 * positions and times the findings name.
 */
export function model(
  journal: readonly JournalEntry[],
  vocabulary: Vocabulary,
  focus: Set<number>,
  focusTimes: Set<number>,
  emit: (item: Item) => void,
  focusKeys: ReadonlySet<string> = new Set(),
): Lane[] {
  const lanes = new Map<string, Lane>();
  const lane = (id: string, kind: LaneKind, title: string): Lane => {
    let l = lanes.get(id);
    if (!l) lanes.set(id, (l = { id, kind, title, subtitle: '' }));
    return l;
  };
  lane('publisher', 'publisher', 'publisher');
  const consumerLane = (n: number): Lane => lane(`consumer#${n}`, 'consumer', `consumer #${n}`);
  const roleOfStream = new Map<string, string>();
  const connState = new Map<string, Map<number, string>>();
  const rank_ = vocabulary.newRanker();
  const label_ = vocabulary.newLabeller?.();
  const moments = { ...READ_MOMENTS, ...vocabulary.readMoments };
  /** When a process of each role last lost its connection: an open after it is a reconnect, and says how long the gap was. */
  const lastClose = new Map<string, number>();
  const roleOfLane = (id: string): string => (id === 'control' ? 'control' : id.startsWith('consumer#') ? 'consumer' : id);
  const unknownCounts = new Map<string, number>();
  let runningConsumer: number | undefined;
  let lastConsumer: number | undefined;
  const started = new Set<string>();

  for (const raw of journal) {
    const type = (raw as { type: string }).type;
    if (!KNOWN_TYPES.has(type)) unknownCounts.set(type, (unknownCounts.get(type) ?? 0) + 1);
  }
  lane('control', 'control', 'control');

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
    let id = conns.get(conn);
    if (!id) {
      // The journal names the process that owns each connection; older entries fall back on the stream's role.
      const owner = e.owner as { role?: string; incarnation?: number } | undefined;
      const role = owner?.role ?? roleOfStream.get(stream);
      if (role === 'control') id = 'control';
      else if (role === 'consumer' && num(owner?.incarnation) !== undefined) id = consumerLane(owner!.incarnation!).id;
      else if (role === 'consumer' && runningConsumer !== undefined) id = consumerLane(runningConsumer).id;
      else id = lane(`other:${stream}#${conn}`, 'other', `${stream} conn ${conn}`).id;
      conns.set(conn, id);
    }
    if (e.kind === 'open') {
      const closed = lastClose.get(roleOfLane(id));
      const text = closed === undefined ? `connected (conn ${conn})` : `reconnected after ${gapWords(t - closed)} (conn ${conn})`;
      emit({ kind: 'mark', t, lane: id, cls: 'open', text, level: LANDMARK });
    } else if (e.kind === 'close') {
      lastClose.set(roleOfLane(id), t);
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
      const send = e.kind === 'send';
      // The publisher journals what it refused; the lab says which other lines break its grammar
      // (a line the publisher was told to send on purpose, say), told how much of it the journal cut.
      const error = str(e.error) ?? vocabulary.broken?.(line, send ? 'send' : 'recv', num(e.truncated));
      const { cls: word, position: seq, key } = vocabulary.classify(line);
      const cls = error ? 'error' : word;
      const direction = send ? 'send' : 'recv';
      const rank = error ? undefined : rank_({ stream, conn, direction, cls, ...(seq === undefined ? {} : { position: seq }) });
      const label = label_?.({ stream, direction, line, cls: word });
      let level = error ? ESSENTIAL : rank === 'landmark' ? LANDMARK : rank === 'irregular' ? IRREGULAR : PLAIN;
      // A line with an exact identity (a cursor) is named by it, not by its coarser position (its block).
      const named = key !== undefined && focusKeys.size > 0 ? focusKeys.has(key) : seq !== undefined && focus.has(seq);
      if (named && level < ESSENTIAL) level = ESSENTIAL;
      const culprit = named && focusTimes.has(t);
      emit({
        kind: 'msg',
        t,
        from: send ? 'publisher' : id,
        to: send ? id : 'publisher',
        cls,
        line,
        error,
        seq,
        level,
        culprit,
        ...(label === undefined ? {} : { label }),
      });
    } else if (e.kind === 'note' && str(e.text) !== undefined) {
      // What the publisher did on this connection (e.g. moved its retention): its words, not the raw entry.
      emit({ kind: 'mark', t, lane: id, cls: 'note', text: `publisher: ${str(e.text)}`, level: LANDMARK });
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
        // The contract's fault hooks travel in the environment, whatever the lab.
        const fault = str((e.env as Record<string, unknown> | undefined)?.CHAOSLAB_FAULT);
        if (e.role !== 'control') lanes.get(id)!.subtitle = fault ? `fault ${fault}` : 'no fault';
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
        const what = vocabulary.describeStore(e.store);
        const when = moments[str(e.when) ?? ''] ?? `read (${str(e.when) ?? '?'})`;
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
