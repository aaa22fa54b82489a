// The feed lab's finding priorities (harness/labs/feed/priorities.ts): for each mutant's killer,
// the findings it produced (recorded from real runs), the specific cause leads over every generic
// finding beside it; and every code the table names is one the lab's checkers emit.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { rankFindings } from '../../../../harness/findings/priority.js';
import { FEED_PRIORITIES } from '../../../../harness/labs/feed/priorities.js';

const ROOT = join(import.meta.dirname, '../../../..');

/** Mutant → [its cause, the generic findings its killer also reported]. */
const PAIRS: Record<string, [string, string[]]> = {
  'ignore-revoke': ['revoked-kept', ['not-converged', 'wrong-balance']],
  'revoke-keeps-balances': ['revoke-kept-balance', ['inconsistent-store', 'not-converged']],
  'no-dedupe': ['applied-twice', ['inconsistent-store', 'not-converged']],
  'float-amounts': ['imprecise-balance', ['inconsistent-store', 'not-converged']],
  'stale-cursor-resubscribe': ['snapshot-needed', ['not-converged', 'missing-events', 'wrong-balance', 'wrong-cursor']],
  'number-amount-accepted': ['bad-frame-applied', ['not-converged', 'wrong-content', 'imprecise-balance', 'wrong-balance']],
  'split-commit': ['uncommitted-visible', ['inconsistent-store']],
  'always-null-subscribe': ['unneeded-snapshot', ['not-converged', 'missing-events']],
};

t.test('each mutant: the specific cause leads, in whatever order the checker found them', async (t) => {
  for (const [mutant, [cause, generic]] of Object.entries(PAIRS))
    for (const code of generic) {
      const ranked = rankFindings(
        [code, cause].map((c) => ({ code: c, text: c })),
        FEED_PRIORITIES,
      );
      t.equal(ranked[0]!.code, cause, `${mutant}: ${cause} before ${code}`);
    }
});

t.test("every code in the table is one the lab's checkers emit", async (t) => {
  const source = ['check', 'storm']
    .flatMap((sub) => readdirSync(join(ROOT, 'harness', 'labs', 'feed', sub)).map((f) => readFileSync(join(ROOT, 'harness', 'labs', 'feed', sub, f), 'utf8')))
    .join('\n');
  for (const code of Object.keys(FEED_PRIORITIES)) t.ok(source.includes(`'${code}'`), code);
});
