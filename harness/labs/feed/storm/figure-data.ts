// What the storm's checker hands its picture (storm/figure.ts): its own module, so that the
// reports' vocabulary, loaded by every command, does not load the checker.

export const STORM_FIGURE = 'feed-storm';

/** The data behind the storm's picture (storm/figure.ts draws it). */
export interface StormFigureData {
  binMs: number;
  processes: number;
  /** Attempts per bin and process, sparse: [bin, process index (0-based), count]. */
  cells: [number, number, number][];
  bins: number;
  /** Bins where a restart began. */
  restarts: number[];
  crowd: { clients: number; spanMs: number; jittered: number[]; unjittered: number[]; peakJittered: number; peakUnjittered: number };
}
