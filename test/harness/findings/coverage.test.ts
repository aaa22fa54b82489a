import t from 'tap';
import { COVERAGE_BOUND, coverageRows, metShare, onlyUntested, UNTESTED, withCoverage } from '../../../harness/findings/coverage.js';
import type { Verdict } from '../../../harness/findings/verdict.js';

const verdict = (over: Partial<Verdict>): Verdict => ({
  status: 'pass',
  headline: 'the consumer converged',
  findings: [],
  harnessErrors: [],
  diff: [],
  state: { id: 'state', title: 'state', columns: [], rows: [] },
  tables: [],
  ...over,
});
const met = { fault: 'cut-1', kind: 'cut', took: true, how: 'the cut at 1.2 s ended connection 2 mid-stream' };
const missed = { fault: 'reorg-40', kind: 'reorganisation', took: false, how: 'the reorganisation at block 40 reached no consumer' };

t.test('a pass whose faults all took effect stays a pass, with the faults table', async (t) => {
  const v = withCoverage(verdict({ coverage: [met] }));
  t.equal(v.status, 'pass');
  t.same(v.harnessErrors, []);
  t.same(
    v.tables.map((x) => x.id),
    ['coverage'],
  );
  t.same(v.tables[0]!.rows[0]!.cells, ['cut', 'yes', met.how]);
});

t.test('a pass with a fault that took no effect is an ERROR that says which and why, never a PASS', async (t) => {
  const v = withCoverage(verdict({ coverage: [met, missed] }));
  t.equal(v.status, 'error');
  t.equal(v.harnessErrors.length, 1);
  t.equal(v.harnessErrors[0]!.code, UNTESTED);
  t.match(v.headline, /^untested: the reorganisation at block 40 reached no consumer \(fault "reorg-40"\)/);
  t.ok(onlyUntested(v));
  t.equal(v.tables[0]!.rows[1]!.ok, false);
});

t.test('a failing run keeps its findings: an unmet fault is only data there', async (t) => {
  const finding = { code: 'lost-event', text: 'the consumer lost block 12' };
  const v = withCoverage(verdict({ status: 'fail', findings: [finding], coverage: [missed] }));
  t.equal(v.status, 'fail');
  t.same(v.findings, [finding]);
  t.same(v.harnessErrors, []);
  t.notOk(onlyUntested(v));
});

t.test('another harness error is not "untested"', async (t) => {
  t.notOk(onlyUntested({ status: 'error', harnessErrors: [{ code: 'harness-error', text: 'x' }] }));
  t.notOk(
    onlyUntested({
      status: 'error',
      harnessErrors: [
        { code: UNTESTED, text: 'x' },
        { code: 'harness-error', text: 'y' },
      ],
    }),
  );
});

t.test('coverage rows count faults, and the runs that drew and met each kind', async (t) => {
  const rows = coverageRows([[met, { ...met, fault: 'cut-2', took: false }], [missed], [{ ...missed, took: true }], []]);
  t.same(rows, [
    { kind: 'cut', drawn: 2, tookEffect: 1, runsDrawn: 1, runsMet: 1 },
    { kind: 'reorganisation', drawn: 2, tookEffect: 1, runsDrawn: 2, runsMet: 1 },
  ]);
  t.equal(metShare(rows[1]!), 0.5);
  t.ok(metShare(rows[1]!) < COVERAGE_BOUND);
  t.equal(metShare(rows[0]!), 1);
});
