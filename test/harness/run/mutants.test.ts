// Which runs each size of the mutant matrix makes (harness/run/mutants.ts matrixItems), and the
// language and mutant filters, the server matrix's rows and matrix.md's two tables; the matrix's judgement itself is proven end to end by test/e2e/matrix.test.ts.
import t from 'tap';
import type { BatchItem } from '../../../harness/run/batch.js';
import { join, relative } from 'node:path';
import { projectRoot } from '../../../harness/base/paths.js';
import {
  consumersIn,
  consumersNamed,
  judgeRow,
  loadMatrixServers,
  type MatrixConsumer,
  matrixItems,
  mutantName,
  programOf,
  renderMatrixMarkdown,
  shownLabel,
} from '../../../harness/run/mutants.js';

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

t.test('catches: as killers, but each mutant only against its killer', async (t) => {
  const items = matrixItems(consumers, scenarios, 'catches', 'happy');
  t.same(runsOf(items, 'typescript'), ['happy', 'a', 'c'], 'the references as with killers');
  t.same(runsOf(items, 'm1 (python)'), ['a']);
  t.same(runsOf(items, 'm2 (typescript)'), ['c']);
  t.equal(items.length, 2 * 3 + 3);
});

t.test('a mutant row: a near miss only where its happy path ran; caught only for its reason', async (t) => {
  const cell = (scenario: string, status: 'pass' | 'fail', reasons: string[] = []) => ({ scenario, status, reason: reasons[0] ?? '', reasons, runDir: '/b/r' });
  const m1 = consumers[2]!;
  t.match(
    judgeRow(m1, [cell('a', 'fail', ['x marks it'])], 'happy'),
    { ok: true, note: 'caught by a: x marks it' },
    'no happy run (--catches): judged by its killer',
  );
  t.match(judgeRow(m1, [cell('happy', 'fail', ['lost 1']), cell('a', 'fail', ['x'])], 'happy'), { ok: false, note: 'not a near miss: fails happy (lost 1)' });
  t.match(judgeRow(m1, [cell('a', 'fail', ['other'])], 'happy'), { ok: false, note: /^caught by a, but not for its named reason/ });
  t.match(judgeRow(m1, [cell('a', 'pass')], 'happy'), { ok: false, note: 'SURVIVED a' });
  t.match(judgeRow(m1, [], 'happy'), { ok: false, note: 'its killer a was not run' });
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

t.test('the server matrix: the lab index of servers, each row marked server, its runs given --server', async (t) => {
  const dir = t.testdir({
    'index.yaml': [
      'references:',
      '  - { name: typescript, command: node dist/publisher/feed/server/main.js }',
      'mutants:',
      '  - { name: lose-it, languages: [typescript, python], killer: s-race, bug: b, reason: "lost \\\\d+" }',
      '',
    ].join('\n'),
  });
  const servers = loadMatrixServers({ server: { referenceCommand: 'x', mutantIndex: join(dir, 'index.yaml'), happyPath: 's-happy', testsServer: () => true } });
  const folder = relative(projectRoot, dir);
  t.same(
    servers.map((s) => [s.label, s.program, s.command]),
    [
      ['typescript', 'server', 'node dist/publisher/feed/server/main.js'],
      ['lose-it (typescript)', 'server', `node ${join('dist', folder, 'lose-it.js')}`],
      ['lose-it (python)', 'server', `python3 ${join(folder, 'lose-it.py')}`],
    ],
  );
  t.same(loadMatrixServers({}), [], 'a lab without a server under test has no server rows');
  const items = matrixItems(servers, ['s-happy', 's-race', 's-other'].map(scenario), 'quick', 's-happy');
  t.match(items[0], { serverCommand: 'node dist/publisher/feed/server/main.js', label: 'server typescript × s-happy' });
  t.notOk('consumerCommand' in items[0]!, 'a server row gives no consumer');
  t.same(runsOf(items, 'lose-it (python)'), ['s-happy', 's-race']);
  t.equal(programOf(servers[0]!), 'server');
  t.equal(programOf(consumers[0]!), 'consumer', 'a row without program is a consumer');
  t.equal(shownLabel(servers[2]!), 'server lose-it (python)');
  t.equal(mutantName(servers[2]!), 'lose-it');
});

t.test('the server index: a mistake names the file and the entry', async (t) => {
  const dir = t.testdir({ 'index.yaml': 'mutants:\n  - { name: m, languages: [go], killer: k, reason: r }\n' });
  t.throws(
    () => loadMatrixServers({ server: { referenceCommand: 'x', mutantIndex: join(dir, 'index.yaml'), happyPath: 'h', testsServer: () => true } }),
    /index\.yaml: mutants\[0\] \(m\): unknown language "go"/,
  );
  const also = t.testdir({
    'index.yaml': 'mutants:\n  - { name: m, languages: [python], killer: k, reason: r, also_caught_by: [{ killer: storm }] }\n',
  });
  t.throws(
    () => loadMatrixServers({ server: { referenceCommand: 'x', mutantIndex: join(also, 'index.yaml'), happyPath: 'h', testsServer: () => true } }),
    /index\.yaml: mutants\[0\] \(m\)\.also_caught_by\[0\]: needs the reason it must be caught for/,
  );
});

t.test('the server index: a statistical killer (also_caught_by) is kept with its reason', async (t) => {
  const dir = t.testdir({
    'index.yaml': 'mutants:\n  - { name: m, languages: [python], killer: k, reason: r, also_caught_by: [{ killer: storm, reason: "lost \\\\d+" }] }\n',
  });
  const [mutant] = loadMatrixServers({ server: { referenceCommand: 'x', mutantIndex: join(dir, 'index.yaml'), happyPath: 'h', testsServer: () => true } });
  t.same(mutant?.alsoCaughtBy, [{ killer: 'storm', reason: /lost \d+/ }]);
  t.equal(mutant?.killer, 'k', 'the designated killer stays the matrix’s');
});

t.test('matrix.md: the consumer and the server matrix are two tables, each with its own columns', async (t) => {
  const cell = (scenario: string, status: 'pass' | 'fail') => ({ scenario, status, reason: status === 'fail' ? 'lost 3' : '', reasons: [], runDir: '/b/r' });
  const server = { label: 'typescript', kind: 'reference' as const, language: 'typescript', command: 's', program: 'server' as const };
  const rows = [judgeRow(consumers[0]!, [cell('happy', 'pass')], 'happy'), judgeRow(server, [cell('s-happy', 'pass'), cell('s-race', 'fail')], 's-happy')];
  const md = renderMatrixMarkdown(rows, ['happy', 's-happy', 's-race'], '/b');
  t.match(md, /## Matrix\n\n\| consumer \| happy \|\n/);
  t.match(md, /## Server matrix\n\n\| server \| s-happy \| s-race \|\n\|---\|---\|---\|\n\| typescript \| ✓ \| ✗ \|/);
  t.match(md, /\| server typescript \| \*\*PROBLEM\*\* \| FAILS s-race: lost 3 \|/);
  t.match(md, /- server typescript × s-race: lost 3/);
});
