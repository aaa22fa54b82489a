// Drives the simulated chain: mines blocks (on demand, or at the virtual block interval
// compressed into real time), performs the scripted reorganisations when the head reaches
// them, hands each change to the indexer and then says "the outbox changed".

import type { ChainChange, ReorgRequest, SimChain } from './chain.js';
import type { OutboxIndexer } from '../outbox/indexer.js';
import type { Cancel, Scheduler } from '../server/scheduler.js';

export interface ScriptedReorg extends ReorgRequest {
  /** Performed right after block `afterBlock` is mined. */
  afterBlock: number;
}

export class BlockProducer {
  private stopTimer: Cancel = () => {};

  constructor(
    readonly chain: SimChain,
    private readonly indexer: OutboxIndexer,
    private readonly outboxChanged: () => void,
    private readonly reorgs: readonly ScriptedReorg[] = [],
  ) {}

  /** Mines one block (and a reorg scripted right after it); returns the changes written. */
  step(): ChainChange[] {
    const changes = [this.chain.mine()];
    const due = this.reorgs.filter((r) => r.afterBlock === this.chain.head.number);
    for (const reorg of due) changes.push(this.chain.reorg(reorg));
    for (const change of changes) this.indexer.apply(change);
    this.outboxChanged();
    return changes;
  }

  /** Mines `count` blocks. */
  mine(count: number): ChainChange[] {
    const changes: ChainChange[] = [];
    for (let i = 0; i < count; i++) changes.push(...this.step());
    return changes;
  }

  /** An unscripted reorganisation now. */
  reorg(request: ReorgRequest): ChainChange {
    const change = this.chain.reorg(request);
    this.indexer.apply(change);
    this.outboxChanged();
    return change;
  }

  /**
   * Mines a block every `blockIntervalMs / compression` real milliseconds until `untilBlock`
   * (if given) or `stop()`: virtual time runs `compression` times faster than real time.
   */
  run(scheduler: Scheduler, options: { compression?: number; untilBlock?: number } = {}): void {
    const period = this.chain.blockIntervalMs / (options.compression ?? 1);
    if (!(period > 0 && Number.isFinite(period))) throw new RangeError(`block period must be positive and finite (got ${period} ms)`);
    const tick = () => {
      if (options.untilBlock !== undefined && this.chain.head.number >= options.untilBlock) return;
      this.step();
      this.stopTimer = scheduler.after(period, tick);
    };
    this.stopTimer = scheduler.after(period, tick);
  }

  stop(): void {
    this.stopTimer();
  }
}
