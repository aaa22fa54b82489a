// The matrix runs a run that ended in a harness error again (nothing of the consumer was judged):
// only those runs, in a batch of their own, at most twice, the new result in the old one's place.
import t from 'tap';
import type { BatchItem } from '../../../harness/run/batch.js';
import type { RunResult } from '../../../harness/run/runner.js';
import { rerunHarnessErrors } from '../../../harness/commands/mutants-action.js';

const item = (label: string) => ({ label }) as unknown as BatchItem;
const result = (status: RunResult['status'], runDir: string) => ({ status, runDir }) as unknown as RunResult;
const options = { jobs: 1, cwd: '/', reportsDir: '/nowhere' };

t.test('only harness errors are run again, and their new results take their places', async (t) => {
  const items = [item('a'), item('b'), item('c')];
  const results = [result('pass', 'a1'), result('error', 'b1'), result('fail', 'c1')];
  const batches: string[][] = [];
  await rerunHarnessErrors('m', items, results, options, new AbortController().signal, async (name, again) => {
    batches.push([name, ...again.map((i) => i.label)]);
    return { runs: again.map((i) => ({ item: i, result: result('pass', `${i.label}2`) })) };
  });
  t.same(batches, [['m-rerun-1', 'b']], 'one batch, of the errored run alone');
  t.same(
    results.map((r) => `${r.status} ${r.runDir}`),
    ['pass a1', 'pass b2', 'fail c1'],
    'a failure stays a failure; the error is replaced',
  );
});

t.test('a run that errs every time is tried twice more and stays an error', async (t) => {
  const results = [result('error', 'x1')];
  let rounds = 0;
  await rerunHarnessErrors('m', [item('x')], results, options, new AbortController().signal, async (_name, again) => {
    rounds++;
    return { runs: again.map((i) => ({ item: i, result: result('error', `x${rounds + 1}`) })) };
  });
  t.equal(rounds, 2);
  t.equal(results[0]!.status, 'error');
  t.equal(results[0]!.runDir, 'x3', 'the last attempt is the one the matrix shows');
});

t.test('nothing is run again once the matrix is interrupted', async (t) => {
  const stop = new AbortController();
  stop.abort();
  let called = false;
  await rerunHarnessErrors('m', [item('x')], [result('error', 'x1')], options, stop.signal, async () => {
    called = true;
    return { runs: [] };
  });
  t.notOk(called);
});
