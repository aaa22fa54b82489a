// NDJSON framing: one JSON text per LF-terminated line, at most 1 MiB per line (the LF not
// counted). A read may hold several lines or part of one.

export const MAX_LINE_BYTES = 1024 * 1024;

const asBuffer = (chunk: Uint8Array): Buffer => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));

/**
 * Splits a byte stream into lines (without their LF). The unfinished tail is kept as a list of
 * chunks, so a long line costs one copy, not one per read. A tail that already exceeds the
 * limit can never become a valid line: it is reported at once, so a peer cannot make us store
 * an endless line.
 */
export class NdjsonSplitter {
  private parts: Buffer[] = [];
  private partsLength = 0;

  /** Feeds bytes; returns the complete lines in order, and `overflow` when the tail is already too long. */
  push(chunk: Uint8Array): { lines: Buffer[]; overflow: boolean } {
    const bytes = asBuffer(chunk);
    const lines: Buffer[] = [];
    let start = 0;
    for (let lf = bytes.indexOf(0x0a); lf !== -1; lf = bytes.indexOf(0x0a, start)) {
      const piece = bytes.subarray(start, lf);
      lines.push(this.parts.length ? Buffer.concat([...this.parts, piece]) : piece);
      this.parts = [];
      this.partsLength = 0;
      start = lf + 1;
    }
    if (start < bytes.length) {
      this.parts.push(bytes.subarray(start));
      this.partsLength += bytes.length - start;
    }
    return { lines, overflow: this.partsLength > MAX_LINE_BYTES };
  }

  /** Bytes received after the last LF (a final fragment is not a line). */
  get fragmentLength(): number {
    return this.partsLength;
  }
}
