// Starts and ends the scenario's faults at their triggers: a lab's transcript points (its
// publisher awaits `point()`, so a fault is in place before the traffic it targets), process
// events (an incarnation starting or exiting) and times. Every apply and lift goes to the journal.
// Time comes from an injectable timer, so tests can drive `at_ms` and `after_ms` without sleeping.

import type { FaultPointSpec } from '../scenario/fault-points.js';
import type { JournalWriter } from '../record/journal.js';
import type { FaultPlan, Trigger } from '../scenario/types.js';
import type { AppliedEffect, FaultTarget } from './effect.js';
import { applyLoss } from './loss.js';
import { applyProxyDown } from './proxy-down.js';
import { applySignal } from './signal.js';
import { applyToxic } from './toxic.js';

interface Active {
  plan: FaultPlan;
  incarnation: number | undefined;
  applied: AppliedEffect;
  timer?: unknown;
}

type Point = Exclude<Trigger, { kind: 'at' } | { kind: 'after' } | { kind: 'incarnation-exit' }> | { kind: 'incarnation-exit'; n: number };

/** setTimeout/clearTimeout, or a test's fake. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class FaultEngine {
  private readonly pending: FaultPlan[];
  private readonly active = new Set<Active>();
  private readonly timers = new Set<unknown>();
  private clockStarted = false;
  /** Serializes applies and lifts: the proxy sees them in trigger order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Steps running or waiting: one may make a fault active that a later point ends. */
  private queued = 0;

  constructor(
    faults: readonly FaultPlan[],
    private readonly target: FaultTarget,
    private readonly journal: JournalWriter,
    /** The lab's points, for the journal's words ("before EVENT 7"). */
    private readonly points: Record<string, FaultPointSpec> = {},
    private readonly time: Timers = realTimers,
    /** A fault that could not be applied (the run's owner ends the run then); journaled as a harness error without it. */
    private readonly onFailure?: (reason: string) => void,
  ) {
    this.pending = [...faults];
  }

  /** The lab's publisher reached one of its points (`before_event` 7): start and end what waits for it. */
  point(point: string, value: number): Promise<void> {
    return this.at({ kind: 'point', point, value });
  }

  /** Just before consumer incarnation n starts; the first start also starts the clock for `at` faults. */
  async incarnationStarting(n: number): Promise<void> {
    if (!this.clockStarted) {
      this.clockStarted = true;
      for (const plan of this.pending.filter((p) => p.start.kind === 'at')) {
        const timer = this.time.setTimeout(
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
    for (const timer of this.timers) this.time.clearTimeout(timer);
    this.timers.clear();
    this.pending.length = 0;
    await this.serial(async () => {
      for (const active of [...this.active]) await this.liftNow(active, 'run ended');
    });
  }

  private at(point: Point): Promise<void> {
    const starting = this.pending.filter((p) => matches(p.start, point));
    const ends = (a: Active) => a.plan.end !== undefined && matches(a.plan.end, point, a.incarnation);
    // A process's exit also waits for the steps in flight (see below); other points only when they start or end something.
    const waits = point.kind === 'incarnation-exit' ? this.queued > 0 || this.active.size > 0 : [...this.active].some(ends);
    if (starting.length === 0 && !waits) return Promise.resolve();
    return this.serial(async () => {
      // What ends here is read when this step runs, not when the point was reached: a fault the
      // step before was still applying (say a reset started at the same event as a SIGKILL, whose
      // process exited meanwhile) is active by now, and ends with that process.
      const ending = [...this.active].filter(ends);
      for (const active of ending) await this.liftNow(active, this.describe(point));
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
      const reason = `fault ${plan.name} could not be applied: ${(error as Error).message}`;
      if (this.onFailure) this.onFailure(reason);
      else this.journal.write({ type: 'harness-error', message: reason });
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
      const ms = plan.end.ms;
      active.timer = this.time.setTimeout(() => void this.serial(() => this.liftNow(active, `${ms} ms passed`)), ms);
    }
  }

  private async liftNow(active: Active, why: string): Promise<void> {
    if (!this.active.delete(active)) return;
    if (active.timer !== undefined) this.time.clearTimeout(active.timer);
    let lifted: Awaited<ReturnType<NonNullable<AppliedEffect['lift']>>>;
    try {
      lifted = await active.applied.lift!();
    } catch (error) {
      this.onFailure?.(`fault ${active.plan.name} could not be lifted: ${(error as Error).message}`);
      throw error;
    }
    const { detail, evidence } = typeof lifted === 'string' ? { detail: lifted, evidence: undefined } : lifted;
    this.journal.write({ type: 'fault', action: 'lift', name: active.plan.name, kind: active.plan.effect.kind, detail: `${detail} (${why})` });
    if (evidence) this.journal.write(evidence);
  }

  private describe(point: Point): string {
    switch (point.kind) {
      case 'point':
        return this.points[point.point]?.describe(point.value) ?? `${point.point} ${point.value}`;
      case 'incarnation':
        return `incarnation ${point.n} starting`;
      case 'incarnation-exit':
        return `incarnation ${point.n} exited`;
    }
  }

  private serial<T>(step: () => Promise<T>): Promise<T> {
    this.queued++;
    const next = this.queue.then(step).finally(() => this.queued--);
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
    case 'loss':
      return applyLoss(plan.effect, plan.name, target);
  }
}

function matches(trigger: Trigger, point: Point, incarnation?: number): boolean {
  switch (trigger.kind) {
    case 'point':
      return point.kind === 'point' && point.point === trigger.point && point.value === trigger.value;
    case 'incarnation':
      return point.kind === 'incarnation' && point.n === trigger.n;
    case 'incarnation-exit':
      // Started between processes (none running): it lasts until the next one exits.
      return point.kind === 'incarnation-exit' && (incarnation === undefined || point.n === incarnation);
    default:
      return false; // time triggers run on timers
  }
}
