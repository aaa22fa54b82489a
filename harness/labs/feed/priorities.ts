// The feed lab's finding priorities: which finding leads a consumer's verdict and headline
// (findings/priority.ts), the restart storm's included (its codes are all symptoms, in the
// checker's order: a process that died, then the backoff's statistics). A cause names the student's mistake and
// the contract line it breaks; a consequence is what any of several causes leaves behind (a
// store that never reached the chain's end). Codes not listed are symptoms.

import { CAUSE, CONSEQUENCE, type FindingPriorities } from '../../findings/priority.js';

export const FEED_PRIORITIES: FindingPriorities = {
  // The scenario's point when it sends a bad frame.
  'bad-frame-applied': CAUSE + 2,
  'unknown-op-applied': CAUSE + 2,
  'bad-frame-read-on': CAUSE + 2,
  'bad-frame-not-closed': CAUSE + 2,
  'unknown-op-refused': CAUSE + 2,
  // A hook's read shows the transaction itself.
  'uncommitted-visible': CAUSE + 1,
  'commit-not-visible': CAUSE + 1,
  'uncommitted-survived': CAUSE + 1,
  'commit-not-durable': CAUSE + 1,
  'no-subscribe': CAUSE,
  'invalid-subscribe': CAUSE,
  'storm-subscribe-unanswered': CAUSE,
  'wrong-subscribe': CAUSE,
  'unneeded-snapshot': CAUSE,
  'snapshot-needed': CAUSE,
  'not-durable-cursor': CAUSE,
  'wrong-subscribe-hash': CAUSE,
  'half-open-kept': CAUSE,
  'ping-unanswered': CAUSE,
  'revoked-kept': CAUSE,
  'revoke-kept-balance': CAUSE,
  'applied-twice': CAUSE,
  'imprecise-balance': CAUSE,
  'not-converged': CONSEQUENCE,
  'missing-events': CONSEQUENCE,
  'wrong-cursor': CONSEQUENCE,
  'restarts-exhausted': CONSEQUENCE,
  'process-count': CONSEQUENCE,
  'never-ended': CONSEQUENCE,
};
