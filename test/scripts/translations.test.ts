// scripts/translations.mjs (make translations-check; make test runs it here): each Japanese page
// names the SHA-256 of every English section it translates, and the check fails naming the file
// and the section when the English changed without the translation; `stamp` records the new hash.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { sections } from '../../scripts/markdown.mjs';
import { checkTranslations, sectionHash, stamp } from '../../scripts/translations.mjs';

const run = promisify(execFile);
const SCRIPT = resolve('scripts/translations.mjs');

async function check(root: string): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [SCRIPT, 'check', root]);
    return { code: 0, stdout };
  } catch (e) {
    const err = e as { code: number; stdout: string };
    return { code: err.code, stdout: err.stdout };
  }
}

// The pages issue 32 asks for, each linked from its English page and back.
const PAGES: Array<[string, string]> = [
  ['README.ja.md', 'README.md'],
  ['consumer/ledger/CONTRACT.ja.md', 'consumer/ledger/CONTRACT.md'],
  ['consumer/feed/CONTRACT.ja.md', 'consumer/feed/CONTRACT.md'],
  ['publisher/feed/CONTRACT.ja.md', 'publisher/feed/CONTRACT.md'],
];

t.test("the project's translations are in step with their English sources", async (t) => {
  const { files, problems } = checkTranslations(process.cwd());
  t.same(problems, [], 'every translated section is stamped with its source section as it is now');
  for (const [ja, en] of PAGES) {
    t.ok(files.includes(ja), `${ja} is checked`);
    const base = (p: string): string => p.split('/').at(-1) as string;
    t.match(readFileSync(en, 'utf8'), `](${base(ja)})`, `${en} links to ${ja}`);
    t.match(readFileSync(ja, 'utf8'), `](${base(en)})`, `${ja} links back to ${en}`);
  }
});

const english = ['# Title', '', 'Intro.', '', '## One', '', 'First.', '', '```sh', '## not a heading', '```', '', '## Two', '', 'Second.', ''].join('\n');
const hashOf = (name: string): string => sectionHash(sections(english).find((s) => s.name === name)?.text ?? '');
const japanese = (one: string): string =>
  [
    `<!-- source: PAGE.md "(intro)" sha256:${hashOf('(intro)')} -->`,
    '# 題名 ([English](PAGE.md))',
    `<!-- source: PAGE.md "## One" sha256:${one} -->`,
    '## 一',
    '<!-- source: PAGE.md "## Two" not translated -->',
    '',
  ].join('\n');

t.test('sections split at ## headings outside code fences', async (t) => {
  t.same(
    sections(english).map((s) => s.name),
    ['(intro)', 'One', 'Two'],
  );
  t.match(sections(english)[1]?.text ?? '', '## not a heading', 'a fenced line stays in its section');
});

t.test('a changed English section fails the check, naming the file and the section, until it is stamped', async (t) => {
  const root = t.testdir({ 'PAGE.md': english, 'PAGE.ja.md': japanese(hashOf('One')) });
  const clean = await check(root);
  t.equal(clean.code, 0, clean.stdout);
  t.match(clean.stdout, '1 translations in step');

  writeFileSync(join(root, 'PAGE.md'), english.replace('First.', 'First, changed.').replace('Second.', 'Second, changed.'));
  const stale = await check(root);
  t.equal(stale.code, 1);
  t.match(stale.stdout, /PAGE\.ja\.md:3: section "One": PAGE\.md changed this section since it was translated/);
  t.notMatch(stale.stdout, 'section "Two"', 'a section left out on purpose is not checked');
  t.notMatch(stale.stdout, '(intro)', 'an unchanged section passes');

  t.same(stamp(join(root, 'PAGE.ja.md'), ['One']), ['One']);
  t.equal((await check(root)).code, 0, 'stamped after re-translating: in step again');
});

t.test('a new or removed English section, an unstamped part and a missing source each fail', async (t) => {
  const root = t.testdir({
    'PAGE.md': `${english}\n## Three\n\nNew.\n`,
    'PAGE.ja.md': japanese(hashOf('One')),
    'OTHER.ja.md': '<!-- source: GONE.md "(intro)" sha256:? -->\n',
    'NONE.ja.md': '# 何もない\n',
    'LATE.ja.md': `${japanese('?')}<!-- source: PAGE.md "## Three" sha256:? -->\n<!-- source: PAGE.md "## Four" not translated -->\n`,
  });
  const { code, stdout } = await check(root);
  t.equal(code, 1);
  t.match(stdout, 'PAGE.ja.md: section "Three": PAGE.md has this section, and the translation neither translates it nor says "not translated"');
  t.match(stdout, 'OTHER.ja.md: its source GONE.md does not exist');
  t.match(stdout, 'NONE.ja.md: names no source section');
  t.match(stdout, /LATE\.ja\.md:3: section "One": not stamped yet/);
  t.match(stdout, /LATE\.ja\.md:\d+: section "Four": PAGE\.md has no section "Four" any more/);
  t.throws(() => stamp(join(root, 'LATE.ja.md'), ['Five']), /no stamp for "Five"/);
  t.same(stamp(join(root, 'LATE.ja.md')), ['(intro)', 'One', 'Three'], 'stamp without a section: every translated one');
  const after = await check(root);
  t.notMatch(after.stdout, 'LATE.ja.md:3', 'stamped');
  t.match(after.stdout, 'section "Four"', 'a section left out that the source no longer has still fails');
});
