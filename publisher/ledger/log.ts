// The publisher's finite retention log and the seed's `replay`: items after a cursor, or an
// explicit ResyncRequired when the cursor is older than what the log still holds. Serving only
// the newest items instead would be a silent loss.

export interface LogEvent {
  seq: number;
  delta: number;
}

export class ResyncRequired extends Error {
  constructor(
    readonly cursor: number,
    readonly firstAvailable: number,
  ) {
    super(`cursor ${cursor} is older than the retention log (first available seq ${firstAvailable})`);
    this.name = 'ResyncRequired';
  }
}

export class RetentionLog {
  private readonly events: readonly LogEvent[];
  private start: number;

  /** `events` must be the contiguous script 0..n-1; `retentionStart` is the first seq still kept. */
  constructor(events: readonly LogEvent[], retentionStart = 0) {
    events.forEach((e, i) => {
      if (e.seq !== i) throw new Error(`event script must be contiguous from 0: position ${i} holds seq ${e.seq}`);
    });
    this.events = events;
    this.start = retentionStart;
    this.checkNotEmpty();
  }

  /** First seq still held. */
  get first(): number {
    return this.start;
  }

  /** Last seq of the script. */
  get last(): number {
    return this.events.length - 1;
  }

  /** Drops everything before `seq` (retention moves forward, never back). */
  moveStart(seq: number): void {
    if (seq < this.start) throw new Error(`retention only moves forward (${this.start} -> ${seq})`);
    this.start = seq;
    this.checkNotEmpty();
  }

  get(seq: number): LogEvent | undefined {
    return seq >= this.start ? this.events[seq] : undefined;
  }

  /**
   * Events with seq > cursor, at most `limit` of them. A cursor of first-1 is served (it needs
   * exactly the first item); anything older needs items the log no longer has.
   */
  replay(cursor: number, limit = Number.POSITIVE_INFINITY): LogEvent[] {
    if (cursor < this.start - 1) throw new ResyncRequired(cursor, this.start);
    const from = Math.max(cursor + 1, this.start);
    return this.events.slice(from, Number.isFinite(limit) ? from + limit : undefined);
  }

  // Without retention metadata an empty log cannot tell "was always empty" from "all trimmed".
  private checkNotEmpty(): void {
    if (this.start > this.last) throw new Error(`retention log is empty (first kept seq ${this.start}, last seq ${this.last})`);
  }
}
