// The points of a lab's traffic where faults start and end, as the core's scenario schema and the
// fault engine see them; each lab declares its own (Lab.faultPoints in ../lab-api/lab.ts).

/** A point in a lab's traffic where a fault can start (or end): `before_event: 7`. */
export interface FaultPointSpec {
  description: string;
  /** `seq`: a position of the script (checked against it); `ordinal`: the n-th occurrence, n ≥ 1. */
  value: 'seq' | 'ordinal';
  /** May also end a fault. */
  canEnd: boolean;
  /** `random_events` draws its positions at this point (one point per lab at most). */
  random?: boolean;
  /** The point in words, for the journal ("before EVENT 7"). */
  describe(value: number): string;
}
