// How text that came from a consumer or a submission (stored values, stdout/stderr tails, command
// lines, submission and folder names, manifest fields, messages quoting any of these) is shown:
// one function per output kind, and every renderer uses them. Each makes the text inert for its
// kind: a terminal runs no escape sequence, Markdown opens no code block, heading, link or HTML,
// a page runs no script, XML stays well-formed, a spreadsheet computes no formula, JSON parses.
// Control characters (C0, DEL, C1), bidirectional and invisible formatting characters, lone
// surrogates and the noncharacters XML forbids are shown as visible escapes (`\x1b`, `\u009b`,
// `\u202e`) in every human-facing kind: what a reader sees is what was there.

/**
 * C0 and DEL, C1 (0x9B is a one-byte CSI), the bidi controls (U+061C, U+200E/F, U+202A–E,
 * U+2066–9), the line and paragraph separators, the BOM / zero-width no-break space, U+FFFE/F and
 * lone surrogates.
 */
const UNSAFE =
  /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One character as its escape: `\n`, `\x1b` (ASCII), `\u009b` (anything above). */
function escaped(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Every unsafe character shown as its escape, except those in `keep` (e.g. the newline of a block). */
function visible(text: string, keep = ''): string {
  return text.replace(UNSAFE, (c) => (keep.includes(c) ? c : escaped(c)));
}

// ── terminal ────────────────────────────────────────────────────────────────────────────────

/**
 * A value on one line of a terminal: every control and formatting character, newline included,
 * shown as an escape. The harness adds its own colours around the result, never inside a value.
 */
export const terminalText = (text: string): string => visible(text);

// ── Markdown ────────────────────────────────────────────────────────────────────────────────

const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** What opens a block at the start of a line (a list item's text is one too): an ATX heading, a bullet, an ordered-list number, a setext underline or thematic break. */
const BLOCK_START = /^\s*(?:#{1,6}(?=\s|$)|[-+](?=\s|$)|\d{1,9}[.)](?=\s|$)|[-=](?=[-=\s]*$))/;

/**
 * A value in running Markdown (a paragraph, list item, table cell, heading or bold text): shown
 * as its characters. HTML and entities are entity-escaped; emphasis, code, links, strikethrough
 * and table pipes are backslash-escaped; a character that would open a block at the start of a
 * line (heading, list, quote, setext underline) is escaped there too; newlines are visible.
 */
export function markdownText(text: string): string {
  return visible(text)
    .replace(/[&<>]/g, (c) => ENTITY[c]!)
    .replace(/[\\`*_[\]|~]/g, '\\$&')
    .replace(BLOCK_START, (marker) => (/\d[.)]$/.test(marker) ? `${marker.slice(0, -1)}\\${marker.slice(-1)}` : marker.replace(/\S/, '\\$&')));
}

const longestBacktickRun = (text: string): number => Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));

/** A value as inline Markdown code: delimited by more backticks than its longest run, so nothing inside closes it. */
export function markdownCode(text: string): string {
  const shown = visible(text);
  if (shown === '') return '` `';
  const ticks = '`'.repeat(longestBacktickRun(shown) + 1);
  // CommonMark strips one space at each end when both ends have one: pad so the value keeps its own.
  const pad = shown.startsWith('`') || shown.endsWith('`') || (shown.startsWith(' ') && shown.endsWith(' ')) ? ' ' : '';
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

/** Lines as a fenced Markdown code block: the fence is longer than any backtick run inside, so no line can close it. */
export function markdownBlock(lines: readonly string[]): string[] {
  const shown = lines.map((line) => visible(line));
  const fence = '`'.repeat(Math.max(3, ...shown.map((line) => longestBacktickRun(line) + 1)));
  return [fence, ...shown, fence];
}

/** A link the harness made (a relative path) around a value: the text inert, the target a path, never a scheme. */
export const markdownLink = (text: string, href: string): string =>
  `[${markdownText(text)}](${safeHref(href).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)})`;

// ── HTML, SVG and XML ───────────────────────────────────────────────────────────────────────

/**
 * Text for HTML, SVG and XML, in content and in quoted attributes alike: markup characters as
 * entities, unsafe characters as visible escapes (tab, newline and carriage return stay: XML
 * allows them and a <pre> shows them).
 */
export const markupText = (text: string): string => visible(text, '\t\n\r').replace(/[&<>"']/g, (c) => ENTITY[c]!);

/** Text for an XML attribute value: markupText, with tab, newline and carriage return as character references (a parser would turn them into spaces). */
export const markupAttribute = (text: string): string => markupText(text).replace(/\r/g, '&#13;').replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');

/** A relative path for an href: URI-encoded, and never read as a scheme (`javascript:`). */
export function safeHref(path: string): string {
  const encoded = encodeURI(visible(path));
  return /^[a-z][a-z0-9+.-]*:/i.test(encoded) ? `./${encoded}` : encoded;
}

// ── CSV ─────────────────────────────────────────────────────────────────────────────────────

/**
 * One CSV cell (RFC 4180). A text that a spreadsheet would read as a formula (its first
 * non-blank character is =, +, -, @, or it starts with a tab or carriage return: OWASP's list)
 * gets a leading apostrophe; quoted when it holds a quote, comma, semicolon (the separator of
 * some locales), or blanks at either end. Numbers are numbers.
 */
export function csvCell(value: string | number): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  const raw = String(value);
  const formula = /^[\s]*[=+\-@]/.test(raw) || /^[\t\r]/.test(raw);
  const text = `${formula ? "'" : ''}${visible(raw)}`;
  return formula || /[",;]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

// ── JSON ────────────────────────────────────────────────────────────────────────────────────

/** Characters JSON carries raw but a terminal or viewer would act on: written as \u escapes (the parsed value is unchanged). */
const JSON_RAW_UNSAFE = /[\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF\uFFFE\uFFFF]/g;

/**
 * A JSON document (with a final newline): well-formed whatever the strings hold (JSON.stringify
 * escapes C0 and lone surrogates), and C1, bidi and separator characters escaped as well, so
 * `cat results.json` is inert too. Parsing gives back exactly the value.
 */
export const jsonText = (value: unknown, indent = 2): string =>
  `${JSON.stringify(value, null, indent).replace(JSON_RAW_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
