// What `chaoslab list` prints: whole summaries, wrapped under themselves, never cut.
import t from 'tap';
import { catalogueLines, wrapWords } from '../../../harness/catalogue/list-lines.js';
import { scenariosDir } from '../../../harness/base/paths.js';
import { listScenarios } from '../../../harness/catalogue/catalogue.js';

t.test('wrapWords breaks at spaces, keeps every word, and leaves a longer word whole', async (t) => {
  t.same(wrapWords('one two three four', 9), ['one two', 'three', 'four']);
  t.same(wrapWords('a verylongword b', 5), ['a', 'verylongword', 'b']);
  t.same(wrapWords('  spaced\n out  ', 20), ['spaced out']);
  t.same(wrapWords('', 10), ['']);
});

t.test('a summary with "e.g." is shown whole, its lines under its first', async (t) => {
  const description =
    'Instead of the 4th event the server sends its cursor unpadded (e.g. "1:13:2" for "1:00000000000013:0002"), which no longer compares as a string.';
  const lines = catalogueLines(
    [
      { name: 'feed-bad-frame', lab: 'feed', description },
      { name: 'gap', lab: 'ledger', description: 'A gap.' },
    ],
    60,
  );
  t.ok(
    lines.every((l) => l.length <= 60),
    lines.join('\n'),
  );
  t.match(lines[0], /^feed-bad-frame {2}\[feed\] Instead of/);
  t.ok(
    lines.slice(1, -1).every((l) => l.startsWith(' '.repeat(16)) && l[16] !== ' '),
    'continuations start under the summary',
  );
  t.equal(lines.at(-1), 'gap             [ledger] A gap.');
  t.equal(
    lines
      .slice(0, -1)
      .map((l, i) => (i === 0 ? l.slice(16).replace('[feed] ', '') : l.trim()))
      .join(' '),
    description,
    'every word of the summary, in order',
  );
});

t.test('one lab: no lab tags; too narrow: the summary under the name', async (t) => {
  t.same(catalogueLines([{ name: 'gap', lab: 'ledger', description: 'A gap in the stream.' }], 80), ['gap  A gap in the stream.']);
  t.same(catalogueLines([{ name: 'a-very-long-scenario-name', lab: 'ledger', description: 'Short words here.' }], 40), [
    'a-very-long-scenario-name',
    '    Short words here.',
  ]);
});

t.test('the real catalogue: every summary whole', async (t) => {
  const scenarios = listScenarios(scenariosDir);
  const text = catalogueLines(scenarios, 100).join('\n').replace(/\s+/g, ' ');
  for (const s of scenarios) if (!text.includes(s.description.replace(/\s+/g, ' '))) t.fail(`${s.name}: summary cut`);
  t.ok(
    catalogueLines(scenarios, 100).every((l) => l.length <= 100 || !l.trim().includes(' ')),
    'within the width',
  );
});
