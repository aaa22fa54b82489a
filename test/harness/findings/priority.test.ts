// The order of a verdict's findings and its headline (harness/findings/priority.ts): the table
// decides, the checker's order breaks ties, an unlisted code is a symptom, and the harness's own
// error still heads a verdict.
import t from 'tap';
import { CAUSE, CONSEQUENCE, failHeadline, priorityOf, rankFindings, SYMPTOM } from '../../../harness/findings/priority.js';
import type { Finding } from '../../../harness/findings/verdict.js';

const f = (code: string, text = code): Finding => ({ code, text });
const table = { cause: CAUSE, later: CONSEQUENCE, first: CAUSE + 1 };

t.test('the table orders, the checker breaks ties, an unlisted code sits between', async (t) => {
  const found = [f('later'), f('seen-a'), f('cause'), f('seen-b'), f('first')];
  t.same(
    rankFindings(found, table).map((x) => x.code),
    ['first', 'cause', 'seen-a', 'seen-b', 'later'],
  );
  t.equal(priorityOf('unlisted', table), SYMPTOM);
  t.same(rankFindings([], table), []);
  t.same(
    found.map((x) => x.code),
    ['later', 'seen-a', 'cause', 'seen-b', 'first'],
    'the input is left as it was',
  );
});

t.test('the headline: the harness error first, else the leading finding', async (t) => {
  const findings = rankFindings([f('later', 'a consequence'), f('cause', 'the cause')], table);
  t.equal(failHeadline({ findings, harnessErrors: [] }), 'the cause');
  t.equal(failHeadline({ findings, harnessErrors: [f('harness-error', 'harness: broke')] }), 'harness: broke');
  t.throws(() => failHeadline({ findings: [], harnessErrors: [] }), /needs a finding or a harness error/);
});
