// A small strict JSON reader (RFC 8259) for the frames of consumer/feed/CONTRACT.md, section 2:
// the wire's reader that keeps the text JSON.parse throws away.
//
// Why not JSON.parse: the contract needs three things JSON.parse throws away.
//   - The text of each number: a ping `id` must be "a JSON integer >= 0, no fraction, no
//     exponent" (JSON.parse turns 7.0 and 7e0 into 7) and its pong must carry the very same
//     digits (JSON.parse rounds 18446744073709551617 to a double).
//   - Where each value starts and ends, so an event's payload is stored as the exact text that
//     arrived (no number in it is rounded on the way to feed_events).
//   - Well-formed text: an escaped lone surrogate ("\ud800") cannot be stored in SQLite as
//     UTF-8 text, so such a frame is refused instead of being silently altered.
// Nesting is bounded (MAX_DEPTH) so that a hostile 1 MiB line of "[" cannot exhaust the stack;
// the Python twin applies the same bound.

export const MAX_DEPTH = 64;

export type Json = JsonObject | JsonArray | JsonString | JsonNumber | JsonLiteral;
interface Span {
  /** Offsets of the value in the parsed text: text.slice(start, end) is its JSON. */
  start: number;
  end: number;
}
export interface JsonObject extends Span {
  kind: 'object';
  /** Duplicate names: the last one wins, as with JSON.parse and Python's json. */
  entries: Map<string, Json>;
}
export interface JsonArray extends Span {
  kind: 'array';
  items: Json[];
}
export interface JsonString extends Span {
  kind: 'string';
  value: string;
}
export interface JsonNumber extends Span {
  kind: 'number';
  /** The number exactly as written, e.g. "7", "-0", "1.50e3". */
  text: string;
}
export interface JsonLiteral extends Span {
  kind: 'literal';
  value: true | false | null;
}

export class JsonError extends Error {
  override name = 'JsonError';
}

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LONE_SURROGATE_RE = /\p{Cs}/u; // in a u-regex a proper pair is one astral code point

class Reader {
  private i = 0;

  constructor(private readonly text: string) {}

  document(): Json {
    const value = this.value(1);
    this.space();
    if (this.i !== this.text.length) this.fail('unexpected text after the value');
    return value;
  }

  private fail(what: string): never {
    throw new JsonError(`${what} at offset ${this.i}`);
  }

  private space(): void {
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else return;
    }
  }

  private value(depth: number): Json {
    this.space();
    const start = this.i;
    const c = this.text[this.i];
    if (c === '{' || c === '[') {
      if (depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
      return c === '{' ? this.object(depth) : this.array(depth);
    }
    if (c === '"') return { kind: 'string', value: this.string(), start, end: this.i };
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return { kind: 'literal', value, start, end: this.i };
      }
    }
    NUMBER_RE.lastIndex = this.i;
    const m = NUMBER_RE.exec(this.text);
    if (!m) this.fail(c === undefined ? 'unexpected end of text' : `unexpected ${JSON.stringify(c)}`);
    this.i += m[0].length;
    return { kind: 'number', text: m[0], start, end: this.i };
  }

  private object(depth: number): JsonObject {
    const start = this.i++;
    const entries = new Map<string, Json>();
    this.space();
    if (this.text[this.i] === '}') {
      this.i++;
      return { kind: 'object', entries, start, end: this.i };
    }
    for (;;) {
      this.space();
      if (this.text[this.i] !== '"') this.fail('expected a member name');
      const name = this.string();
      this.space();
      if (this.text[this.i] !== ':') this.fail("expected ':'");
      this.i++;
      entries.set(name, this.value(depth + 1));
      this.space();
      const c = this.text[this.i++];
      if (c === '}') return { kind: 'object', entries, start, end: this.i };
      if (c !== ',') this.fail("expected ',' or '}'");
    }
  }

  private array(depth: number): JsonArray {
    const start = this.i++;
    const items: Json[] = [];
    this.space();
    if (this.text[this.i] === ']') {
      this.i++;
      return { kind: 'array', items, start, end: this.i };
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.space();
      const c = this.text[this.i++];
      if (c === ']') return { kind: 'array', items, start, end: this.i };
      if (c !== ',') this.fail("expected ',' or ']'");
    }
  }

  /** A string token: checked here, decoded by JSON.parse (exact for a string token). */
  private string(): string {
    const t = this.text;
    const start = this.i++;
    for (;;) {
      const c = t.charCodeAt(this.i);
      if (Number.isNaN(c)) this.fail('unterminated string');
      if (c === 0x22) break;
      if (c < 0x20) this.fail('control character in a string');
      if (c === 0x5c) {
        const e = t[this.i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(t.slice(this.i + 2, this.i + 6))) this.fail('bad \\u escape');
          this.i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) {
          this.i += 2;
        } else {
          this.fail('bad escape');
        }
      } else {
        this.i++;
      }
    }
    this.i++;
    const value = JSON.parse(t.slice(start, this.i)) as string;
    if (LONE_SURROGATE_RE.test(value)) this.fail('escaped lone surrogate (not Unicode text)');
    return value;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes strict UTF-8 (no replacement characters, a BOM is kept and then refused). */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new JsonError('not valid UTF-8');
  }
}

/** Parses one JSON text; throws JsonError. */
export function parseJson(text: string): Json {
  return new Reader(text).document();
}
