// What a lab gives `chaoslab chaos` (harness/chaos/): the layers a random fault schedule may draw
// from, as a fast-check arbitrary of plain data, and the scenario file a schedule stands for.
// A schedule is data, never code: fast-check shrinks it (fewer steps, smaller numbers), and any
// schedule, however small, must make a valid scenario that a correct consumer passes.

import type { Arbitrary } from 'fast-check';

export interface ChaosLayer {
  name: string;
  /** A few words: what it does to the consumer. */
  what: string;
  /** Needs a sealed run (packet loss, small socket buffers): left out of the scenario elsewhere. */
  sealedOnly?: boolean;
}

/** Where the schedule runs: sealed-only layers are drawn everywhere, so that one seed draws the same schedules on every machine, and left out where runs are not sealed. */
export interface ChaosWhere {
  sealed: boolean;
}

export interface ChaosModel<Schedule = unknown> {
  /** Every layer a schedule may draw from (docs, `chaoslab chaos --help`, the batch overview). */
  layers: readonly ChaosLayer[];
  /** Draws schedules: the same on every machine for one seed. */
  schedules(): Arbitrary<Schedule>;
  /**
   * The scenario file for a schedule, without name, protocol and chaos (the core adds them). A
   * `description`, if any, is appended to the core's (which says how the schedule was drawn).
   */
  scenario(schedule: Schedule, where: ChaosWhere): Record<string, unknown>;
  /** The schedule's fault steps in words, one per step, as they run here: its size, and what a repro's header lists. */
  steps(schedule: Schedule, where: ChaosWhere): string[];
  /** The layers (by `layers` name) the schedule draws on, as it runs here. */
  layersOf(schedule: Schedule, where: ChaosWhere): string[];
}
