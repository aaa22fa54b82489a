// The CHAOSLAB_FAULT grammar both labs share (harness/faults/plan-grammar.ts), through each lab's
// parser: the steps of a valid plan, and the exact reason for every way a plan can be wrong.
import t from 'tap';
import { parseFaultPlan as parseFeed } from '../../../harness/labs/feed/scenario/fault-plan.js';
import { parseFaultPlan as parseLedger } from '../../../harness/labs/ledger/scenario/fault-plan.js';

const reason = (result: { ok: true } | { ok: false; reason: string }): string | undefined => (result.ok ? undefined : result.reason);

t.test('valid plans: the steps, with each lab’s count', async (t) => {
  t.same(parseLedger('exit@ack:0,raise@apply:12'), {
    ok: true,
    steps: [
      { action: 'exit', point: 'ack', seq: 0 },
      { action: 'raise', point: 'apply', seq: 12 },
    ],
  });
  t.same(parseFeed('exit@apply:5,stop@commit:2'), {
    ok: true,
    steps: [
      { action: 'exit', point: 'apply', n: 5 },
      { action: 'stop', point: 'commit', n: 2 },
    ],
  });
});

t.test('every reason, in each lab’s words', async (t) => {
  for (const [plan, ledger, feed] of [
    ['', 'the plan is empty', 'the plan is empty (leave `fault` out for none)'],
    ['exit@ack :1', 'no spaces allowed', 'no spaces allowed'],
    ['exit@ack:1,', 'item 2 "": empty item (stray comma)', 'item 2 "": empty item (stray comma)'],
    ['exitack:1', 'missing "@<point>"', 'missing "@<point>"'],
    ['exit@ack', 'missing ":<seq>"', 'missing ":<n>"'],
    ['exit@ack:1:2', 'not <action>@<point>:<seq>', 'not <action>@<point>:<n>'],
    ['boom@ack:1', 'action must be exit|raise|stop (got "boom")', 'action must be exit|raise|stop (got "boom")'],
  ] as const) {
    t.equal(reason(parseLedger(plan)), ledger, `ledger: ${JSON.stringify(plan)}`);
    t.equal(reason(parseFeed(plan.replace('ack', 'apply'))), feed.replace('ack', 'apply'), `feed: ${JSON.stringify(plan)}`);
  }
  t.match(reason(parseLedger('exit@nowhere:1')), /^point must be .* \(got "nowhere"\)$/);
  t.equal(reason(parseLedger('exit@ack:01')), 'seq must be 0 or a number without sign or leading zeros (got "01")');
  t.equal(reason(parseFeed('exit@apply:0')), 'n must be a number >= 1 without sign or leading zeros (got "0"): hooks count from 1');
  t.equal(reason(parseLedger('exit@ack:1,exit@ack:x')), 'item 2 "exit@ack:x": seq must be 0 or a number without sign or leading zeros (got "x")');
});
