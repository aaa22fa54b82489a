// ensureDir (harness/report/run-folder.ts): the reports folder and the parents it makes on the way,
// under the CLI's umask (077), where a sealed program's uid must pass through every one of them.
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ensureDir } from '../../../harness/report/run-folder.js';
import { PASSABLE, STAFF_UMASK } from '../../../harness/report/staff-only.js';

const modeOf = (path: string) => statSync(path).mode & 0o7777;

t.test('the parents it makes are passable (0711); the folder itself is left to its caller', async (t) => {
  const root = t.testdir();
  const before = process.umask(STAFF_UMASK);
  t.teardown(() => process.umask(before));
  const made = ensureDir(join(root, 'a', 'b', 'c'));
  t.equal(made, join(root, 'a', 'b', 'c'));
  t.equal(modeOf(join(root, 'a')), PASSABLE, 'a parent it made: 0711, not 0700 under the umask');
  t.equal(modeOf(join(root, 'a', 'b')), PASSABLE);
  t.equal(modeOf(made), 0o700, 'the folder itself: as the umask makes it (its caller makes it passable or closes it)');
});

t.test('a parent that was there is left as it was', async (t) => {
  const root = t.testdir();
  mkdirSync(join(root, 'mine'), { mode: 0o700 });
  ensureDir(join(root, 'mine', 'x'));
  t.equal(modeOf(join(root, 'mine')), 0o700, 'not opened: whoever made it chose its mode');
});

t.test('a path through a file fails at once, naming the component', async (t) => {
  const root = t.testdir();
  writeFileSync(join(root, 'file'), '');
  t.throws(() => ensureDir(join(root, 'file', 'x')), /cannot create the reports folder .*file\/x: .*file\/x: ENOTDIR/);
});
