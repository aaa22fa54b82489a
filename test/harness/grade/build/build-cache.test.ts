// The build cache: a built tree kept under its key and found again whole; an entry that is not
// whole (a store killed mid-way, a folder without its entry.json, another key's) is never used,
// and a dead grader's partial entry is swept; a tree that names its own folder is not kept.
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { openBuildCache } from '../../../../harness/grade/build/build-cache.js';

const KEY = `sha256:${'ab'.repeat(32)}`;
const OTHER = `sha256:${'cd'.repeat(32)}`;

/** A built tree: a program, a folder, a link. */
function built(t: Test): { dir: string; cache: string } {
  const dir = t.testdir({ built: { 'consumer.sh': 'echo run\n', out: { 'lib.o': 'object\n' } }, cache: {} });
  symlinkSync('out/lib.o', join(dir, 'built', 'lib'));
  return { dir: join(dir, 'built'), cache: join(dir, 'cache') };
}

t.test('kept, then found whole: files, modes, links; the folder is the grader’s alone', async (t) => {
  const { dir, cache } = built(t);
  chmodSync(join(dir, 'consumer.sh'), 0o755);
  const store = openBuildCache(cache);
  t.equal(store.lookup(KEY), undefined, 'nothing yet');
  t.equal(store.store(KEY, dir, { log: 'compiled\n', buildMs: 1234 }), undefined, 'kept');
  const hit = openBuildCache(cache).lookup(KEY);
  t.match(hit, { key: KEY, log: 'compiled\n', buildMs: 1234 });
  t.equal(readFileSync(join(hit!.tree, 'out', 'lib.o'), 'utf8'), 'object\n');
  t.equal(statSync(join(hit!.tree, 'consumer.sh')).mode & 0o777, 0o755, 'modes kept');
  t.equal(readlinkSync(join(hit!.tree, 'lib')), 'out/lib.o', 'a link kept as a link');
  t.equal(statSync(cache).mode & 0o777, 0o700, 'the cache is closed to others');
  t.equal(openBuildCache(cache).lookup(OTHER), undefined, 'another key: nothing');
  t.equal(store.store(KEY, dir, { log: 'again\n', buildMs: 1 }), undefined, 'a second store of the same key');
  t.equal(store.lookup(KEY)?.log, 'compiled\n', 'the first entry stands');
});

t.test('an entry that is not whole is never used', async (t) => {
  const { dir, cache } = built(t);
  const store = openBuildCache(cache);
  store.store(KEY, dir, { log: '', buildMs: 1 });
  const hex = KEY.slice('sha256:'.length);
  // A store killed before its rename leaves only a partial folder, whatever it holds.
  const partial = join(cache, `.partial-999999999-1-0123abcd`);
  mkdirSync(partial);
  mkdirSync(join(partial, 'tree'));
  writeFileSync(join(partial, 'entry.json'), JSON.stringify({ format: 1, key: OTHER, buildMs: 1 }));
  writeFileSync(join(partial, 'build.log'), '');
  t.equal(store.lookup(OTHER), undefined, 'a partial entry is not looked up');
  // An entry folder without its entry.json (written last), or with another key's.
  mkdirSync(join(cache, OTHER.slice('sha256:'.length), 'tree'), { recursive: true });
  t.equal(store.lookup(OTHER), undefined, 'no entry.json: not used');
  writeFileSync(join(cache, hex, 'entry.json'), JSON.stringify({ format: 1, key: OTHER, buildMs: 1 }));
  t.equal(store.lookup(KEY), undefined, "another key's entry.json: not used");
  t.equal(store.store(KEY, dir, { log: 'rebuilt\n', buildMs: 2 }), undefined, 'a broken entry is replaced');
  t.equal(store.lookup(KEY)?.log, 'rebuilt\n');
  // The next grading sweeps partial entries of dead graders, and keeps a live one's.
  const live = join(cache, `.partial-${process.pid}-${readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]}-0123abcd`);
  mkdirSync(live);
  openBuildCache(cache);
  t.notOk(existsSync(partial), "a dead grader's partial entry is swept");
  t.ok(existsSync(live), "a live grader's is left");
  t.same(
    readdirSync(cache)
      .filter((n) => !n.startsWith('.'))
      .sort(),
    [hex, OTHER.slice('sha256:'.length)].sort(),
  );
});

t.test('a store killed mid-way leaves no entry', async (t) => {
  const { dir, cache } = built(t);
  // Big enough that the copy takes a while: the child is killed once a partial entry is there.
  writeFileSync(join(dir, 'big'), Buffer.alloc(32 * 1024 * 1024, 1));
  const child = `
    import { openBuildCache } from ${JSON.stringify(new URL('../../../../harness/grade/build/build-cache.ts', import.meta.url).href)};
    const cache = openBuildCache(process.argv[1]);
    for (let i = 0; i < 1000; i++) cache.store('sha256:' + i.toString(16).padStart(64, '0'), process.argv[2], { log: '', buildMs: 1 });`;
  const storing = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', child, cache, dir], { stdio: 'ignore' });
  const exited = new Promise((resolve) => storing.on('exit', resolve));
  const partials = () => readdirSync(cache).filter((n) => n.startsWith('.partial-'));
  while (partials().length === 0 && storing.exitCode === null) await new Promise((r) => setTimeout(r, 5));
  storing.kill('SIGKILL');
  t.equal(await exited, null, 'killed while storing');
  const store = openBuildCache(cache);
  for (const hex of readdirSync(cache).filter((n) => !n.startsWith('.'))) {
    const hit = store.lookup(`sha256:${hex}`);
    t.ok(hit, `${hex}: an entry in place is whole`);
    t.equal(lstatSync(join(hit!.tree, 'big')).size, 32 * 1024 * 1024, `${hex}: its big file whole`);
  }
  t.same(partials(), [], "the killed store's partial entry is swept by the next opening");
});

t.test('not kept: a tree that names its own folder, a FIFO; a cache folder of another owner is refused', async (t) => {
  const { dir, cache } = built(t);
  const store = openBuildCache(cache);
  writeFileSync(join(dir, 'out', 'Makefile'), `# generated\nsrcdir = ${dir}/src\n`);
  t.match(store.store(KEY, dir, { log: '', buildMs: 1 }), /the built copy names its own folder \(in out\/Makefile\)/);
  t.equal(store.lookup(KEY), undefined);
  writeFileSync(join(dir, 'out', 'Makefile'), 'srcdir = src\n');
  symlinkSync(join(dir, 'out'), join(dir, 'absolute'));
  t.match(store.store(KEY, dir, { log: '', buildMs: 1 }), /names its own folder \(in absolute\)/, 'a link to its own folder');
  execFileSync('rm', [join(dir, 'absolute')]);
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  t.match(store.store(KEY, dir, { log: '', buildMs: 1 }), /could not be stored: pipe: is not a file, folder or link/);
  t.same(
    readdirSync(cache).filter((n) => n.startsWith('.partial-')),
    [],
    'nothing left of the attempts',
  );
  if (process.geteuid?.() === 0) {
    const theirs = join(t.testdirName, 'theirs');
    mkdirSync(theirs);
    chownSync(theirs, 12345, 12345);
    t.throws(() => openBuildCache(theirs), /the build cache .*theirs: belongs to uid 12345, not to the grader \(uid 0\)/);
  }
});
