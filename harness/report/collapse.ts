// Collapsing long runs of routine rows into one labelled band, with bounded memory: hidden
// items are only counted, so a 400 000-entry journal never holds 400 000 rows.

import type { BandGroup, Item, Row } from './diagram-model.js';

/**
 * Streams items into rows: a run of items below `level` keeps its first and last `context`
 * items and becomes one band in between, if at least `minHidden` items would be hidden.
 * Memory stays bounded however long the run: hidden items are only counted.
 */
export class Collapser {
  readonly rows: Row[] = [];
  private head: Item[] = [];
  private tail: Item[] = [];
  /** Hidden items while there are too few for a band; once there are enough, `band` only counts them. */
  private middle: Item[] = [];
  private band: { t: number; t1: number; count: number; groups: BandGroup[] } | undefined;

  constructor(
    private readonly level: number,
    private readonly context: number,
    private readonly minHidden: number,
  ) {}

  push = (item: Item): void => {
    if (item.level >= this.level) {
      this.flush();
      this.rows.push(item);
      return;
    }
    if (this.head.length < this.context) {
      this.head.push(item);
      return;
    }
    this.tail.push(item);
    if (this.tail.length > this.context) this.hide(this.tail.shift()!);
  };

  private hide(item: Item): void {
    if (!this.band) {
      this.middle.push(item);
      if (this.middle.length < Math.max(1, this.minHidden)) return;
      this.band = { t: this.middle[0]!.t, t1: 0, count: 0, groups: [] };
      for (const m of this.middle) this.count(m);
      this.middle = [];
      return;
    }
    this.count(item);
  }

  private count(it: Item): void {
    const b = this.band!;
    b.count++;
    b.t1 = it.t;
    const from = it.kind === 'msg' ? it.from : it.kind === 'mark' ? it.lane : '';
    const to = it.kind === 'msg' ? it.to : from;
    const cls = (it.kind === 'msg' ? undefined : it.groupAs) ?? it.cls;
    // A handful of groups per band: a linear scan beats hashing the keys of every item.
    let g: BandGroup | undefined;
    for (const candidate of b.groups) {
      if (candidate.from === from && candidate.to === to && candidate.cls === cls) {
        g = candidate;
        break;
      }
    }
    if (!g) b.groups.push((g = { from, to, cls, count: 0 }));
    g.count++;
    if (it.kind === 'msg' && it.seq !== undefined) {
      if (g.min === undefined || it.seq < g.min) g.min = it.seq;
      if (g.max === undefined || it.seq > g.max) g.max = it.seq;
    }
  }

  flush(): void {
    this.rows.push(...this.head);
    if (this.band) {
      this.rows.push({ kind: 'band', t: this.band.t, t1: this.band.t1, count: this.band.count, groups: this.band.groups });
    } else this.rows.push(...this.middle);
    this.rows.push(...this.tail);
    this.head = [];
    this.tail = [];
    this.middle = [];
    this.band = undefined;
  }
}
