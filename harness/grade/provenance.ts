// What makes a grade line reproducible: which chaoslab judged it, with which scenarios and seeds,
// which files of the submission, and the command that replays it on a staff machine. Computed
// once per submission by the grader; every output (results.json, grades.csv, the staff page)
// renders it, none recomputes it.

export interface Provenance {
  /** chaoslab's version and, when known, its commit (e.g. "0.1.0 (e656075)"). */
  chaoslab: string;
  lab: string;
  /** sha256 of the rubric and every scenario file it grades with, in rubric order. */
  scenarioSetHash: string;
  /** sha256 of the submission's files (relative paths and contents); absent for `grade --consumer`. */
  submissionHash?: string;
  /** The seeds each scenario's draws use, by scenario name (empty when a scenario draws nothing). */
  seeds: Record<string, number[]>;
  /** The command that grades this submission again, as staff type it. */
  replay: string;
}
