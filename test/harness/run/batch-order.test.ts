// A batch starts its longest scripted runs first (the feed lab's storm, then its slow scenes), and
// everything bound by the CPU after them in item order: a long run started last would run alone
// while the other jobs stand idle. Its results and reports keep item order.
import { join } from 'node:path';
import t from 'tap';
import { loadScenario } from '../../../harness/catalogue/load.js';
import { runBatch, startOrder } from '../../../harness/run/batch.js';

const root = join(import.meta.dirname, '../../..');
const item = (lab: string, name: string) => ({ scenario: loadScenario(join(root, 'scenarios', lab, `${name}.yaml`)), label: name });

t.test('the longest script first; ties (the ledger lab, a bad environment) in item order', async (t) => {
  const items = [
    item('ledger', 'ack-crash'),
    item('feed', 'feed-happy-path'),
    item('feed', 'feed-bad-environment-port'),
    item('feed', 'feed-restart-storm'),
    item('ledger', 'happy-path'),
    item('feed', 'feed-acceptance'),
  ];
  t.same(
    startOrder(items).map((i) => items[i]!.label),
    ['feed-restart-storm', 'feed-acceptance', 'feed-happy-path', 'ack-crash', 'feed-bad-environment-port', 'happy-path'],
  );
});

t.test('a batch of one lab bound by the CPU keeps its order', async (t) => {
  const items = ['happy-path', 'ack-crash', 'ack-lost'].map((name) => item('ledger', name));
  t.same(startOrder(items), [0, 1, 2]);
});

t.test('a batch starts the longer script first, counts its starts in that order, and keeps item order in its results', async (t) => {
  const items = [item('ledger', 'happy-path'), item('feed', 'feed-happy-path')];
  const started: string[] = [];
  const { runs, notStarted } = await runBatch('order', items, {
    jobs: 1,
    cwd: root,
    reportsDir: t.testdir(),
    seal: 'off',
    onStart: (batchItem, nth, total) => started.push(`${nth + 1}/${total} ${batchItem.label}`),
  });
  t.same(started, ['1/2 feed-happy-path', '2/2 happy-path']);
  t.same(
    runs.map(({ item, result }) => `${item.label} ${result.status}`),
    ['happy-path pass', 'feed-happy-path pass'],
  );
  t.same(notStarted, []);
});
