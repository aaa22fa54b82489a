// The ledger-lab line protocol (seed 000): strict ASCII lines over one TCP connection.
//   publisher -> consumer: EVENT <seq> <delta>\n   or   RESYNC <first_available_seq>\n
//   consumer -> publisher: RESUME <last>\n, then ACK <seq>\n
// Strictness is the point: "it converted to a number" is not "it is the promised message".
// This module is shared by the publisher and the TypeScript reference consumer; it never
// imports the harness.

export const MAX_LINE_BYTES = 64; // including the LF
export const MIN_DELTA = -1000;
export const MAX_DELTA = 1000;

export type PublisherLine = { kind: 'event'; seq: number; delta: number } | { kind: 'resync'; firstAvailable: number };

export type ConsumerLine = { kind: 'resume'; last: number } | { kind: 'ack'; seq: number };

export class MalformedLine extends Error {
  constructor(
    readonly reason: string,
    readonly line: Uint8Array,
  ) {
    super(`malformed line (${reason}): ${JSON.stringify(Buffer.from(line).toString('latin1'))}`);
    this.name = 'MalformedLine';
  }
}

const SEQ = '(0|[1-9][0-9]*)';
const SIGNED = '(0|-?[1-9][0-9]*)';
const EVENT_RE = new RegExp(`^EVENT ${SEQ} ${SIGNED}\n$`);
const RESYNC_RE = new RegExp(`^RESYNC ${SEQ}\n$`);
const RESUME_RE = new RegExp(`^RESUME (-1|${SEQ})\n$`);
const ACK_RE = new RegExp(`^ACK ${SEQ}\n$`);

/** Checks the byte-level rules shared by every line; returns the line as a string. */
function asciiLine(bytes: Uint8Array): string {
  if (bytes.length > MAX_LINE_BYTES) throw new MalformedLine(`longer than ${MAX_LINE_BYTES} bytes`, bytes);
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) throw new MalformedLine('no LF at the end', bytes);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x0a && i !== bytes.length - 1) throw new MalformedLine('LF inside the line', bytes);
    if (b === 0x0d) throw new MalformedLine('CR byte', bytes);
    if (b > 0x7e || (b < 0x20 && b !== 0x0a)) throw new MalformedLine(`byte 0x${b.toString(16).padStart(2, '0')} is not printable ASCII`, bytes);
  }
  return Buffer.from(bytes).toString('latin1');
}

/** A decimal that matched the grammar but does not fit a safe integer is a range error, not a wrap. */
function safeInt(text: string, what: string, bytes: Uint8Array): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new MalformedLine(`${what} ${text} is too large`, bytes);
  return n;
}

export function parsePublisherLine(bytes: Uint8Array): PublisherLine {
  const text = asciiLine(bytes);
  let m = EVENT_RE.exec(text);
  if (m) {
    const seq = safeInt(m[1]!, 'seq', bytes);
    const delta = Number(m[2]!);
    if (!(delta >= MIN_DELTA && delta <= MAX_DELTA)) throw new MalformedLine(`delta ${m[2]} outside ${MIN_DELTA}..${MAX_DELTA}`, bytes);
    return { kind: 'event', seq, delta };
  }
  m = RESYNC_RE.exec(text);
  if (m) return { kind: 'resync', firstAvailable: safeInt(m[1]!, 'seq', bytes) };
  throw new MalformedLine('not "EVENT <seq> <delta>" or "RESYNC <seq>"', bytes);
}

export function parseConsumerLine(bytes: Uint8Array): ConsumerLine {
  const text = asciiLine(bytes);
  let m = RESUME_RE.exec(text);
  if (m) return { kind: 'resume', last: safeInt(m[1]!, 'cursor', bytes) };
  m = ACK_RE.exec(text);
  if (m) return { kind: 'ack', seq: safeInt(m[1]!, 'seq', bytes) };
  throw new MalformedLine('not "RESUME <last>" or "ACK <seq>"', bytes);
}

export const encodeEvent = (seq: number, delta: number): string => `EVENT ${seq} ${delta}\n`;
export const encodeResync = (firstAvailable: number): string => `RESYNC ${firstAvailable}\n`;
export const encodeResume = (last: number): string => `RESUME ${last}\n`;
export const encodeAck = (seq: number): string => `ACK ${seq}\n`;

/**
 * Splits a byte stream into LF-terminated lines without ever buffering more than one
 * maximal line: an unterminated fragment that already has MAX_LINE_BYTES bytes can never
 * become a valid line, so it is reported at once and a peer cannot make us wait for (or
 * store) an endless line.
 */
export class LineSplitter {
  private pending: Buffer = Buffer.alloc(0);

  /** Feeds bytes; returns the complete lines in order, then the over-long fragment if any. */
  push(chunk: Uint8Array): { lines: Buffer[]; overflow?: Buffer } {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk);
    const lines: Buffer[] = [];
    let start = 0;
    for (let lf = this.pending.indexOf(0x0a); lf !== -1; lf = this.pending.indexOf(0x0a, start)) {
      lines.push(this.pending.subarray(start, lf + 1));
      start = lf + 1;
    }
    this.pending = this.pending.subarray(start);
    return this.pending.length >= MAX_LINE_BYTES ? { lines, overflow: this.pending } : { lines };
  }

  /** Bytes received after the last LF (a final fragment is not a line). */
  get fragment(): Buffer {
    return this.pending;
  }
}

/**
 * Why a line (as text, one character per byte, its LF included) breaks the grammar of the side
 * that sent it, in the contract's words ("a `+` sign", "two spaces in a row"), or undefined for a
 * valid line. Reports use it to mark and explain broken lines; the parsers above stay the judges
 * (this answers "invalid" exactly when they throw).
 */
export function grammarBreak(text: string, sender: 'publisher' | 'consumer'): string | undefined {
  // Fast path: nearly every line of a long run is canonical.
  if (text.length <= MAX_LINE_BYTES) {
    const m = (sender === 'publisher' ? EVENT_RE : ACK_RE).exec(text);
    const delta = m?.[2] === undefined ? 0 : Number(m[2]);
    if (m && Number.isSafeInteger(Number(m[1])) && delta >= MIN_DELTA && delta <= MAX_DELTA) return undefined;
  }
  const bytes = Buffer.from(text, 'latin1');
  try {
    if (sender === 'publisher') parsePublisherLine(bytes);
    else parseConsumerLine(bytes);
    return undefined;
  } catch (error) {
    if (!(error instanceof MalformedLine)) throw error;
    return inWords(text, sender) ?? error.reason;
  }
}

/** The first rule a malformed line breaks, named as the contract's table names it. */
function inWords(text: string, sender: 'publisher' | 'consumer'): string | undefined {
  if (text.length > MAX_LINE_BYTES) return `longer than ${MAX_LINE_BYTES} bytes`;
  if (!text.endsWith('\n')) return 'no LF at the end: a fragment is not a line';
  const body = text.slice(0, -1);
  if (body.includes('\n')) return 'an LF inside the line';
  if (body.endsWith('\r')) return 'a CR before the LF (a CRLF line ending)';
  if (body.includes('\t')) return 'a tab where exactly one space belongs';
  const odd = /[^\x20-\x7e]/.exec(body);
  if (odd) return `byte 0x${odd[0].charCodeAt(0).toString(16).padStart(2, '0')}, which is not printable ASCII`;
  if (body === '') return 'an empty line';
  if (body.includes('  ')) return 'two spaces in a row';
  if (body.endsWith(' ')) return 'a trailing space';
  if (body.startsWith(' ')) return 'a leading space';
  const [word, ...fields] = body.split(' ');
  const words: Record<string, number> = sender === 'publisher' ? { EVENT: 2, RESYNC: 1 } : { RESUME: 1, ACK: 1 };
  const arity = words[word!];
  if (arity === undefined) return words[word!.toUpperCase()] !== undefined ? `a lowercase keyword "${word}"` : `an unknown keyword "${word}"`;
  if (fields.length > arity) return `an extra field ("${fields.slice(arity).join(' ')}")`;
  if (fields.length < arity) return 'a missing field';
  for (const field of fields) {
    if (field.startsWith('+')) return 'a "+" sign';
    if (field === '-0') return 'a "-0"';
    if (/^-?0[0-9]/.test(field)) return `a leading zero ("${field}")`;
    if (!/^-?[0-9]+$/.test(field)) return `"${field}" is not a decimal integer`;
  }
  return undefined; // a range or size rule: the parser's own reason says it best
}
