// The build cache's key: the submission's files (a byte, a path, a link's target, the executable
// bit) and the build's conditions change it; times and a copy's own folder do not.
import { chmodSync, cpSync, mkdirSync, renameSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type BuildConditions, buildKey, contentHash } from '../../../../harness/grade/build/build-key.js';

const CONDITIONS: BuildConditions = { command: 'make', lab: 'ledger', sealed: true, network: false, path: '/usr/local/bin:/usr/bin:/bin', env: {} };

/** A submission: a file, one in a folder, a link. */
function submission(t: Test): string {
  const dir = t.testdir({ sub: { 'main.c': 'int main(void) { return 0; }\n', src: { 'lib.c': 'int f;\n' } } });
  symlinkSync('src/lib.c', join(dir, 'sub', 'link'));
  return join(dir, 'sub');
}

t.test('the content hash changes with a byte, a path, a link target and the executable bit', async (t) => {
  const dir = submission(t);
  const first = contentHash(dir);
  t.match(first, /^sha256:[0-9a-f]{64}$/);
  t.equal(contentHash(dir), first, 'the same tree, the same hash');

  writeFileSync(join(dir, 'main.c'), 'int main(void) { return 1; }\n');
  const byte = contentHash(dir);
  t.not(byte, first, 'one byte');
  writeFileSync(join(dir, 'main.c'), 'int main(void) { return 0; }\n');
  t.equal(contentHash(dir), first, 'the byte back: the hash back');

  renameSync(join(dir, 'src', 'lib.c'), join(dir, 'src', 'lib2.c'));
  t.not(contentHash(dir), first, 'a path');
  renameSync(join(dir, 'src', 'lib2.c'), join(dir, 'src', 'lib.c'));

  unlinkSync(join(dir, 'link'));
  symlinkSync('main.c', join(dir, 'link'));
  t.not(contentHash(dir), first, "a link's target");
  unlinkSync(join(dir, 'link'));
  symlinkSync('src/lib.c', join(dir, 'link'));

  chmodSync(join(dir, 'main.c'), 0o755);
  t.not(contentHash(dir), first, 'the executable bit');
  chmodSync(join(dir, 'main.c'), 0o644);
  t.equal(contentHash(dir), first, 'all undone: the first hash');
});

t.test('times, read bits and where the copy is do not change it', async (t) => {
  const dir = submission(t);
  const first = buildKey(dir, CONDITIONS);
  utimesSync(join(dir, 'main.c'), new Date(2001, 1, 1), new Date(2001, 1, 1));
  utimesSync(join(dir, 'src'), new Date(2002, 1, 1), new Date(2002, 1, 1));
  chmodSync(join(dir, 'src', 'lib.c'), 0o600);
  t.equal(buildKey(dir, CONDITIONS), first, 'mtime and read bits');
  const elsewhere = join(t.testdirName, 'elsewhere');
  cpSync(dir, elsewhere, { recursive: true, verbatimSymlinks: true });
  t.equal(buildKey(elsewhere, CONDITIONS), first, 'a copy in another folder');
});

t.test('the build conditions change it', async (t) => {
  const dir = submission(t);
  const first = buildKey(dir, CONDITIONS);
  const tools = join(t.testdirName, 'tools');
  mkdirSync(tools);
  writeFileSync(join(tools, 'make'), '#!/bin/sh\necho make\n', { mode: 0o755 });
  const changed: [string, Partial<BuildConditions>][] = [
    ['the command', { command: 'make -j2' }],
    ['the lab', { lab: 'feed' }],
    ['sealing', { sealed: false }],
    ['the network', { network: true }],
    ['a package cache staff named', { env: { CHAOSLAB_NPM_CACHE: '/srv/npm' } }],
    ['the program found in PATH', { path: tools }],
  ];
  for (const [what, change] of changed) t.not(buildKey(dir, { ...CONDITIONS, ...change }), first, what);
  const own = buildKey(dir, { ...CONDITIONS, path: tools });
  writeFileSync(join(tools, 'make'), '#!/bin/sh\necho make 4.4\n');
  t.not(buildKey(dir, { ...CONDITIONS, path: tools }), own, 'the program upgraded (another file)');
});

t.test("the submission's own build script is in its content, not its path", async (t) => {
  const dir = submission(t);
  writeFileSync(join(dir, 'build.sh'), 'echo built\n', { mode: 0o755 });
  const script = { ...CONDITIONS, command: './build.sh' };
  const first = buildKey(dir, script);
  const elsewhere = join(t.testdirName, 'elsewhere');
  cpSync(dir, elsewhere, { recursive: true, verbatimSymlinks: true });
  t.equal(buildKey(elsewhere, script), first);
  writeFileSync(join(dir, 'build.sh'), 'echo built again\n');
  t.not(buildKey(dir, script), first);
});
