// scripts/check-doc-links.mjs (make test runs it here): every relative link of the project's
// Markdown names a file that exists and, with an anchor, a heading of it as GitHub spells anchors.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { anchors, slug } from '../../scripts/markdown.mjs';
import { brokenLinks } from '../../scripts/check-doc-links.mjs';

const run = promisify(execFile);

t.test("the project's README, docs and contracts have no broken link", async (t) => {
  t.same(brokenLinks(process.cwd()), []);
});

t.test('GitHub anchors: punctuation dropped, spaces as hyphens, Japanese kept, repeats numbered', async (t) => {
  t.equal(slug('1. How chaoslab starts your consumer'), '1-how-chaoslab-starts-your-consumer');
  t.equal(slug('Fault hooks (`CHAOSLAB_FAULT`)'), 'fault-hooks-chaoslab_fault');
  t.equal(slug('2. ワイヤ：TCP 上の NDJSON'), '2-ワイヤtcp-上の-ndjson');
  t.same([...anchors('# A\n## B\n```\n## C\n```\n## B\n<a id="here"></a>\n')], ['a', 'b', 'b-1', 'here']);
});

t.test('a missing file, a missing anchor and a link out of the project are reported with file and line', async (t) => {
  const root = t.testdir({
    'README.md': [
      '# Top',
      '[ok](docs/a.md#second-part) [web](https://example.com/x.md) [self](#top)',
      '`[not a link](nowhere.md)`',
      '[gone](docs/gone.md)',
      '[bad anchor](docs/a.md#third)',
      '[out](../elsewhere.md)',
      '',
    ].join('\n'),
    docs: { 'a.md': '# A\n\n## Second part\n\n[back](../README.md#top)\n' },
  });
  t.same(
    brokenLinks(root).map((b) => `${b.file}:${b.line}: ${b.target}: ${b.why}`),
    [
      'README.md:4: docs/gone.md: no such file',
      'README.md:5: docs/a.md#third: no heading with the anchor #third in docs/a.md',
      'README.md:6: ../elsewhere.md: points outside the project',
    ],
  );
  const cli = await run(process.execPath, [resolve('scripts/check-doc-links.mjs'), root]).catch((e: { code: number; stdout: string }) => e);
  t.equal((cli as { code?: number }).code, 1, 'the script exits 1');
  t.match((cli as { stdout: string }).stdout, '3 broken links');
});
