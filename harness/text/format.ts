// Formatting helpers shared by every renderer (console, HTML, SVG, JUnit XML, Markdown).

import { markupText, terminalText } from './inert.js';

/** Escapes text for HTML, SVG and XML (content and quoted attributes alike): see inert.ts. */
export const escapeMarkup = markupText;

/** A wire line as a reader wants it: without its newline, every control and formatting character visible (inert.ts). */
export const showLine = (line: string): string => terminalText(line.replace(/\n$/, ''));

/** Milliseconds as seconds, "1.204 s". */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

/** 8901 -> "8 901" (the thousands separator a reader of any locale can parse). */
export const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

export const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`);

/** A table cell as text: numbers with thousands separators, missing values as a dash. */
export const cellText = (v: string | number | null | undefined): string => (v === null || v === undefined ? '—' : typeof v === 'number' ? count(v) : v);

/** Short, single-line rendering of a journal entry's fields, for entries a renderer does not know. */
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

/** A process of the run in words, by its journal role: "consumer incarnation 2", "the control consumer", "the server under test". */
export const processWords = (role: unknown, incarnation: unknown): string =>
  role === 'control' ? 'the control consumer' : role === 'server' ? 'the server under test' : `consumer incarnation ${String(incarnation ?? '?')}`;
