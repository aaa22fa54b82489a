// The sequence diagram's model: lanes (the publisher, the control, one per consumer process; in a
// run that names its parties, one per party: each server instance, each probe and client) and
// rows (wire lines as arrows, marks for process starts, crashes, kills, stops and file reads,
// notes for faults and harness errors), in journal order. Long runs of routine traffic — what the
// lab's vocabulary calls routine — collapse into one labelled band, so a 100 000-event run draws a
// few hundred rows, not 400 000.

import { showLine } from '../text/format.js';

/** `server` and `client`: a party the run named (journal `party` entries, harness/record/cast.ts). */
export type LaneKind = 'publisher' | 'consumer' | 'control' | 'server' | 'client' | 'other';

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
export const UNKNOWN_FLOOD = 50;

export type Loose = { type: string; t: number } & Record<string, unknown>;

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
  'party',
  // The server's memory samples are drawn as a figure of the verdict, not as rows.
  'memory',
]);
