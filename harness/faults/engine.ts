// Starts and ends the scenario's faults at their triggers: transcript points (the publisher
// awaits these hooks, so a fault is in place before the traffic it targets), process events
// (an incarnation starting or exiting) and times. Every apply and lift goes to the journal.

import type { StreamHooks } from '../../publisher/ledger/stream.js';
import type { JournalWriter } from '../journal.js';
import type { FaultPlan, Trigger } from '../scenario/load.js';
import type { AppliedEffect, FaultTarget } from './effect.js';
import { applyProxyDown } from './proxy-down.js';
import { applySignal } from './signal.js';
import { applyToxic } from './toxic.js';

interface Active {
  plan: FaultPlan;
  incarnation: number | undefined;
  applied: AppliedEffect;
  timer?: NodeJS.Timeout;
}

type Point = Exclude<Trigger, { kind: 'at' } | { kind: 'after' }> | { kind: 'incarnation-exit'; n: number };

export class FaultEngine {
  private readonly pending: FaultPlan[];
  private readonly active = new Set<Active>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private resumes = 0;
  private clockStarted = false;
  /** Serializes applies and lifts: the proxy sees them in trigger order. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    faults: readonly FaultPlan[],
    private readonly target: FaultTarget,
    private readonly journal: JournalWriter,
  ) {
    this.pending = [...faults];
  }

  /** Hooks for the publisher's stream of the consumer under test. */
  readonly hooks: StreamHooks = {
    onResume: () => this.at({ kind: 'on-resume', n: ++this.resumes }),
    beforeEvent: (_conn, seq) => this.at({ kind: 'before-event', seq }),
    onAck: (_conn, seq) => this.at({ kind: 'on-ack', seq }),
  };

  /** Just before consumer incarnation n starts; the first start also starts the clock for `at` faults. */
  async incarnationStarting(n: number): Promise<void> {
    if (!this.clockStarted) {
      this.clockStarted = true;
      for (const plan of this.pending.filter((p) => p.start.kind === 'at')) {
        const timer = setTimeout(
          () => {
            this.timers.delete(timer);
            void this.start(plan);
          },
          (plan.start as { ms: number }).ms,
        );
        this.timers.add(timer);
      }
    }
    await this.at({ kind: 'incarnation', n });
  }

  /** After consumer incarnation n exited: lifts what was to last "until this process exits". */
  incarnationExited(n: number): Promise<void> {
    return this.at({ kind: 'incarnation-exit', n });
  }

  /** Lifts everything still active (end of run). */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pending.length = 0;
    await this.serial(async () => {
      for (const active of [...this.active]) await this.liftNow(active, 'run ended');
    });
  }

  private at(point: Point): Promise<void> {
    const starting = this.pending.filter((p) => matches(p.start, point));
    const ending = [...this.active].filter((a) => a.plan.end && matches(a.plan.end, point, a.incarnation));
    if (starting.length === 0 && ending.length === 0) return Promise.resolve();
    return this.serial(async () => {
      for (const active of ending) await this.liftNow(active, describe(point));
      for (const plan of starting) await this.startNow(plan);
    });
  }

  private start(plan: FaultPlan): Promise<void> {
    return this.serial(() => this.startNow(plan));
  }

  private async startNow(plan: FaultPlan): Promise<void> {
    const index = this.pending.indexOf(plan);
    if (index === -1) return; // each fault fires once
    this.pending.splice(index, 1);
    // A fault started for incarnation n belongs to n even though that process is not running yet.
    const incarnation = plan.start.kind === 'incarnation' ? plan.start.n : this.target.current()?.incarnation;
    let applied: AppliedEffect;
    try {
      applied = await effectOf(plan, this.target);
    } catch (error) {
      this.journal.write({ type: 'harness-error', message: `fault ${plan.name} could not be applied: ${(error as Error).message}` });
      throw error;
    }
    this.journal.write({
      type: 'fault',
      action: 'apply',
      name: plan.name,
      kind: plan.effect.kind,
      detail: applied.detail,
      ...(incarnation ? { incarnation } : {}),
    });
    if (!applied.lift) return;
    const active: Active = { plan, incarnation, applied };
    this.active.add(active);
    if (plan.end?.kind === 'after') {
      active.timer = setTimeout(
        () => void this.serial(() => this.liftNow(active, `${plan.end!.kind === 'after' ? (plan.end as { ms: number }).ms : 0} ms passed`)),
        plan.end.ms,
      );
    }
  }

  private async liftNow(active: Active, why: string): Promise<void> {
    if (!this.active.delete(active)) return;
    clearTimeout(active.timer);
    const detail = await active.applied.lift!();
    this.journal.write({ type: 'fault', action: 'lift', name: active.plan.name, kind: active.plan.effect.kind, detail: `${detail} (${why})` });
  }

  private serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step);
    this.queue = next.catch(() => {});
    return next;
  }
}

function effectOf(plan: FaultPlan, target: FaultTarget): Promise<AppliedEffect> {
  switch (plan.effect.kind) {
    case 'toxic':
      return applyToxic(plan.effect, plan.name, target);
    case 'proxy-down':
      return applyProxyDown(plan.effect, plan.name, target);
    case 'signal':
      return applySignal(plan.effect, plan.name, target);
  }
}

function matches(trigger: Trigger, point: Point, incarnation?: number): boolean {
  switch (trigger.kind) {
    case 'before-event':
    case 'on-ack':
      return point.kind === trigger.kind && point.seq === trigger.seq;
    case 'on-resume':
    case 'incarnation':
      return point.kind === trigger.kind && point.n === trigger.n;
    case 'incarnation-exit':
      return point.kind === 'incarnation-exit' && 'n' in point && point.n === incarnation;
    default:
      return false; // time triggers run on timers
  }
}

function describe(point: Point): string {
  switch (point.kind) {
    case 'before-event':
      return `before EVENT ${point.seq}`;
    case 'on-ack':
      return `ACK ${point.seq} arrived`;
    case 'on-resume':
      return `RESUME #${point.n} arrived`;
    case 'incarnation':
      return `incarnation ${point.n} starting`;
    case 'incarnation-exit':
      return `incarnation ${'n' in point ? point.n : '?'} exited`;
  }
}
