// A consumer's stdout or stderr, capped: the first `headBytes` and the last `tailBytes` are
// kept, with the count of what was dropped between them, so a flood costs no memory and the
// report still shows how the output began (the banner, the first error) and how it ended.

const MARK = (dropped: number): string => `\n[… ${dropped} bytes not kept …]\n`;

export class HeadTailBuffer {
  private readonly head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;
  /** Every byte ever pushed. */
  total = 0;

  constructor(
    readonly headBytes = 16 * 1024,
    readonly tailBytes = 48 * 1024,
  ) {
    if (headBytes < 0 || tailBytes < 0) throw new RangeError('HeadTailBuffer: sizes must not be negative');
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headSize < this.headBytes) {
      const take = Math.min(this.headBytes - this.headSize, rest.length);
      this.head.push(Buffer.from(rest.subarray(0, take))); // a copy: the read buffer is not retained
      this.headSize += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.tailBytes === 0) return;
    if (rest.length >= this.tailBytes) {
      this.tail = [Buffer.from(rest.subarray(rest.length - this.tailBytes))];
      this.tailSize = this.tailBytes;
      return;
    }
    this.tail.push(Buffer.from(rest));
    this.tailSize += rest.length;
    if (this.tail.length > 256) this.tail = [Buffer.concat(this.tail, this.tailSize)];
    while (this.tail.length > 1 && this.tailSize - this.tail[0]!.length >= this.tailBytes) this.tailSize -= this.tail.shift()!.length;
    if (this.tailSize > this.tailBytes) {
      this.tail[0] = Buffer.from(this.tail[0]!.subarray(this.tailSize - this.tailBytes));
      this.tailSize = this.tailBytes;
    }
  }

  /** Bytes pushed but not kept. */
  get dropped(): number {
    return this.total - this.headSize - this.tailSize;
  }

  /** Head, a marker naming the dropped byte count when something was dropped, tail (UTF-8; a
   *  character cut at either edge is dropped rather than shown broken). */
  text(): string {
    const head = Buffer.concat(this.head, this.headSize);
    let tail = Buffer.concat(this.tail, this.tailSize);
    if (this.dropped === 0) return Buffer.concat([head, tail]).toString('utf8');
    let skip = 0;
    while (skip < 3 && skip < tail.length && (tail[skip]! & 0xc0) === 0x80) skip++;
    tail = tail.subarray(skip);
    return `${trimBrokenEnd(head).toString('utf8')}${MARK(this.dropped)}${tail.toString('utf8')}`;
  }
}

/** Drops an incomplete UTF-8 sequence at the end of `bytes`. */
function trimBrokenEnd(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}
