// The ledger lab's finding priorities (harness/labs/ledger/priorities.ts): for each mutant's
// killer, the findings it produced (recorded from real runs), the specific cause leads over every
// generic finding beside it; and every code the table names is one the lab's checker emits.
import t from 'tap';
import { LEDGER_PRIORITIES } from '../../../../harness/labs/ledger/priorities.js';
import { type CausePairs, causesLead, codesAreEmitted } from '../../../helpers/priorities.js';

/** Mutant → [its cause, the generic findings its killer also reported]. */
const PAIRS: CausePairs = {
  'ack-before-commit': ['ack-before-commit', ['missing-ack']],
  'split-commit': [
    'row-beyond-cursor',
    ['inconsistent-store', 'missing-ack', 'exit-nonzero', 'beyond-cursor', 'wrong-cursor', 'wrong-total', 'differs-from-control'],
  ],
  'reset-on-open': [
    'checkpoint-reset',
    ['inconsistent-store', 'resume-not-durable', 'wrong-resume', 'missing-ack', 'total-not-ledger', 'differs-from-control'],
  ],
  'resume-from-scratch': ['resume-not-durable', ['wrong-resume', 'unexpected-ack']],
  'no-dedupe': ['applied-twice', ['inconsistent-store', 'wrong-total', 'differs-from-control']],
  'no-duplicate-ack': ['duplicate-not-acked', ['missing-ack']],
  'conflict-as-duplicate': ['conflict-acknowledged', ['wrong-closer', 'unexpected-ack', 'wrong-resume', 'missing-ack', 'exit-zero']],
  'gap-skip': ['gap-skipped', ['inconsistent-store', 'wrong-closer', 'unexpected-ack', 'missing-below-cursor', 'wrong-total', 'differs-from-control']],
  'lenient-parser': ['malformed-applied', ['unexpected-ack', 'wrong-resume', 'missing-ack', 'exit-zero']],
  'continue-after-malformed': ['malformed-read-on', ['unexpected-ack', 'wrong-resume', 'missing-ack', 'exit-zero']],
  'unbounded-line': ['line-not-bounded', ['deadline']],
  'swallow-error': ['error-swallowed', ['missing-ack']],
};

t.test('each mutant: the specific cause leads, in whatever order the checker found them', async (t) => causesLead(t, PAIRS, LEDGER_PRIORITIES));

t.test("every code in the table is one the lab's checker emits", async (t) => {
  codesAreEmitted(t, LEDGER_PRIORITIES, ['harness/labs/ledger/check']);
});
