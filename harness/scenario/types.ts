// The run plan: a scenario file resolved, every default filled, every duration already scaled.
// The core part is the same for every lab; `lab` is the lab's own part.

import type { SIGNALS, TOXIC_TYPES } from './schema.js';

export interface Scenario<Plan = unknown> {
  /** Absolute path of the file. */
  file: string;
  /** The file's text, for reports. */
  source: string;
  name: string;
  description: string;
  /** The lab, by name. */
  protocol: string;
  timeoutMs: number;
  deadlineMs: number;
  /** Time compression: nominal durations were multiplied by this; the plan's `ms` are already scaled. */
  timeScale: number;
  /** Every TCP buffer of the run fixed at this size (sealed runs only: the run's namespace's sysctls). */
  socketBufferBytes?: number;
  faults: FaultPlan[];
  lab: Plan;
  /** A `chaoslab chaos` repro: the consumer (or push server) it failed with, and the seed and path that draw it again. */
  chaos?: { consumer?: string; server?: string; seed: number; path: string };
}

export type Trigger =
  /** One of the lab's points: `before_event` 7, `on_resume` 2. */
  | { kind: 'point'; point: string; value: number }
  | { kind: 'incarnation'; n: number }
  | { kind: 'at'; ms: number }
  | { kind: 'after'; ms: number }
  | { kind: 'incarnation-exit' };

export type FaultEffect =
  | { kind: 'toxic'; toxic: (typeof TOXIC_TYPES)[number]; stream: 'upstream' | 'downstream'; attributes: Record<string, number> }
  | { kind: 'proxy-down' }
  | { kind: 'signal'; signal: (typeof SIGNALS)[number] }
  /** Packet loss in the run's network namespace (sealed runs only). */
  | { kind: 'loss'; percent: number };

export interface FaultPlan {
  name: string;
  effect: FaultEffect;
  start: Trigger;
  end?: Trigger;
}
