// Which runs each size of the mutant matrix makes (harness/run/mutants.ts matrixItems), and the
// language and mutant filters; the matrix's judgement itself is proven end to end by test/e2e/matrix.test.ts.
import t from 'tap';
import type { BatchItem } from '../../../harness/run/batch.js';
import { consumersIn, consumersNamed, type MatrixConsumer, matrixItems, mutantName } from '../../../harness/run/mutants.js';

const scenario = (name: string) => ({ name }) as BatchItem['scenario'];
const scenarios = ['happy', 'a', 'b', 'c', 'unjudged'].map(scenario);
const consumers: MatrixConsumer[] = [
  { label: 'typescript', kind: 'reference', language: 'typescript', command: 'ts-ref' },
  { label: 'python', kind: 'reference', language: 'python', command: 'py-ref' },
  { label: 'm1 (typescript)', kind: 'mutant', language: 'typescript', command: 'ts-m1', killer: 'a', reason: /x/ },
  { label: 'm1 (python)', kind: 'mutant', language: 'python', command: 'py-m1', killer: 'a', reason: /x/ },
  { label: 'm2 (typescript)', kind: 'mutant', language: 'typescript', command: 'ts-m2', killer: 'c', reason: /y/ },
];
const runsOf = (items: ReturnType<typeof matrixItems>, label: string) => items.filter((i) => i.consumer.label === label).map((i) => i.scenario.name);

t.test('full: every consumer against every scenario', async (t) => {
  const items = matrixItems(consumers, scenarios, 'full', 'happy');
  t.equal(items.length, consumers.length * scenarios.length);
  t.same(runsOf(items, 'm2 (typescript)'), ['happy', 'a', 'b', 'c', 'unjudged']);
});

t.test('quick: references everywhere, mutants on the happy path and their killer', async (t) => {
  const items = matrixItems(consumers, scenarios, 'quick', 'happy');
  t.same(runsOf(items, 'python'), ['happy', 'a', 'b', 'c', 'unjudged']);
  t.same(runsOf(items, 'm1 (python)'), ['happy', 'a']);
  t.same(runsOf(items, 'm2 (typescript)'), ['happy', 'c']);
  t.equal(items.length, 2 * 5 + 3 * 2);
});

t.test('killers: references only where a judgement is made; the command and label go with each run', async (t) => {
  const items = matrixItems(consumers, scenarios, 'killers', 'happy');
  t.same(runsOf(items, 'typescript'), ['happy', 'a', 'c'], 'b and unjudged kill nothing: not run');
  t.same(runsOf(items, 'm1 (typescript)'), ['happy', 'a']);
  t.match(items[0], { consumerCommand: 'ts-ref', label: 'typescript × happy' });
  const tsOnly = consumersIn(consumers, 'typescript');
  t.same(
    tsOnly.map((c) => c.label),
    ['typescript', 'm1 (typescript)', 'm2 (typescript)'],
  );
  t.same(runsOf(matrixItems(tsOnly, scenarios, 'killers', 'happy'), 'typescript'), ['happy', 'a', 'c']);
  t.equal(consumersIn(consumers, undefined), consumers, 'no language: everyone');
});

t.test('--mutant: the references and the named mutants in every language; an unknown name is named', async (t) => {
  t.same(
    consumersNamed(consumers, ['m1']).map((c) => c.label),
    ['typescript', 'python', 'm1 (typescript)', 'm1 (python)'],
  );
  t.equal(mutantName(consumers[4]!), 'm2');
  t.equal(mutantName(consumers[0]!), undefined);
  t.equal(consumersNamed(consumers, undefined), consumers);
  t.throws(() => consumersNamed(consumers, ['m1', 'm9']), /no mutant m9; mutants: m1, m2/);
});
