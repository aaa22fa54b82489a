// The ledger lab's finding priorities: which finding leads its verdict and headline
// (findings/priority.ts). A cause names the student's mistake and the contract line it breaks;
// a consequence is what any of several causes leaves behind. Codes not listed are symptoms.

import { CAUSE, CONSEQUENCE, type FindingPriorities } from '../../findings/priority.js';

export const LEDGER_PRIORITIES: FindingPriorities = {
  // The scenario's point when it sends a broken line.
  'malformed-applied': CAUSE + 2,
  'malformed-read-on': CAUSE + 2,
  'malformed-not-closed': CAUSE + 2,
  // Opening the store reset it: why the RESUME that follows is wrong.
  'checkpoint-reset': CAUSE + 1,
  'ack-before-commit': CAUSE,
  'conflict-acknowledged': CAUSE,
  'conflict-read-on': CAUSE,
  'applied-twice': CAUSE,
  'duplicate-not-acked': CAUSE,
  'event-not-acked': CAUSE,
  'row-beyond-cursor': CAUSE,
  'gap-skipped': CAUSE,
  'resume-not-durable': CAUSE,
  'uncommitted-visible': CAUSE,
  'commit-not-visible': CAUSE,
  'broken-ack-promise': CAUSE,
  'error-swallowed': CAUSE,
  'line-not-bounded': CAUSE,
  'missing-ack': CONSEQUENCE,
  'wrong-cursor': CONSEQUENCE,
  'wrong-total': CONSEQUENCE,
  'differs-from-control': CONSEQUENCE,
  'never-ended': CONSEQUENCE,
};
