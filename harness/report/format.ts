// Formatting helpers shared by every renderer (console, HTML, SVG, JUnit XML, Markdown).

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
