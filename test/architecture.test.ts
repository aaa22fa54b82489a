// The tree's rules (docs/ARCHITECTURE.md): the import graph check of `make lint` really fails on
// a circle and on an import up a layer, its allow-list stays short, a lab's folders stay small,
// and test/ mirrors the source tree. Whether the real tree passes that check is `make lint`'s
// to say (and `make test` runs it first), not a second run here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import t, { type Test } from 'tap';
import { toolEnv } from './helpers/tool-env.js';

const ROOT = join(import.meta.dirname, '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const { LAYERS, UPWARD } = createRequire(import.meta.url)(CONFIG).layers as {
  LAYERS: { name: string; path: string }[];
  UPWARD: { from: string; to: string; why: string }[];
};

/** The violations dependency-cruiser finds in `files` (path → source), laid out as a tree of our folders. */
function violationsIn(t: Test, files: Record<string, string>): string[] {
  const dir = t.testdir({ 'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }) });
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), source);
  }
  const out = spawnSync(DEPCRUISE, ['--config', CONFIG, 'harness', '--output-type', 'json'], { cwd: dir, encoding: 'utf8', env: toolEnv() });
  const report = JSON.parse(out.stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
  return report.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}

t.test('the import graph check fails on a circle and on an import up a layer, and passes a clean tree', async (t) => {
  t.same(
    violationsIn(t, {
      'harness/record/journal.ts': "import { runner } from '../run/runner.js';\nexport const journal = runner;\n",
      'harness/run/runner.ts': 'export const runner = 1;\n',
      'harness/text/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'harness/text/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    }).sort(),
    ['layer: record imports no layer above it: harness/record/journal.ts -> harness/run/runner.ts', 'no-circular: harness/text/a.ts -> harness/text/b.ts'],
  );
  t.same(
    violationsIn(t, {
      'harness/run/runner.ts': "import { journal } from '../record/journal.js';\nexport const runner = journal;\n",
      'harness/record/journal.ts': 'export const journal = 1;\n',
    }),
    [],
    'an import down a layer is fine',
  );
});

t.test('every harness folder is in a layer, and at most 2 imports may run up, each with a reason', async (t) => {
  const folders = readdirSync(join(ROOT, 'harness')).map((name) => `harness/${name}${statSync(join(ROOT, 'harness', name)).isDirectory() ? '/' : ''}`);
  const unplaced = folders.filter((f) => !LAYERS.some((layer) => new RegExp(layer.path).test(f.endsWith('/') ? `${f}x.ts` : f)));
  t.same(unplaced, [], 'a new folder needs its place in .dependency-cruiser.cjs LAYERS');
  t.ok(UPWARD.length <= 2, `${UPWARD.length} upward imports allowed`);
  for (const u of UPWARD) t.ok(u.why && u.why.length > 20, `${u.from} -> ${u.to} says why`);
});

/** Every folder under `dir` with how many entries it holds. */
const folderSizes = (dir: string): [string, number][] =>
  readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? folderSizes(path) : [];
    })
    .concat([[relative(ROOT, dir), readdirSync(dir).length]]);

t.test('no folder of a lab holds more than 12 files', async (t) => {
  const big = folderSizes(join(ROOT, 'harness', 'labs')).filter(([, n]) => n > 12);
  t.same(big, []);
});

t.test('test/ mirrors the source tree: each test folder names a source folder', async (t) => {
  const tracked = execFileSync('git', ['ls-files', 'test'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  const folders = new Set(
    tracked
      .filter((f) => f.endsWith('.test.ts') && !/^test\/(e2e|fixtures|helpers)\//.test(f) && f.split('/').length > 2)
      .map((f) => f.split('/').slice(1, -1).join('/')),
  );
  t.ok(folders.size > 10, `${folders.size} test folders`);
  const orphans = [...folders].filter((f) => !statSync(join(ROOT, f), { throwIfNoEntry: false })?.isDirectory());
  t.same(orphans, [], 'a test folder whose source folder does not exist');
});
