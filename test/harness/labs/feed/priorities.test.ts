// The feed lab's finding priorities (harness/labs/feed/priorities.ts): for each mutant's killer,
// the findings it produced (recorded from real runs), the specific cause leads over every generic
// finding beside it; and every code the table names is one the lab's checkers emit.
import t from 'tap';
import { FEED_PRIORITIES } from '../../../../harness/labs/feed/priorities.js';
import { type CausePairs, causesLead, codesAreEmitted } from '../../../helpers/priorities.js';

/** Mutant → [its cause, the generic findings its killer also reported]. */
const PAIRS: CausePairs = {
  'ignore-revoke': ['revoked-kept', ['not-converged', 'wrong-balance']],
  'revoke-keeps-balances': ['revoke-kept-balance', ['inconsistent-store', 'not-converged']],
  'no-dedupe': ['applied-twice', ['inconsistent-store', 'not-converged']],
  'float-amounts': ['imprecise-balance', ['inconsistent-store', 'not-converged']],
  'stale-cursor-resubscribe': ['snapshot-needed', ['not-converged', 'missing-events', 'wrong-balance', 'wrong-cursor']],
  'number-amount-accepted': ['bad-frame-applied', ['not-converged', 'wrong-content', 'imprecise-balance', 'wrong-balance']],
  'split-commit': ['uncommitted-visible', ['inconsistent-store']],
  'always-null-subscribe': ['unneeded-snapshot', ['not-converged', 'missing-events']],
};

t.test('each mutant: the specific cause leads, in whatever order the checker found them', async (t) => causesLead(t, PAIRS, FEED_PRIORITIES));

t.test("every code in the table is one the lab's checkers emit", async (t) => {
  codesAreEmitted(t, FEED_PRIORITIES, ['harness/labs/feed/check', 'harness/labs/feed/storm']);
});
