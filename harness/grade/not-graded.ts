// Why a submission was not graded, as data: the score (./score.ts) carries it, the status
// (./status.ts) and every class output show it.

/** Why a submission was not graded, as a word a spreadsheet filter can use (docs/grading.md, "Class outputs"). */
export const NOT_GRADED_KINDS = ['manifest', 'wrong-lab', 'files', 'build-failed', 'cannot-start', 'harness-error', 'interrupted'] as const;
export type NotGradedKind = (typeof NOT_GRADED_KINDS)[number];

export interface NotGraded {
  kind: NotGradedKind;
  /** In words, naming the file or run at fault. */
  reason: string;
}
